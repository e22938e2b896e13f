"""How the SQL server's calls reach the database, and what read-only mode lets through.

Owns the two access modes and their layers of protection:

* the connection (``Endpoint``): a sandbox's read-only view (its reader role), a writable
  sandbox's owner role (a login confined to that database), or a bare DSN (whatever role it
  names); every call gets a session with no state left by earlier calls;
* the transaction (``SqlSession.run``): each call runs in one transaction with a local
  ``statement_timeout``, plus a client-side deadline that cuts the connection should the server
  not stop in time. Read-only mode opens it ``READ ONLY`` and always rolls it back; unrestricted
  mode commits it when the call succeeds;
* the statement check (``read_only_refusal``): read-only mode runs only queries and refuses,
  before anything runs, statements that would leave or change the transaction, the session's
  identity or its limits.

Also owns running a script with a row cap (``run_capped``) and turning rows into JSON values.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from datetime import tzinfo
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import asyncpg

from mcp_servers.sql.agent_tools import json_value
from mcp_servers.sql.errors import SqlFailure, postgres_error_text
from mcp_servers.sql.statements import split_statements
from mcp_servers.sql.values import configure_codecs, convert_value, session_zone
from sandboxes.postgres import admin
from sandboxes.postgres.sandbox import PostgresConnectionInfo, PostgresSandbox

if TYPE_CHECKING:
    from sandboxes.postgres.sandbox import PostgresConnection

AccessMode = Literal["read-only", "unrestricted"]

T = TypeVar("T")

DEADLINE_GRACE = 2.0
"""Seconds a call may outlive its ``statement_timeout`` before its connection is cut."""

_MOVE_STEP = 2**31 - 1
"""The largest row count ``MOVE FORWARD`` takes."""


# ---------------------------------------------------------------------------------------------
# The statement check of read-only mode
# ---------------------------------------------------------------------------------------------

QUERY_KEYWORDS = frozenset({"SELECT", "WITH", "VALUES", "TABLE", "SHOW", "EXPLAIN"})
"""Statements read-only mode runs (besides ``SET``/``RESET`` of ordinary settings)."""

EXPLAINABLE_KEYWORDS = frozenset(
    {"SELECT", "WITH", "VALUES", "TABLE", "INSERT", "UPDATE", "DELETE", "MERGE"}
)
"""Statements ``explain_query`` accepts."""

TRANSACTION_KEYWORDS = frozenset(
    {"BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE"}
)

GUARDED_SETTINGS = frozenset(
    {
        "all",
        "role",
        "session_authorization",
        "transaction_read_only",
        "default_transaction_read_only",
        "transaction_isolation",
        "default_transaction_isolation",
        "transaction_deferrable",
        "default_transaction_deferrable",
        "statement_timeout",
        "lock_timeout",
        "idle_in_transaction_session_timeout",
        "idle_session_timeout",
        "transaction_timeout",
        "session_replication_role",
    }
)
"""Settings read-only mode will not let a call change: identity, transaction mode, limits."""

_WORD = re.compile(r"[A-Za-z_\u0080-\U0010ffff][A-Za-z_0-9$\u0080-\U0010ffff]*")


@dataclass(frozen=True)
class _Token:
    kind: Literal["word", "ident", "punct"]
    text: str
    """Words upper-cased, quoted identifiers lower-cased (setting names ignore case)."""


def leading_tokens(statement: str, limit: int = 6) -> list[_Token]:  # noqa: PLR0912 - a lexer
    """The first ``limit`` tokens of ``statement``, skipping whitespace and comments."""
    tokens: list[_Token] = []
    index, length = 0, len(statement)
    while index < length and len(tokens) < limit:
        character = statement[index]
        if character.isspace():
            index += 1
        elif statement.startswith("--", index):
            newline = statement.find("\n", index)
            index = length if newline == -1 else newline + 1
        elif statement.startswith("/*", index):
            depth = 0
            while index < length:
                if statement.startswith("/*", index):
                    depth, index = depth + 1, index + 2
                elif statement.startswith("*/", index):
                    depth, index = depth - 1, index + 2
                    if depth == 0:
                        break
                else:
                    index += 1
        elif character == '"':
            closing = index + 1
            while True:
                closing = statement.find('"', closing)
                if closing == -1 or not statement.startswith('"', closing + 1):
                    break
                closing += 2
            end = length if closing == -1 else closing
            tokens.append(_Token("ident", statement[index + 1 : end].replace('""', '"').lower()))
            index = end + 1
        elif (word := _WORD.match(statement, index)) is not None:
            tokens.append(_Token("word", word.group(0).upper()))
            index = word.end()
        else:
            tokens.append(_Token("punct", character))
            index += 1
    return tokens


def _describe(tokens: list[_Token], count: int = 2) -> str:
    words = [token.text for token in tokens[:count] if token.kind == "word"]
    return " ".join(words) or "this"


_TRANSACTION_REFUSAL = (
    "{what} is not allowed in read-only mode: every call runs inside its own READ ONLY "
    "transaction, which the server always rolls back, and statements that end, nest or change "
    "that transaction are refused before anything runs."
)
_QUERY_REFUSAL = (
    "{what} statements are not allowed in read-only mode: only queries run here (SELECT, WITH, "
    "VALUES, TABLE, SHOW, EXPLAIN, and SET/RESET of ordinary settings). Nothing was run."
)
_SETTING_REFUSAL = (
    "{what} is not allowed in read-only mode: a call may not change its role, its transaction's "
    "mode or its time limits. Nothing was run."
)


def _setting_refusal(tokens: list[_Token]) -> str | None:  # noqa: PLR0911 - one per form
    """Why a ``SET``/``RESET`` statement is refused, or None when it sets an ordinary setting."""
    verb = tokens[0].text
    rest = tokens[1:]
    if verb == "SET" and rest and rest[0].kind == "word" and rest[0].text in ("SESSION", "LOCAL"):
        if len(rest) > 1 and rest[1].kind == "word":
            if rest[1].text == "AUTHORIZATION":
                return _SETTING_REFUSAL.format(what="SET SESSION AUTHORIZATION")
            if rest[1].text == "CHARACTERISTICS":
                return _TRANSACTION_REFUSAL.format(what="SET SESSION CHARACTERISTICS")
        rest = rest[1:]
    if not rest:
        return None  # a syntax error; the server words it
    name = rest[0]
    following = rest[1] if len(rest) > 1 else None
    if name.kind == "word" and name.text == "TRANSACTION":
        return _TRANSACTION_REFUSAL.format(what=f"{verb} TRANSACTION")
    if name.kind == "word" and name.text == "SESSION":  # RESET SESSION AUTHORIZATION
        return _SETTING_REFUSAL.format(what=f"{verb} SESSION AUTHORIZATION")
    if name.kind == "punct" or (
        following is not None and following.kind == "punct" and following.text not in "=.;"
    ):
        # e.g. U&"..." spellings: refuse what cannot be told apart from a guarded setting
        return _SETTING_REFUSAL.format(what=f"{verb} of a setting named in this form")
    if name.text.lower() in GUARDED_SETTINGS:
        return _SETTING_REFUSAL.format(what=f"{verb} {name.text.lower()}")
    return None


def statement_refusal(statement: str) -> str | None:  # noqa: PLR0911 - one per kind
    """Why read-only mode refuses one statement, or None when it may run."""
    tokens = leading_tokens(statement)
    while tokens and tokens[0].kind == "punct" and tokens[0].text == "(":
        tokens = tokens[1:]  # a parenthesised query
    if not tokens:
        return None
    first = tokens[0]
    if first.kind != "word":
        return _QUERY_REFUSAL.format(what="Such")
    if first.text in TRANSACTION_KEYWORDS:
        return _TRANSACTION_REFUSAL.format(what=first.text)
    if first.text == "PREPARE" and len(tokens) > 1 and tokens[1].text == "TRANSACTION":
        return _TRANSACTION_REFUSAL.format(what="PREPARE TRANSACTION")
    if first.text in ("SET", "RESET"):
        return _setting_refusal(tokens)
    if first.text in QUERY_KEYWORDS:
        return None
    return _QUERY_REFUSAL.format(what=_describe(tokens))


def read_only_refusal(script: str) -> str | None:
    """Why read-only mode refuses ``script`` (naming the statement), or None when it may run."""
    spans = split_statements(script)
    for number, (start, end) in enumerate(spans, 1):
        refusal = statement_refusal(script[start:end])
        if refusal is not None:
            where = f"Statement {number} of {len(spans)}: " if len(spans) > 1 else ""
            return where + refusal
    return None


def explain_refusal(sql: str) -> str | None:
    """Why ``explain_query`` refuses ``sql`` (in either mode), or None."""
    spans = split_statements(sql)
    if len(spans) != 1:
        return (
            "explain_query takes exactly one statement; "
            f"this SQL has {len(spans)}. Nothing was run."
        )
    tokens = leading_tokens(sql)
    while tokens and tokens[0].kind == "punct" and tokens[0].text == "(":
        tokens = tokens[1:]
    if not tokens or tokens[0].kind != "word" or tokens[0].text not in EXPLAINABLE_KEYWORDS:
        return (
            "explain_query explains one SELECT, WITH, VALUES, TABLE, INSERT, UPDATE, DELETE or "
            f"MERGE statement, not {_describe(tokens)}. Nothing was run."
        )
    return None


# ---------------------------------------------------------------------------------------------
# Endpoints
# ---------------------------------------------------------------------------------------------


class Endpoint:
    """Where a server's connections come from; each is a fresh session, idle on return."""

    description: str

    def acquire(self) -> AbstractAsyncContextManager[PostgresConnection]:
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
# One call: transaction, limits, deadline
# ---------------------------------------------------------------------------------------------


class CallTimeout(SqlFailure):
    """The call ran past its deadline and its connection was cut."""


class SqlSession:
    """What every tool of one server runs through: the endpoint, the mode and the limits."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        access: AccessMode,
        max_rows: int,
        statement_timeout: float,
    ) -> None:
        if max_rows < 1:
            raise ValueError("max_rows must be at least 1")
        if not statement_timeout > 0:
            raise ValueError("statement_timeout must be a positive number of seconds")
        self.endpoint = endpoint
        self.access: AccessMode = access
        self.max_rows = max_rows
        self.statement_timeout = statement_timeout

    @property
    def read_only(self) -> bool:
        return self.access == "read-only"

    async def aclose(self) -> None:
        """Close the endpoint's pool (a sandbox's pools are closed with the sandbox)."""
        await self.endpoint.aclose()

    async def run(
        self, work: Callable[[PostgresConnection], Awaitable[T]], *, keep: bool = True
    ) -> T:
        """Run ``work`` on a fresh session inside this mode's transaction, committed at the end
        in unrestricted mode when ``keep`` (always rolled back in read-only mode).

        Raises ``SqlFailure`` (worded as psycopg would) when the server refuses a statement, and
        ``CallTimeout`` when the call outlives ``statement_timeout`` by ``DEADLINE_GRACE``.
        """
        milliseconds = max(1, round(self.statement_timeout * 1000))
        async with self.endpoint.acquire() as conn:
            terminated = False
            try:
                async with asyncio.timeout(self.statement_timeout + DEADLINE_GRACE) as scope:
                    await conn.execute("BEGIN TRANSACTION READ ONLY" if self.read_only else "BEGIN")
                    # A query (not SET LOCAL): once the transaction has taken a snapshot, it can
                    # no longer be switched to read-write.
                    await conn.fetchval(
                        "SELECT set_config('statement_timeout', $1, true)", f"{milliseconds}ms"
                    )
                    result = await work(conn)
                    if keep and not self.read_only and conn.is_in_transaction():
                        await conn.execute("COMMIT")
                    return result
            except TimeoutError:
                if not scope.expired():
                    raise
                # The server may not stop in time (a script can lift its own statement_timeout
                # with set_config): cut the session, which ends the statement and the transaction.
                conn.terminate()
                terminated = True
                raise CallTimeout(
                    f"the call did not finish within {self.statement_timeout:g} s (this "
                    "server's statement_timeout) and was cancelled; nothing it did was kept"
                ) from None
            except asyncpg.PostgresError as error:
                raise SqlFailure(self._error_text(error, "", 0)) from None
            finally:
                if not terminated and not conn.is_closed() and conn.is_in_transaction():
                    with contextlib.suppress(asyncpg.PostgresError, asyncpg.InterfaceError):
                        await conn.execute("ROLLBACK")

    def _error_text(self, error: asyncpg.PostgresError, query: str, offset: int) -> str:
        text = postgres_error_text(error, query, offset)
        if isinstance(error, asyncpg.QueryCanceledError) and "timeout" in text:
            text += f"\n(This server stops every statement after {self.statement_timeout:g} s.)"
        return text

    def failure(self, error: asyncpg.PostgresError, query: str, offset: int) -> SqlFailure:
        """A server error of ``query`` (run from ``offset`` in the caller's text) as SqlFailure."""
        return SqlFailure(self._error_text(error, query, offset))


# ---------------------------------------------------------------------------------------------
# Running a script with a row cap
# ---------------------------------------------------------------------------------------------


@dataclass
class CappedRows:
    """The last statement's outcome: its columns and first rows, or its command status."""

    columns: list[str] | None
    """Column names (made unique); None when the statement returns no rows description."""
    rows: list[dict[str, Any]]
    """At most the cap's worth of rows, values JSON-safe."""
    total: int
    """How many rows the statement returned in all."""
    status: str | None = None
    """The command tag (``UPDATE 3``) of a statement without rows description."""


def json_safe(value: Any) -> Any:
    """A converted value as JSON: numbers, booleans, strings, lists and objects only."""
    value = json_value(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(value, list):
        return [json_safe(item) for item in value]
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    return value


def unique_names(names: list[str]) -> list[str]:
    """Column names with repeats suffixed (``a``, ``a_2``) so rows keep every value."""
    seen: dict[str, int] = {}
    result = []
    for name in names:
        count = seen.get(name, 0) + 1
        seen[name] = count
        candidate = name if count == 1 else f"{name}_{count}"
        while count > 1 and candidate in seen:
            count += 1
            candidate = f"{name}_{count}"
        if candidate != name:
            seen[candidate] = 1
        result.append(candidate)
    return result


def _cell(value: Any, attribute: asyncpg.Attribute, zone: tzinfo) -> Any:
    kind, name = attribute.type.kind, attribute.type.name
    try:
        converted = convert_value(
            value, attribute.type.oid, kind, name, attribute.type.schema, zone
        )
    except SqlFailure as refusal:  # +-infinity dates and timestamps
        return "-infinity" if "-infinity" in str(refusal) else "infinity"
    return json_safe(converted)


def json_rows(
    records: Sequence[asyncpg.Record],
    attributes: Sequence[asyncpg.Attribute],
    zone: tzinfo,
) -> tuple[list[str], list[dict[str, Any]]]:
    """Records of a prepared statement as JSON-safe row objects."""
    names = unique_names([attribute.name for attribute in attributes])
    rows = [
        {
            name: _cell(value, attribute, zone)
            for name, attribute, value in zip(names, attributes, record.values(), strict=True)
        }
        for record in records
    ]
    return names, rows


async def run_capped(
    session: SqlSession, conn: PostgresConnection, script: str, max_rows: int
) -> CappedRows:
    """Run ``script`` in the open transaction: all statements but the last in one simple query,
    the last through a cursor that keeps ``max_rows`` rows and counts the rest."""
    spans = split_statements(script)
    if not spans:
        raise SqlFailure("the SQL text contains no statement")
    last_start = spans[-1][0]
    offset = 0
    try:
        if last_start:
            await conn.execute(script[:last_start])
        offset = last_start
        last = script[last_start:]
        if not conn.is_in_transaction():  # the script committed (unrestricted mode)
            await conn.execute("BEGIN")
        prepared = await conn.prepare(last)
        if await configure_codecs(conn, prepared.get_attributes()):
            prepared = await conn.prepare(last)
        if prepared.get_parameters():
            raise SqlFailure(
                "the SQL has $1-style parameters, which this tool cannot bind; "
                "write the values into the SQL instead"
            )
        attributes = prepared.get_attributes()
        if not attributes:
            await prepared.fetch()
            return CappedRows(None, [], 0, prepared.get_statusmsg())
        cursor = await prepared.cursor()
        records = await cursor.fetch(max_rows)
        total = len(records)
        if total == max_rows:
            while (moved := await cursor.forward(_MOVE_STEP)) == _MOVE_STEP:
                total += moved
            total += moved
    except asyncpg.PostgresError as error:
        raise session.failure(error, script, offset) from None
    names, rows = json_rows(records, attributes, session_zone(conn))
    return CappedRows(names, rows, total)
