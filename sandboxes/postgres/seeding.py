"""Building a task's template database from its seed, once per provider.

Owns which template a task's sandboxes are copied from (its seed's, or the provider's *base*
for an empty state), running a seed, and the cache of the templates built and of the seeds that
failed, keyed by task and seed digest: a seed that failed or timed out fails every later sandbox
of its task at once, with the same message.

The base is ``template0`` as a superuser sees it: a copy in which ``pg_toast`` is visible to
every role (``USAGE``; reading a toast table still needs its privileges), so that schema listings
made by the runtime's roles show what a recording made as a superuser shows. Every template is a
copy of it. A non-superuser administrator cannot grant that, and copies ``template0`` itself.

A seed is SQL only. It is read with psql's lexical rules (``sandboxes.postgres.seed_script``),
which refuse psql meta-commands, and its statements are sent one by one, as ``psql -f`` would
send them, on one session of the template's *seed role* (``sandboxes.postgres.roles``): no
superuser, CREATEDB, REPLICATION or BYPASSRLS, connecting only to its template (which it owns
while the seed runs). So ``COPY ... PROGRAM``, ``ALTER SYSTEM``, ``pg_read_file``, altering
other roles and dropping other databases fail, each with an error naming the seed and the line.
The session is the seed's own: what it sets (``SET``, ``set_config``) ends with it, and the
seed role logs in no more once its template is sealed. Making, sealing and dropping databases is
the provider's.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import asyncpg

from dataset.assets import state_file
from dataset.models import EmptyState, SqlSeedState, Task
from sandboxes.base import SandboxError
from sandboxes.postgres import admin
from sandboxes.postgres.preparation import (
    archive_to_sql,
    explain_collation_error,
    is_archive,
    run_preparation,
)
from sandboxes.postgres.roles import explain_role_error
from sandboxes.postgres.sandbox import PostgresConnectionInfo
from sandboxes.postgres.seed_script import SeedStatement, read_seed
from sandboxes.runs import current_run

if TYPE_CHECKING:
    from sandboxes.postgres.provider import ClusterPostgresProvider

DEFAULT_SEED_TIMEOUT = 600.0
"""Seconds one seed may run, unless the provider is given another limit."""

FREE_DATABASE = "template0"
"""The empty database everything starts from, which nobody can connect to or modify."""

_COPY_LINE = re.compile(r"\bline (\d+)")


class TaskTemplates:
    """The template database of each task's seed, built on first use and kept until closed."""

    def __init__(self, provider: ClusterPostgresProvider) -> None:
        self._provider = provider
        self._built: dict[tuple[str, str], str] = {}
        self._failed: dict[tuple[str, str], str] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._databases: set[str] = set()
        self._bases: dict[str | None, str] = {}
        self._base_lock = asyncio.Lock()

    async def base(self, collation: str | None = None) -> str:
        """The provider's base template under ``collation`` (None: the server's default; see the
        module's docstring), made on first use."""
        async with self._base_lock:
            if collation in self._bases:
                return self._bases[collation]
            provider = self._provider
            async with provider.admin_pool.connection():
                superuser = provider.admin_pool.superuser  # known once connected
            if not superuser and collation is None:
                self._bases[None] = FREE_DATABASE
                return FREE_DATABASE
            name = current_run().new_name("base")
            self._databases.add(name)
            try:
                with admin.as_sandbox_error("cannot make the base template"):
                    await self._create_base(name, collation, superuser)
            except BaseException:
                await provider.drop_database(name)
                self._databases.discard(name)
                raise
            self._bases[collation] = name
            return name

    async def _create_base(self, name: str, collation: str | None, superuser: bool) -> None:
        provider = self._provider
        if collation is None:
            await provider.create_database(name, FREE_DATABASE)
        else:
            try:
                await provider.create_database(name, FREE_DATABASE, collation=collation)
            except asyncpg.PostgresError as error:
                message = " ".join(str(error).split())
                raise SandboxError(explain_collation_error(collation, message)) from error
        if superuser:
            conn = await admin.connect(provider.cluster.admin.with_database(name))
            try:
                await conn.execute("GRANT USAGE ON SCHEMA pg_toast TO PUBLIC")
            finally:
                await conn.close(timeout=admin.CLOSE_TIMEOUT)
        await provider.seal(name)

    async def for_task(self, task: Task, task_dir: Path) -> str:
        """The template holding the task's initial state: its seed and preparation under its
        collation (``sql_seed``), or nothing (``empty``)."""
        state = task.initial_state
        if isinstance(state, EmptyState):
            return await self.base()
        if not isinstance(state, SqlSeedState):
            raise SandboxError(
                f"task {task.id}: a postgres sandbox cannot start from a {state.kind} state"
            )
        try:
            inputs = await asyncio.to_thread(_StateFiles.read, state, task_dir)
        except OSError as error:
            seed = state_file(task_dir, state.path) if state.path is not None else None
            which = "seed" if error.filename == str(seed) else "preparation"
            raise SandboxError(
                f"task {task.id}: cannot read {which} {error.filename}: {error.strerror}"
            ) from error
        key = (task.id, inputs.digest)
        async with self._locks.setdefault(key, asyncio.Lock()):
            if key in self._failed:
                raise SandboxError(self._failed[key])
            if key not in self._built:
                try:
                    self._built[key] = await self._build(inputs)
                except SandboxError as error:
                    # Every trajectory of the task would fail the same way: say it once.
                    self._failed[key] = f"task {task.id}: {error}"
                    raise SandboxError(self._failed[key]) from error
            return self._built[key]

    async def _build(self, inputs: _StateFiles) -> str:
        provider = self._provider
        timeout = provider.seed_timeout
        statements: list[SeedStatement] = []
        if inputs.seed is not None:
            script = inputs.script
            if is_archive(script):
                script = await archive_to_sql(inputs.seed, timeout=timeout)
            statements = await asyncio.to_thread(read_seed, script, inputs.seed)
        what = inputs.seed or inputs.preparation or f"collation {inputs.collation}"
        name = current_run().new_name("tpl")
        self._databases.add(name)
        try:
            base = await self.base(inputs.collation)
            with admin.as_sandbox_error(f"cannot prepare the template for {what}"):
                async with provider.admin_pool.held():
                    seed = await provider.roles.new_seed_role(name)
                    # The seed role owns the template while the seed runs (and its public schema).
                    await provider.create_database(name, base, owner=seed.user)
            if inputs.seed is not None:
                await run_seed(
                    seed, inputs.seed, statements, timeout=timeout, version=provider.version
                )
            if inputs.preparation is not None:
                await run_preparation(seed, inputs.preparation, inputs.task_dir, timeout=timeout)
            with admin.as_sandbox_error(f"cannot seal the template of {what}"):
                await provider.seal(name)
                await provider.roles.retire(seed.user)
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
        self._failed.clear()
        self._bases.clear()
        return problems


@dataclass(frozen=True)
class _StateFiles:
    """The files and settings one template is built from, the seed read once."""

    seed: Path | None
    script: bytes
    """The seed's bytes (empty without a seed)."""
    preparation: Path | None
    task_dir: Path
    collation: str | None
    digest: str
    """What tells two templates of one task apart: the files' bytes and the collation."""

    @classmethod
    def read(cls, state: SqlSeedState, task_dir: Path) -> _StateFiles:
        """Read the state's seed and preparation (``OSError`` names a file that cannot be)."""
        seed = state_file(task_dir, state.path) if state.path is not None else None
        preparation = task_dir / state.preparation if state.preparation is not None else None
        script = seed.read_bytes() if seed is not None else b""
        digest = hashlib.sha256(script + b"\0")
        digest.update((preparation.read_bytes() if preparation is not None else b"") + b"\0")
        digest.update((state.collation or "").encode())
        return cls(seed, script, preparation, task_dir, state.collation, digest.hexdigest())


def _failure(
    path: Path, statement: SeedStatement, error: asyncpg.PostgresError, version: int
) -> str:
    """The message of a statement's failure: seed file, line, server message and detail."""
    line = statement.line
    position = getattr(error, "position", None)
    if position:
        line += statement.sql[: int(position) - 1].count("\n")
    # The server's message, its detail and hint included, on one line.
    message = explain_role_error(" ".join(str(error).split()), version)
    context = getattr(error, "context", None) or ""
    found = _COPY_LINE.search(context) if statement.copy_data is not None else None
    if found:  # a bad row of COPY data: the line of the file it is on
        line += statement.sql.count("\n") + int(found.group(1))
    return f"seed {path} failed at line {line}: {message}"


async def _copy_in(conn: asyncpg.Connection, statement: SeedStatement) -> None:
    """Run a ``COPY ... FROM stdin`` with its data, as psql sends it."""
    # asyncpg's public copy helpers build their own COPY statement; this sends the seed's.
    copy_in: Any = getattr(conn, "_copy_in", None)
    if copy_in is None:
        raise SandboxError("this asyncpg version cannot send COPY data (no Connection._copy_in)")
    # A memoryview: asyncpg would take bytes for a file name.
    await copy_in(statement.sql, memoryview(statement.copy_data or b""), None)


async def run_seed(
    database: PostgresConnectionInfo,
    path: Path,
    statements: list[SeedStatement],
    *,
    timeout: float,
    version: int = 0,
) -> None:
    """Run the ``statements`` of the seed at ``path`` one by one on one session of
    ``database``'s role, within ``timeout`` seconds in all; ``version`` is the server's
    (``server_version_num``), for clearer errors."""
    where = f"{database.user}@{database.host}:{database.port}/{database.database}"
    with admin.as_sandbox_error(f"seed {path}: cannot connect as {where}"):
        conn = await asyncpg.connect(
            **admin.connect_arguments(database),
            server_settings={
                "application_name": admin.APPLICATION_NAME,
                "client_min_messages": "warning",
            },
        )
    current: SeedStatement | None = None
    try:
        async with asyncio.timeout(timeout):
            for current in statements:
                if current.copy_data is None:
                    await conn.execute(current.sql)
                else:
                    await _copy_in(conn, current)
        await conn.close(timeout=admin.CLOSE_TIMEOUT)
    except TimeoutError:
        at = f" (at the statement of line {current.line})" if current is not None else ""
        raise SandboxError(f"seed {path} did not finish within {timeout:g} s{at}") from None
    except asyncpg.PostgresError as error:
        assert current is not None
        raise SandboxError(_failure(path, current, error, version)) from error
    except (asyncpg.InterfaceError, OSError) as error:
        raise SandboxError(f"seed {path}: connection lost: {error}") from error
    finally:
        if not conn.is_closed():
            # Ends the session at once: a statement still running is cut by the template's drop.
            conn.terminate()
