"""Garbage collection of what killed runs left in Postgres: databases, roles, embedded servers.

Owns recognising a dead run's resources (by the ``aj_<run id>_`` name prefix or the ownership
comment, and for roles that dataset code created, by their creator: a dead run's role holds
their creator's ADMIN OPTION) and removing them: databases first, then roles (the roles created
first), and for the embedded backend the server process and its data directory. A resource whose
comment names another host is never touched: on a shared server, that host's runs may be alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import stat
import time
from pathlib import Path

import asyncpg
import psutil

from sandboxes.postgres import admin
from sandboxes.postgres.embedded import DATA_DIRECTORY_TAG, data_parents
from sandboxes.postgres.roles import created_roles
from sandboxes.postgres.sandbox import PostgresConnectionInfo
from sandboxes.runs import NAME_PREFIX, run_id_of, run_is_alive, untrusted_because

STOP_TIMEOUT = 5.0
"""Seconds a killed run's postmaster gets to exit after SIGQUIT before it is SIGKILLed."""


def _dead_run(name: str | None, comment: str | None) -> str | None:
    """The dead run that owns a resource, or None when it is alive, foreign or not the runtime's.

    ``name`` carries the run id (``aj_<id>_...``); a role an agent named carries it in the
    ``owner=<database>`` field of its comment instead.
    """
    fields = admin.parse_ownership_comment(comment) or {}
    if fields.get("host", socket.gethostname()) != socket.gethostname():
        return None
    run_id = run_id_of(name or "") or run_id_of(fields.get("owner", ""))
    if run_id is None or run_is_alive(run_id):
        return None
    return run_id


async def collect_postgres_leftovers(admin_info: PostgresConnectionInfo) -> list[str]:
    """Drop the databases and roles of dead runs on one server; a line per thing handled."""
    lines: list[str] = []
    conn = await admin.connect(admin_info)
    try:
        databases = await conn.fetch(
            "SELECT datname, shobj_description(oid, 'pg_database') AS comment FROM pg_database"
        )
        for row in databases:
            run_id = _dead_run(row["datname"], row["comment"])
            if run_id is None or row["datname"] == admin_info.database:
                continue
            try:
                await admin.drop_database(conn, row["datname"])
                lines.append(f"postgres database {row['datname']} (dead run {run_id}): dropped")
            except (asyncpg.PostgresError, OSError) as error:
                lines.append(f"postgres database {row['datname']}: not dropped: {error}")
        roles = await conn.fetch(
            "SELECT oid, rolname, shobj_description(oid, 'pg_authid') AS comment FROM pg_roles"
        )
        dead: dict[int, tuple[str, str]] = {}
        for row in roles:
            name, comment = row["rolname"], row["comment"]
            fields = admin.parse_ownership_comment(comment)
            owned = name.startswith(f"{NAME_PREFIX}_") or fields is not None
            run_id = _dead_run(name, comment) if owned else None
            if run_id is not None:
                dead[row["oid"]] = (name, run_id)
        names = {row["oid"]: row["rolname"] for row in roles}
        for run_id in sorted({run for _, run in dead.values()}):
            mine = [oid for oid, (_, run) in dead.items() if run == run_id]
            for oid in await created_roles(conn, mine):
                dead.setdefault(oid, (names.get(oid, str(oid)), run_id))
        # Newest first: what dataset code created goes before the role that created it.
        for _, (name, run_id) in sorted(dead.items(), reverse=True):
            try:
                await conn.execute(f"DROP ROLE IF EXISTS {admin.quote_ident(name)}")
                lines.append(f"postgres role {name} (dead run {run_id}): dropped")
            except asyncpg.PostgresError as error:
                lines.append(f"postgres role {name}: not dropped: {error}")
    finally:
        await conn.close()
    return lines


def _postmaster(data_directory: Path) -> psutil.Process | None:
    """The postmaster serving ``data_directory``, if one still runs."""
    try:
        pid = int((data_directory / "postmaster.pid").read_text().split("\n", 1)[0])
        process = psutil.Process(pid)
        command = " ".join(process.cmdline())
    except (OSError, ValueError, psutil.Error):
        return None
    # The pid file may be stale and the pid reused: only a postgres serving this directory counts.
    if "postgres" not in process.name() or str(data_directory.resolve()) not in command:
        return None
    return process


def _gone(process: psutil.Process, timeout: float) -> bool:
    """Wait until ``process`` has exited; a zombie nobody reaps counts as exited."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def _stop_postmaster(process: psutil.Process) -> None:
    try:
        children = process.children(recursive=True)
        process.send_signal(signal.SIGQUIT)  # immediate shutdown: the data is thrown away
    except psutil.NoSuchProcess:
        return
    if not _gone(process, STOP_TIMEOUT):
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
        _gone(process, STOP_TIMEOUT)
    for child in children:
        if not _gone(child, 1.0):
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()


def _collect_embedded_blocking() -> list[str]:
    lines: list[str] = []
    found = [
        path
        for parent in data_parents()
        for path in (
            sorted(parent.glob(f"{NAME_PREFIX}_*_{DATA_DIRECTORY_TAG}_*"))
            if parent.is_dir() and untrusted_because(parent) is None  # not another user's
            else []
        )
    ]
    for path in found:
        run_id = run_id_of(path.name)
        # lstat: a link named like a data directory may lead to a server that is not ours.
        if not stat.S_ISDIR(path.lstat().st_mode) or run_id is None or run_is_alive(run_id):
            continue
        process = _postmaster(path)
        if process is not None:
            _stop_postmaster(process)
            lines.append(f"embedded postgres {path} (dead run {run_id}): stopped pid {process.pid}")
        shutil.rmtree(path, ignore_errors=True)
        if path.exists():
            lines.append(f"embedded postgres {path}: not removed")
        else:
            lines.append(f"embedded postgres {path} (dead run {run_id}): removed")
    # The RAM folder stays, even when empty: another run may be starting a server in it.
    return lines


async def collect_embedded_leftovers() -> list[str]:
    """Stop the embedded servers of dead runs and delete their data; a line per thing handled."""
    if os.name != "posix":
        return []
    return await asyncio.to_thread(_collect_embedded_blocking)
