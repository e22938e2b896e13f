"""The default Postgres backend: a private server from the ``pgserver`` wheel, one per cluster.

Owns starting that server (data directory ``<workdir>/aj_<run id>_pg_<n>``, or the same name in
a RAM-backed folder, see ``IN_MEMORY_ENV``; a Unix socket only; settings tuned for throwaway
data), stopping it and deleting its data. pgserver's cluster trusts every local connection; this
one does not: every role, the superuser included, must give its password (``scram-sha-256``), and
the superuser's is generated per cluster and kept in this process, so a process that reaches the
socket (a verifier, a seed's helper) cannot log in as the superuser or as any role whose password
it was not given. Leftovers of killed runs are removed by
``sandboxes.postgres.leftovers.collect_embedded_leftovers``.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import os
import secrets
import shutil
import threading
import warnings
from pathlib import Path
from typing import Any, ClassVar

from sandboxes.base import SandboxError
from sandboxes.postgres import admin
from sandboxes.postgres.sandbox import PostgresCluster, PostgresConnectionInfo
from sandboxes.runs import SHARED_MEMORY, current_run, scratch_roots, untrusted_because, workdir
from settings import get_settings, variable_name

DATA_DIRECTORY_TAG = "pg"
"""Data directories are named ``aj_<run id>_pg_<n>`` inside the work directory."""

SUPERUSER = "postgres"
"""The superuser pgserver's initdb makes."""

THROWAWAY_SETTINGS: dict[str, str] = {
    "fsync": "off",
    "full_page_writes": "off",
    "synchronous_commit": "off",
}
"""Durability settings turned off: the data dies with the run, so crash safety buys nothing.
(Measured on a 25 MB database: within noise for clones, where file creation dominates.)"""


IN_MEMORY_ENV = variable_name("pg_in_memory")
"""Where embedded data directories live. Unset (the default): in ``/dev/shm`` (RAM) when it is
writable, else on disk; ``1``: RAM, or fail; ``0``: disk. Sandboxes are throwaway, and database
clones in RAM are several times faster where creating files on disk is slow (measured on this
machine: ~380 ms per 36 MB clone on ext4, ~50 ms in RAM), at the cost of memory."""


def memory_parent() -> Path:
    """The RAM-backed folder for data directories, shared by every run on the machine: runs
    are told apart by the run ids in the directory names (see ``sandboxes.runs``)."""
    return SHARED_MEMORY / "agentjudge"


def data_parents() -> list[Path]:
    """Every folder an embedded data directory may live in: each scratch space runs have used
    (``scratch_roots``, whatever this process's ``TMPDIR`` or work directory) and RAM."""
    return list(dict.fromkeys([*scratch_roots(), memory_parent()]))


def wheel_binaries() -> Path | None:
    """The ``bin`` folder of the Postgres build inside the pgserver wheel, if it is installed."""
    spec = importlib.util.find_spec("pgserver")
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / "pginstall" / "bin"
        if candidate.is_dir():
            return candidate
    return None


def _import_pgserver() -> Any:
    # pgserver computes a runtime directory at import time and warns when XDG_RUNTIME_DIR is
    # unset (always the case in containers); the fallback it picks is fine.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver
    return pgserver


HBA_CONFIGURATION = """\
# agentjudge: every role gives its password, the superuser included (no trust, no peer).
local all all scram-sha-256
"""
"""The embedded cluster's ``pg_hba.conf``: it listens on its Unix socket only."""


def _start_configured(
    pgserver: Any, path: Path, settings: dict[str, str], superuser_password: str
) -> Any:
    """Start a server with ``settings`` written to its configuration, whose every role needs its
    password (the superuser's: ``superuser_password``).

    Always included: dynamic shared memory in the data directory. By default Postgres keeps it in
    ``/dev/shm/PostgreSQL.*``, which a ``kill -9`` leaks; as mmap'd files under ``pg_dynshmem``
    it goes with the directory. That setting only takes effect at start, so the first start
    (which pgserver makes with trust authentication) writes every setting, the superuser's
    password and ``pg_hba.conf``, and a second start (about 0.3 s) applies them all.
    """
    wanted = {
        "dynamic_shared_memory_type": "mmap",
        "password_encryption": "scram-sha-256",
        **settings,
    }
    first = pgserver.get_server(path, cleanup_mode="stop")
    first.psql(
        "".join(
            f"ALTER SYSTEM SET {name} = {admin.quote_literal(value)};\n"
            for name, value in wanted.items()
        )
        + f"ALTER ROLE {SUPERUSER}"
        f" PASSWORD {admin.quote_literal(admin.scram_secret(superuser_password))};\n"
    )
    first.cleanup()
    # Rewritten in place: the file keeps the owner and mode initdb gave it.
    (path / "pg_hba.conf").write_text(HBA_CONFIGURATION)
    atexit.unregister(first._cleanup)  # stopped already; its exit hook must not run again
    return pgserver.get_server(path, cleanup_mode="delete")


class EmbeddedPostgresCluster(PostgresCluster):
    """A Postgres 16 server run from the pgserver wheel, reachable only through a Unix socket."""

    backend: ClassVar[str] = "embedded"

    def __init__(self, *, tuned: bool = True, in_memory: bool | None = None) -> None:
        """``tuned`` turns off fsync and friends (see ``THROWAWAY_SETTINGS``); ``in_memory`` puts
        the data in ``/dev/shm`` (default: the ``AGENTJUDGE_PG_IN_MEMORY`` variable)."""
        self.tuned = tuned
        if in_memory is None:
            in_memory = get_settings().pg_in_memory
        if in_memory is None:
            in_memory = SHARED_MEMORY.is_dir() and os.access(SHARED_MEMORY, os.W_OK)
        self.in_memory = in_memory
        self.data_directory: Path | None = None
        """The server's data directory, set by ``start``."""
        self._server: Any = None
        self._admin: PostgresConnectionInfo | None = None
        self._lock = threading.Lock()

    @property
    def admin(self) -> PostgresConnectionInfo:
        """The ``postgres`` superuser on the maintenance database, with its generated password."""
        if self._admin is None:
            raise SandboxError("the embedded Postgres server is not started")
        return self._admin

    @property
    def pid(self) -> int | None:
        """The postmaster's process id while the server runs."""
        return None if self._server is None else int(self._server.get_pid())

    async def start(self) -> None:
        """Start the server (about a second: initdb, then pg_ctl start). Idempotent."""
        await asyncio.to_thread(self._start_blocking)

    def _start_blocking(self) -> None:
        with self._lock:
            if self._server is not None:
                return
            pgserver = _import_pgserver()
            parent = workdir()
            if self.in_memory:
                if not SHARED_MEMORY.is_dir():
                    raise SandboxError(f"{IN_MEMORY_ENV}: {SHARED_MEMORY} does not exist")
                parent = memory_parent()
                parent.mkdir(mode=0o755, exist_ok=True)
                problem = untrusted_because(parent)
                if problem is not None:
                    raise SandboxError(f"{parent}: {problem}; remove it (it is not this user's)")
            path = parent / current_run().new_name(DATA_DIRECTORY_TAG)
            password = secrets.token_hex(16)
            try:
                server = _start_configured(
                    pgserver, path, THROWAWAY_SETTINGS if self.tuned else {}, password
                )
            except Exception as error:
                shutil.rmtree(path, ignore_errors=True)
                raise SandboxError(f"embedded Postgres did not start in {path}: {error}") from error
            info = server.get_postmaster_info()
            self._server = server
            self.data_directory = path
            self._admin = PostgresConnectionInfo(
                host=str(info.socket_dir),
                port=int(info.port or 5432),
                user=SUPERUSER,
                password=password,
                database="postgres",
            )

    async def stop(self) -> None:
        """Stop the server and delete its data directory. Idempotent."""
        await asyncio.to_thread(self._stop_blocking)

    def _stop_blocking(self) -> None:
        with self._lock:
            server, path = self._server, self.data_directory
            if server is None or path is None:
                return
            try:
                server.cleanup()
            finally:
                # The folder above stays, even when empty: it is shared by every run on the
                # machine (the default scratch space too), and another run may be between
                # making it and making its own data directory in it.
                shutil.rmtree(path, ignore_errors=True)
                self._server = None
                self._admin = None
                self.data_directory = None
