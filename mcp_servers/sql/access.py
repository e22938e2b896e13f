"""How the judges' SQL server reaches its database, and the walls around each call.

Owns the two access modes and what bounds a call in them:

* the connection (``Endpoint``): a sandbox's read-only view (its reader role), a writable
  sandbox's owner role (a login confined to that database), or a bare DSN (whatever role it
  names); every call gets a session with no state left by earlier calls. The role is checked at
  the first call (``role_refusal``): a superuser, or a member of the roles that read or write the
  server's files or run programs there, is refused unless the server was told to accept it;
* the statement check (``inspection``), made by the tools before anything runs;
* the transaction (``SqlSession.run``): each call runs in one transaction with a local
  ``statement_timeout``. Read-only mode opens it ``READ ONLY`` and always rolls it back;
  unrestricted mode commits it when the call succeeds;
* the watchdog (``watchdog``): a call still running ``WATCHDOG_GRACE`` after its time limit
  (its SQL may have lifted the limit, e.g. from inside a function) is cancelled on the server
  and seen gone from ``pg_stat_activity``; in unrestricted mode a call whose database grows
  more than ``size_quota`` bytes past its size at the server's first call is stopped the same
  way, rolled back, and the space it took is vacuumed back. Calls too short for the watchdog
  are checked against the quota before they commit, whenever the calls since the last check
  have run ``QUOTA_CHECK_EVERY`` seconds in all (every call while the database is past its
  limit; a call that does not grow it then, such as a TRUNCATE freeing space, still commits);
* a last client-side deadline cuts the connection should even the watchdog fail.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Literal, TypeVar

import asyncpg

from mcp_servers.sql.answers import DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_VALUE_BYTES, AnswerLimits
from mcp_servers.sql.errors import SqlFailure, postgres_error_text
from mcp_servers.sql.watchdog import SIZE_SQL, STOP_WAIT, Watch, Watchdog
from sandboxes.postgres import admin
from sandboxes.postgres.sandbox import PostgresConnectionInfo, PostgresSandbox

if TYPE_CHECKING:
    from sandboxes.postgres.sandbox import PostgresConnection

AccessMode = Literal["read-only", "unrestricted"]

T = TypeVar("T")

WATCHDOG_GRACE = 0.25
"""Seconds a call may outlive its ``statement_timeout`` before the watchdog cancels it."""

DEADLINE_GRACE = WATCHDOG_GRACE + 3 * STOP_WAIT + 1.0
"""Seconds a call may outlive its ``statement_timeout`` before its connection is cut on the
client's side (only when the watchdog could not stop it on the server)."""

DEFAULT_SIZE_QUOTA = 512 * 2**20
"""Bytes a writable sandbox may grow by through one server (unrestricted mode), by default."""

QUOTA_CHECK_EVERY = 0.05
"""Seconds of calls (summed) between two size checks made before a commit (every call is
checked while the database is past its limit)."""

QUOTA_SLACK = 2**20
"""Bytes a call may add while the database is already past its limit: enough for the new empty
files of a TRUNCATE, so that a judge can free space."""

MIB = 2**20


# ---------------------------------------------------------------------------------------------
# Endpoints
# ---------------------------------------------------------------------------------------------


class Endpoint:
    """Where a server's connections come from; each is a fresh session, idle on return."""

    description: str

    def acquire(self) -> AbstractAsyncContextManager[PostgresConnection]:
        raise NotImplementedError

    async def open_session(self) -> asyncpg.Connection:
        """A connection of its own as the same role (outside any pool), for the watchdog."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release what the endpoint holds (its pool); it may be used again afterwards."""


class SandboxEndpoint(Endpoint):
    """A Postgres sandbox: its read-only view as the reader role, or a writable sandbox as its
    owner role (never as the cluster administrator of ``sandbox.connection``)."""

    def __init__(self, sandbox: PostgresSandbox) -> None:
        self.sandbox = sandbox
        self.description = (
            f"read-only view {sandbox.name}" if sandbox.read_only else f"sandbox {sandbox.name}"
        )

    def acquire(self) -> AbstractAsyncContextManager[PostgresConnection]:
        if self.sandbox.read_only:
            return self.sandbox.connect()
        return self.sandbox.connect_as_owner()

    async def open_session(self) -> asyncpg.Connection:
        info = (
            self.sandbox.connection
            if self.sandbox.read_only
            else await self.sandbox.owner_connection()
        )
        return await asyncpg.connect(**admin.connect_arguments(info))


class DsnEndpoint(Endpoint):
    """A database named by a DSN, through a small pool that resets sessions on release."""

    def __init__(self, dsn: str, *, pool_size: int = 4) -> None:
        self.dsn = dsn
        self.pool_size = pool_size
        self.description = "the database of the DSN"
        self._pool: asyncpg.Pool | None = None
        self._lock = asyncio.Lock()

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator[PostgresConnection]:
        async with self._lock:
            if self._pool is None:
                self._pool = await admin.session_pool(self.pool_size, dsn=self.dsn)
            pool = self._pool
        async with pool.acquire() as conn:
            yield conn

    async def open_session(self) -> asyncpg.Connection:
        return await asyncpg.connect(dsn=self.dsn, timeout=admin.CONNECT_TIMEOUT)

    async def aclose(self) -> None:
        async with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            await admin.close_pool(pool, 5.0)


def endpoint_for(target: PostgresSandbox | PostgresConnectionInfo | str) -> Endpoint:
    """The endpoint of a sandbox, a connection info or a DSN."""
    if isinstance(target, str):
        return DsnEndpoint(target)
    if isinstance(target, PostgresConnectionInfo):
        return DsnEndpoint(target.dsn)
    return SandboxEndpoint(target)


# ---------------------------------------------------------------------------------------------
# The connection's role
# ---------------------------------------------------------------------------------------------

SERVER_POWERS = {
    "pg_read_server_files": "reads any file the server may read",
    "pg_write_server_files": "writes files where the server may write",
    "pg_execute_server_program": "runs programs on the server's host",
}
"""Predefined roles whose members reach past the database, with what they allow."""

_ROLE_SQL = """
SELECT r.rolname, r.rolsuper,
       ARRAY(SELECT g.rolname FROM pg_catalog.pg_roles g
             WHERE g.oid <> r.oid AND (g.rolsuper OR g.rolname = ANY($1::text[]))
               AND pg_catalog.pg_has_role(r.oid, g.oid, 'MEMBER')
             ORDER BY 1) AS powers
FROM pg_catalog.pg_roles r WHERE r.rolname = session_user
"""


class RoleRefused(SqlFailure):
    """The connection's role may do too much for a judge."""


async def role_refusal(conn: PostgresConnection) -> str | None:
    """Why a judge may not be served through this connection's role, or None."""
    row = await conn.fetchrow(_ROLE_SQL, list(SERVER_POWERS))
    if row is None:
        return None
    name, powers = row["rolname"], list(row["powers"])
    if row["rolsuper"]:
        what = "a superuser"
    elif powers:
        what = "a member of " + ", ".join(
            f"{power} ({SERVER_POWERS.get(power, 'a superuser role')})" for power in powers
        )
    else:
        return None
    return (
        f"this server connects as role {name!r}, {what}: through it a judge's SQL could read "
        "and write the server's files, run programs or reach other databases, so the server "
        "refuses it. Connect with a role without those rights (for read-only access, one that "
        "may only read this database), or accept the risk with --allow-superuser "
        "(allow_superuser=True); the statement checks still apply then."
    )


# ---------------------------------------------------------------------------------------------
# One call: role, transaction, watchdog, quota, deadline
# ---------------------------------------------------------------------------------------------


class CallTimeout(SqlFailure):
    """The call ran past its deadline and was stopped."""


class QuotaReached(SqlFailure):
    """The call grew its sandbox past the size quota and was stopped."""

    def __init__(self, message: str, size: int) -> None:
        super().__init__(message)
        self.size = size
        """The database's size when the call was stopped, in bytes."""


class SqlSession:
    """What every tool of one server runs through: the endpoint, the mode and the limits."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        access: AccessMode,
        max_rows: int,
        statement_timeout: float,
        max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        size_quota: int | None = DEFAULT_SIZE_QUOTA,
        allow_superuser: bool = False,
    ) -> None:
        if not statement_timeout > 0:
            raise ValueError("statement_timeout must be a positive number of seconds")
        if size_quota is not None and size_quota < 1:
            raise ValueError("size_quota must be a positive number of bytes (or None)")
        self.endpoint = endpoint
        self.access: AccessMode = access
        self.limits = AnswerLimits(max_rows, max_value_bytes, max_answer_bytes)
        self.statement_timeout = statement_timeout
        self.size_quota = size_quota
        self.allow_superuser = allow_superuser
        self.watchdog = Watchdog(endpoint.open_session)
        self._role_checked = allow_superuser
        self._role_refusal: str | None = None
        self._baseline: int | None = None
        self._size: int | None = None
        """The database's size at the last check (None: not checked yet)."""
        self._unchecked = 0.0
        self.shapes: dict[int, tuple[int, ...]] = {}
        """Per statement text (hashed): the columns found to need capping (``answers``)."""
        milliseconds = max(1, round(statement_timeout * 1000))
        # One round trip. A query (not SET LOCAL): once the transaction has taken a snapshot,
        # it can no longer be switched to read-write.
        self._begin = (
            f"BEGIN{' TRANSACTION READ ONLY' if self.read_only else ''}; "
            f"SELECT pg_catalog.set_config('statement_timeout', '{milliseconds}ms', true)"
        )

    @property
    def read_only(self) -> bool:
        return self.access == "read-only"

    @property
    def max_rows(self) -> int:
        return self.limits.max_rows

    async def aclose(self) -> None:
        """Close the watchdog's session and the endpoint's pool (a sandbox's pools close with
        the sandbox)."""
        await self.watchdog.aclose()
        await self.endpoint.aclose()

    async def verify(self) -> None:
        """Connect once and check the role; raises ``RoleRefused`` (or the connection's
        error) so that a server can refuse to start rather than fail every call."""
        async with self.endpoint.acquire() as conn:
            await self._check_role(conn)

    async def _check_role(self, conn: PostgresConnection) -> None:
        if not self._role_checked:
            self._role_refusal = await role_refusal(conn)
            self._role_checked = True
        if self._role_refusal is not None:
            raise RoleRefused(self._role_refusal)

    async def run(
        self, work: Callable[[PostgresConnection], Awaitable[T]], *, keep: bool = True
    ) -> T:
        """Run ``work`` on a fresh session inside this mode's transaction, committed at the end
        in unrestricted mode when ``keep`` (always rolled back in read-only mode).

        Raises ``SqlFailure`` (worded as psycopg would) when the server refuses a statement,
        ``RoleRefused`` when the connection's role may do too much, ``CallTimeout`` when the
        call outlives ``statement_timeout`` and ``QuotaReached`` when it grows its sandbox past
        the quota (both stopped on the server, nothing kept).
        """
        async with self.endpoint.acquire() as conn:
            await self._check_role(conn)
            try:
                return await self._call(conn, work, keep)
            except QuotaReached as reached:
                await self._reclaim(conn, reached)
                raise

    async def _call(
        self,
        conn: PostgresConnection,
        work: Callable[[PostgresConnection], Awaitable[T]],
        keep: bool,
    ) -> T:
        loop = asyncio.get_running_loop()
        started = loop.time()
        terminated = False
        watch: Watch | None = None
        try:
            async with asyncio.timeout(self.statement_timeout + DEADLINE_GRACE) as scope:
                await conn.execute(self._begin)
                limit = await self._limit(conn)
                watch = self.watchdog.watch(
                    conn.get_server_pid(),
                    deadline=self.statement_timeout + WATCHDOG_GRACE,
                    limit=limit,
                )
                try:
                    result = await work(conn)
                except (SqlFailure, asyncpg.PostgresError):
                    await watch.close()
                    if watch.reason is None:
                        raise
                    raise self._stopped(watch) from None
                await watch.close()
                if watch.reason is not None:
                    raise self._stopped(watch)
                if limit is not None:
                    await self._check_size(conn, loop.time() - started, limit)
                if keep and not self.read_only and conn.is_in_transaction():
                    await conn.execute("COMMIT")
                return result
        except TimeoutError:
            if not scope.expired():
                raise
            # Even the watchdog could not stop it: cut the session, which ends the transaction
            # (the server notices when it next talks to the client).
            conn.terminate()
            terminated = True
            raise CallTimeout(
                f"the call did not finish within {self.statement_timeout:g} s (this server's "
                "statement_timeout) and its connection was cut; nothing it did was kept"
            ) from None
        except asyncpg.PostgresError as error:
            raise SqlFailure(self._error_text(error, "", 0)) from None
        finally:
            if watch is not None:
                await watch.close()
            if not terminated and not conn.is_closed() and conn.is_in_transaction():
                with contextlib.suppress(asyncpg.PostgresError, asyncpg.InterfaceError):
                    await conn.execute("ROLLBACK")

    def _stopped(self, watch: Watch) -> SqlFailure:
        where = "on the server" if watch.stopped_on_server else "(its connection was cut)"
        if watch.reason == "quota":
            size = watch.size or 0
            return QuotaReached(self._quota_text(size, f"was stopped {where}"), size)
        return CallTimeout(
            f"the call did not finish within {self.statement_timeout:g} s (this server's "
            f"statement_timeout) and was cancelled {where}; nothing it did was kept"
        )

    @property
    def _over(self) -> bool:
        """Whether the last check found the database past its limit."""
        return (
            self._size is not None
            and self._baseline is not None
            and self._size > self._baseline + (self.size_quota or 0)
        )

    async def _limit(self, conn: PostgresConnection) -> int | None:
        """The size the database may reach in this call (None: read-only, or no quota): the
        quota's limit, or, when the database is already past it, its size now and a little."""
        if self.read_only or self.size_quota is None:
            return None
        if self._baseline is None:
            self._baseline = int(await conn.fetchval(SIZE_SQL))
        if self._over and self._size is not None:
            return self._size + QUOTA_SLACK
        return self._baseline + self.size_quota

    async def _check_size(self, conn: PostgresConnection, elapsed: float, limit: int) -> None:
        """Before a commit: the database's size, when the calls since the last check have run
        long enough to have written much (every call while it is past its limit)."""
        self._unchecked += elapsed
        if self._unchecked < QUOTA_CHECK_EVERY and not self._over:
            return
        self._unchecked = 0.0
        size = int(await conn.fetchval(SIZE_SQL))
        if size > limit:
            raise QuotaReached(self._quota_text(size, "was rolled back"), size)
        self._size = size

    def _quota_text(self, size: int, outcome: str) -> str:
        baseline, quota = self._baseline or 0, self.size_quota or 0
        return (
            f"quota reached: the call grew this database to {size / MIB:.1f} MiB, past its "
            f"limit of {(baseline + quota) / MIB:.1f} MiB (its size at this server's first call, "
            f"{baseline / MIB:.1f} MiB, plus the {quota / MIB:g} MiB it may grow by); it "
            f"{outcome} and nothing it did was kept. Write less, or drop or truncate tables "
            "made earlier (DELETE does not give space back)."
        )

    async def _reclaim(self, conn: PostgresConnection, reached: QuotaReached) -> None:
        """After a quota stop (the call rolled back): vacuum the role's tables if the database
        is still past its limit, so that the pages the call wrote are given back; then note the
        size the next calls start from."""
        self._size = reached.size
        if conn.is_closed() or self._baseline is None or self.size_quota is None:
            return
        milliseconds = max(1, round(self.statement_timeout * 1000))
        with contextlib.suppress(asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError):
            async with asyncio.timeout(self.statement_timeout + DEADLINE_GRACE):
                size = int(await conn.fetchval(SIZE_SQL))
                tables = await conn.fetchval(_OWN_TABLES_SQL)
                if size > self._baseline + self.size_quota and tables:
                    await conn.execute(f"SET statement_timeout = '{milliseconds}ms'")
                    await conn.execute(f"VACUUM {tables}")
                    size = int(await conn.fetchval(SIZE_SQL))
                self._size = size

    def _error_text(self, error: asyncpg.PostgresError, query: str, offset: int) -> str:
        text = postgres_error_text(error, query, offset)
        if isinstance(error, asyncpg.QueryCanceledError) and "timeout" in text:
            text += f"\n(This server stops every statement after {self.statement_timeout:g} s.)"
        return text

    def failure(self, error: asyncpg.PostgresError, query: str, offset: int) -> SqlFailure:
        """A server error of ``query`` (run from ``offset`` in the caller's text) as SqlFailure."""
        return SqlFailure(self._error_text(error, query, offset))


_OWN_TABLES_SQL = """
SELECT string_agg(pg_catalog.format('%I.%I', n.nspname, c.relname), ', ')
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'm') AND c.relpersistence = 'p'
  AND pg_catalog.pg_get_userbyid(c.relowner) = current_user
  AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
"""
