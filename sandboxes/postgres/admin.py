"""Administrative SQL shared by the Postgres provider and its leftover collector.

Owns identifier and literal quoting, the SCRAM secrets of the runtime's roles, connecting from a
``PostgresConnectionInfo``, the pool of administrative connections a provider shares between its
parts (``AdminPool``), the ownership comments put on databases and roles, dropping a database
that may be a template or in use, and reporting server failures as ``SandboxError``. Knows
nothing about tasks or sandboxes.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import re
import secrets
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import asyncpg

from sandboxes.base import SandboxError
from sandboxes.postgres.sandbox import PostgresCluster, PostgresConnectionInfo
from sandboxes.sandbox_sockets import guard_of

if TYPE_CHECKING:
    from sandboxes.postgres.sandbox import PostgresConnection

T = TypeVar("T")

CONNECT_TIMEOUT = 10.0
"""Seconds to wait for a new connection before giving up."""

CLOSE_TIMEOUT = 5.0
"""Seconds a sandbox's connections get to finish before they are cut (freeze, destroy)."""

APPLICATION_NAME = "agentjudge"
"""The ``application_name`` of the runtime's own administrative connections."""

COMMENT_TAG = "agentjudge"
"""First word of the comment put on every database and role the runtime owns."""

_COMMENT_FIELD = re.compile(r"(\w+)=(\S+)")


def quote_ident(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """``text`` as a SQL string literal (standard conforming strings)."""
    if "\x00" in text:
        raise ValueError("SQL literals cannot contain null bytes")
    return "'" + text.replace("'", "''") + "'"


SCRAM_ITERATIONS = 128
"""PBKDF2 rounds of the SCRAM secrets the runtime sets for its own roles. Their passwords are 128
random bits, which no number of rounds makes easier or harder to guess; the server's default
(4096) would cost every sandbox about 10 ms to make its role and 10 ms per new connection."""


def scram_secret(password: str, iterations: int = SCRAM_ITERATIONS) -> str:
    """The ``SCRAM-SHA-256`` secret of ``password``, as ``CREATE ROLE ... PASSWORD`` takes it
    (the server then stores it as given instead of hashing the password itself)."""

    def encode(data: bytes) -> str:
        return base64.b64encode(data).decode()

    salt = secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    return f"SCRAM-SHA-256${iterations}:{encode(salt)}${encode(stored_key)}:{encode(server_key)}"


def check_socket(host: str | None) -> None:
    """When ``host`` is the socket folder of a sandbox's own server (an isolated cluster's,
    registered in ``sandboxes.sandbox_sockets``), raise ``UnsafeSocketError`` unless the socket
    in it is still the one its server made."""
    if host and host.startswith("/") and (guard := guard_of(host)) is not None:
        guard.check()


async def _checked_connect(*args: Any, **options: Any) -> asyncpg.Connection:
    """``asyncpg.connect`` after ``check_socket`` (a pool's every new connection)."""
    host = options.get("host")
    if host is None and isinstance(options.get("dsn"), str):
        host = (parse_qs(urlsplit(options["dsn"]).query).get("host") or [None])[0]
    check_socket(host)
    return await asyncpg.connect(*args, **options)


def connect_arguments(info: PostgresConnectionInfo) -> dict[str, Any]:
    """Keyword arguments for ``asyncpg.connect`` and ``asyncpg.create_pool``, after
    ``check_socket``."""
    check_socket(info.host)
    return {
        "host": info.host,
        "port": info.port,
        "user": info.user,
        "password": info.password or None,
        "database": info.database,
        "timeout": CONNECT_TIMEOUT,
    }


async def _discard_session(conn: asyncpg.Connection) -> None:
    await conn.execute("DISCARD ALL")


async def session_pool(size: int, **connect: Any) -> asyncpg.Pool:
    """A pool whose connections come back as fresh sessions (``DISCARD ALL`` on release).

    ``connect`` is what ``asyncpg.create_pool`` connects with: ``connect_arguments(info)`` or a
    ``dsn``.
    """
    return await asyncpg.create_pool(
        **connect,
        connect=_checked_connect,
        min_size=0,
        max_size=size,
        max_inactive_connection_lifetime=60.0,
        # Server-side prepared statements are session state; DISCARD ALL drops them.
        statement_cache_size=0,
        reset=_discard_session,
    )


async def close_pool(pool: asyncpg.Pool, timeout: float) -> None:
    """Close a pool, cutting its connections when they do not finish within ``timeout``."""
    try:
        await asyncio.wait_for(pool.close(), timeout)
    except TimeoutError:
        pool.terminate()


async def connect(info: PostgresConnectionInfo) -> asyncpg.Connection:
    """An administrative connection (autocommit, tagged with the runtime's application name)."""
    return await asyncpg.connect(
        **connect_arguments(info), server_settings={"application_name": APPLICATION_NAME}
    )


def ownership_comment(**fields: str) -> str:
    """The comment marking a database or role as the runtime's, with this host's name."""
    parts = [COMMENT_TAG, *(f"{key}={value}" for key, value in fields.items())]
    parts.append(f"host={socket.gethostname()}")
    return " ".join(parts)


def parse_ownership_comment(comment: str | None) -> dict[str, str] | None:
    """The fields of an ownership comment, or None when the comment is not the runtime's."""
    if not comment or not comment.startswith(COMMENT_TAG + " "):
        return None
    return dict(_COMMENT_FIELD.findall(comment))


async def server_version(conn: PostgresConnection) -> int:
    """The server's ``server_version_num`` (e.g. 160002)."""
    return int(await conn.fetchval("SHOW server_version_num"))


async def terminate_backends(conn: PostgresConnection, database: str, timeout: float) -> None:
    """End every other session on ``database`` and wait until they are gone."""
    deadline = time.monotonic() + timeout
    while True:
        remaining = await conn.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = $1 AND pid <> pg_backend_pid()",
            database,
        )
        if not remaining:
            return
        if time.monotonic() > deadline:
            raise SandboxError(
                f"database {database}: {remaining} session(s) did not end within {timeout:.0f} s"
            )
        await asyncio.sleep(0.02)


async def drop_database(conn: PostgresConnection, database: str, *, timeout: float = 10.0) -> bool:
    """Drop ``database`` even when it is a template or has sessions; False when it was absent."""
    row = await conn.fetchrow("SELECT datistemplate FROM pg_database WHERE datname = $1", database)
    if row is None:
        return False
    name = quote_ident(database)
    if row["datistemplate"]:
        await conn.execute(f"ALTER DATABASE {name} IS_TEMPLATE false")
    await conn.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
    if await server_version(conn) >= 130000:
        await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    else:
        await terminate_backends(conn, database, timeout)
        await conn.execute(f"DROP DATABASE IF EXISTS {name}")
    return True


@contextlib.contextmanager
def as_sandbox_error(what: str) -> Iterator[None]:
    """Report server and connection failures of a lifecycle step as ``SandboxError``."""
    try:
        yield
    except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as error:
        raise SandboxError(f"{what}: {type(error).__name__}: {error}") from error


class AdminPool:
    """Pooled administrative connections to one started cluster, opened on first use.

    The first connection also learns the server's version and whether the administrator is a
    superuser, and on a cluster of the runtime's own (not ``external``) stops the roles it makes
    from connecting to the maintenance databases.

    An administrator that is not a superuser acts on the runtime's roles through its membership
    in them, and a server session caches that membership. PostgreSQL 16 was seen keeping a stale
    cache in one session (``must be able to SET ROLE`` for a role another session had just
    granted it, in 4 of 540 batches of eight concurrent sandboxes). Three defences: a task that
    makes a role and then relies on it holds one connection across both (``held``: a session's
    own grants refresh its cache); a connection whose block failed for want of a privilege is
    closed rather than handed to the next user; and an action that may run twice gets a second
    try on a new session (``run``).
    """

    def __init__(self, cluster: PostgresCluster, size: int) -> None:
        self.cluster = cluster
        self.size = size
        self.superuser = False
        """Whether the administrator is a superuser (known once a connection was made)."""
        self.version = 0
        """The server's ``server_version_num`` (known once a connection was made)."""
        self._pool: Any = None
        self._lock = asyncio.Lock()
        self._held: ContextVar[asyncpg.Connection | None] = ContextVar(
            f"held_admin_connection_{id(self)}", default=None
        )
        """The connection the current task holds (``held``), which ``connection`` hands back."""

    @property
    def server(self) -> str:
        """``host:port`` of the cluster."""
        info = self.cluster.admin
        return f"{info.host}:{info.port}"

    @property
    def opened(self) -> bool:
        """Whether the pool is open (a connection was made and it is not closed)."""
        return self._pool is not None

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[asyncpg.Connection]:
        """An administrative connection of the pool, for the block: the one the task holds
        (``held``), if any."""
        held = self._held.get()
        if held is not None:
            yield held
            return
        async with self._lock:
            if self._pool is None:
                info = self.cluster.admin
                where = f"{info.user}@{info.host}:{info.port}/{info.database}"
                backend = self.cluster.backend
                with as_sandbox_error(f"cannot connect to the {backend} cluster at {where}"):
                    self._pool = await asyncpg.create_pool(
                        **connect_arguments(info),
                        connect=_checked_connect,
                        min_size=1,
                        max_size=self.size,
                        server_settings={"application_name": APPLICATION_NAME},
                    )
                async with self._pool.acquire() as conn:
                    self.version = await server_version(conn)
                    self.superuser = bool(
                        await conn.fetchval(
                            "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
                        )
                    )
                    if backend != "external":
                        # A cluster of our own: the roles made for judges and agents may
                        # connect to their own database only, not to the maintenance ones.
                        await conn.execute(
                            "REVOKE CONNECT, TEMPORARY ON DATABASE postgres, template1 FROM PUBLIC"
                        )
            pool = self._pool
        async with pool.acquire() as conn:
            try:
                yield conn
            except asyncpg.InsufficientPrivilegeError:
                if not self.superuser:
                    conn.terminate()  # its membership cache may be stale; the pool replaces it
                raise

    async def run(self, action: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        """``action`` on an administrative connection; when it fails for want of a privilege
        and the administrator is not a superuser, once more on a session of its own, whose
        membership cache is new (see the class docstring). Only for actions that may run twice.
        """
        try:
            async with self.connection() as conn:
                return await action(conn)
        except asyncpg.InsufficientPrivilegeError:
            if self.superuser or self._held.get() is not None:
                raise
        conn = await connect(self.cluster.admin)
        try:
            return await action(conn)
        finally:
            await conn.close(timeout=CLOSE_TIMEOUT)

    @asynccontextmanager
    async def held(self) -> AsyncIterator[asyncpg.Connection]:
        """One connection for the block, which every ``connection`` of this task uses too: for
        making a role and then acting through it (see the class docstring). Tasks the block
        starts inherit it; they must not use it at the same time."""
        async with self.connection() as conn:
            token = self._held.set(conn)
            try:
                yield conn
            finally:
                self._held.reset(token)

    async def close(self) -> None:
        """Close the pool (cutting connections after ``CLOSE_TIMEOUT``); it reopens on use."""
        async with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            await close_pool(pool, CLOSE_TIMEOUT)
