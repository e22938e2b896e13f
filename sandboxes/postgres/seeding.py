"""Building a task's template database from its seed, once per provider.

Owns which template a task's sandboxes are copied from (its seed's, or ``template0`` for an
empty state), running a seed (with psql, faithful to ``psql -f``, or with asyncpg), and the
cache of the templates built, keyed by task and seed digest. The roles a seed creates belong to
its template. Making, sealing and dropping databases is the provider's.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import asyncpg

from dataset.models import EmptyState, SqlSeedState, Task
from sandboxes.base import SandboxError
from sandboxes.postgres import admin
from sandboxes.postgres.embedded import wheel_binaries
from sandboxes.postgres.sandbox import PostgresConnectionInfo

if TYPE_CHECKING:
    from sandboxes.postgres.provider import ClusterPostgresProvider

SeedRunner = Literal["auto", "psql", "asyncpg"]
"""How seeds run: ``psql`` (faithful to ``psql -f``: COPY FROM stdin, meta-commands),
``asyncpg`` (the whole script as one simple query), or ``auto`` (psql when one is found)."""

FREE_DATABASE = "template0"
"""Empty sandboxes are copies of ``template0``, which nobody can connect to or modify."""

_RESTRICT_LINE = re.compile(rb"(?m)^\\(?:un)?restrict\s+\S+[ \t]*\r?$")


def find_psql() -> Path | None:
    """The psql of the pgserver wheel, else the first one on ``PATH``."""
    binaries = wheel_binaries()
    if binaries is not None and (binaries / "psql").is_file():
        return binaries / "psql"
    found = shutil.which("psql")
    return Path(found) if found else None


class TaskTemplates:
    """The template database of each task's seed, built on first use and kept until closed."""

    def __init__(self, provider: ClusterPostgresProvider) -> None:
        self._provider = provider
        self._built: dict[tuple[str, str], str] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._databases: set[str] = set()

    async def for_task(self, task: Task, task_dir: Path) -> str:
        """The template holding the task's seed (``sql_seed``) or nothing (``empty``)."""
        state = task.initial_state
        if isinstance(state, EmptyState):
            return FREE_DATABASE
        if not isinstance(state, SqlSeedState):
            raise SandboxError(
                f"task {task.id}: a postgres sandbox cannot start from a {state.kind} state"
            )
        path = task_dir / state.path
        try:
            script = await asyncio.to_thread(path.read_bytes)
        except OSError as error:
            raise SandboxError(f"task {task.id}: cannot read seed {path}: {error}") from error
        key = (task.id, hashlib.sha256(script).hexdigest())
        async with self._locks.setdefault(key, asyncio.Lock()):
            if key not in self._built:
                self._built[key] = await self._build(path, script)
            return self._built[key]

    async def _build(self, path: Path, script: bytes) -> str:
        provider = self._provider
        name = await provider.create_database(FREE_DATABASE, "tpl")
        self._databases.add(name)
        try:
            # Seeds may create roles (pg_dumpall output): they belong to the template.
            async with provider.roles.attributed_to(name):
                await run_seed(
                    provider.cluster.admin.with_database(name),
                    path,
                    script,
                    runner=provider.seed_runner,
                    timeout=provider.seed_timeout,
                )
            await provider.seal(name)
        except BaseException:
            await provider.drop_database(name)
            self._databases.discard(name)
            raise
        return name

    async def drop_all(self) -> list[str]:
        """Drop every template built; return why some could not go."""
        problems: list[str] = []
        for template in sorted(self._databases):
            try:
                await self._provider.drop_database(template)
                self._databases.discard(template)
            except Exception as error:
                problems.append(f"template {template}: {error}")
        self._built.clear()
        return problems


async def run_seed(
    database: PostgresConnectionInfo,
    path: Path,
    script: bytes,
    *,
    runner: SeedRunner,
    timeout: float,
) -> None:
    """Run the seed ``script`` (read from ``path``) in ``database`` within ``timeout`` seconds."""
    psql = find_psql() if runner != "asyncpg" else None
    if runner == "psql" and psql is None:
        raise SandboxError("seed_runner='psql' but no psql was found")
    if psql is not None:
        await _run_seed_psql(psql, database, path, script, timeout)
    else:
        await _run_seed_asyncpg(database, path, script, timeout)


async def _run_seed_psql(
    psql: Path, info: PostgresConnectionInfo, path: Path, script: bytes, timeout: float
) -> None:
    environment = {
        **os.environ,
        "PGHOST": info.host,
        "PGPORT": str(info.port),
        "PGUSER": info.user,
        "PGDATABASE": info.database,
        "PGAPPNAME": admin.APPLICATION_NAME,
        "PGOPTIONS": "-c client_min_messages=warning",
        "PGCONNECT_TIMEOUT": str(int(admin.CONNECT_TIMEOUT)),
    }
    if info.password:
        environment["PGPASSWORD"] = info.password
    # pg_dump from 17.6 on fences dumps with \restrict, which older psql rejects; the
    # fence guards against hostile dumps, and seeds are part of the dataset.
    script = _RESTRICT_LINE.sub(b"", script)
    process = await asyncio.create_subprocess_exec(
        str(psql),
        "-X",
        "-q",
        "-v",
        "ON_ERROR_STOP=1",
        "-f",
        "-",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=environment,
    )
    try:
        _, errors = await asyncio.wait_for(process.communicate(script), timeout)
    except TimeoutError:
        raise SandboxError(f"seed {path} did not finish within {timeout:.0f} s") from None
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    if process.returncode != 0:
        message = errors.decode(errors="replace").replace("<stdin>", str(path)).strip()
        raise SandboxError(f"seed {path} failed: {message or f'psql exit {process.returncode}'}")


async def _run_seed_asyncpg(
    info: PostgresConnectionInfo, path: Path, script: bytes, timeout: float
) -> None:
    try:
        text = script.decode()
    except UnicodeDecodeError as error:
        raise SandboxError(f"seed {path} is not UTF-8: {error}") from error
    conn = await admin.connect(info)
    try:
        await asyncio.wait_for(conn.execute(text), timeout)
    except TimeoutError:
        raise SandboxError(f"seed {path} did not finish within {timeout:.0f} s") from None
    except asyncpg.PostgresError as error:
        position = getattr(error, "position", None)
        where = f" (at line {text[: int(position)].count(chr(10)) + 1})" if position else ""
        raise SandboxError(f"seed {path} failed{where}: {error}") from error
    finally:
        await conn.close(timeout=admin.CLOSE_TIMEOUT)
