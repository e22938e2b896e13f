"""Attacks on the SQL MCP server: every one refused with a clear error, and nothing changed.

Read-only mode serves a snapshot's view. Each attack goes through a real MCP client session and
must come back as an error naming what stopped it; afterwards a fingerprint of the view (data,
schema, sequence values, large objects), of another sandbox and of the cluster (roles,
databases, server settings), taken through an administrative connection, must be unchanged.
The inner layers are attacked on their own too: the same statements with the statement check
skipped still fail on the read-only transaction or the reader role's privileges.

Unrestricted mode serves a private writable clone as its owner role: it writes that clone, but
cannot reach other databases, the frozen template, the server's host or other roles.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp
import pytest
import pytest_asyncio

from mcp_servers.sql.access import SqlSession
from mcp_servers.sql.answers import AnswerLimits, CappedRows, run_capped
from mcp_servers.sql.errors import SqlFailure
from mcp_servers.sql.judge_server import sql_server
from sandboxes.postgres import admin
from sandboxes.postgres.embedded import EmbeddedPostgresCluster
from sandboxes.postgres.provider import ClusterPostgresProvider, ClusterPostgresSnapshot
from sandboxes.postgres.sandbox import PostgresConnectionInfo, PostgresSandbox
from tests.sandboxes.postgres.helpers import write_task

if TYPE_CHECKING:
    from sandboxes.postgres.sandbox import PostgresConnection

pytestmark = pytest.mark.asyncio(loop_scope="module")

SEED = """
CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL);
CREATE TABLE orders (id integer PRIMARY KEY, customer_id integer REFERENCES customers (id));
CREATE TABLE counters (name text PRIMARY KEY, n integer NOT NULL);
CREATE SEQUENCE ticket_seq;
SELECT setval('ticket_seq', 41);
INSERT INTO customers VALUES (1, 'Ada'), (2, 'Bilal'), (3, 'Chen');
INSERT INTO orders VALUES (10, 1), (11, 3);
INSERT INTO counters VALUES ('visits', 0);
-- runs as the administrator who creates it: a way around the reader's missing privileges
CREATE FUNCTION bump_counter() RETURNS integer LANGUAGE sql SECURITY DEFINER
    AS $$ UPDATE counters SET n = n + 1 RETURNING n $$;
"""

TIMEOUT = 1.0


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def snapshot(
    provider: ClusterPostgresProvider, tmp_path_factory: pytest.TempPathFactory
) -> ClusterPostgresSnapshot:
    task = write_task(tmp_path_factory.mktemp("security") / "shop", SEED)
    sandbox = await provider.create(*task)
    return await sandbox.freeze()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def view(snapshot: ClusterPostgresSnapshot) -> PostgresSandbox:
    return await snapshot.clone(writable=False)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def other(snapshot: ClusterPostgresSnapshot) -> PostgresSandbox:
    """Another judge's writable sandbox, which no attack may touch."""
    return await snapshot.clone()


@pytest.fixture
def marker() -> Path:
    """A file that ``COPY ... TO PROGRAM`` attacks try to create."""
    path = Path("/tmp") / f"aj_sql_attack_{secrets.token_hex(6)}"
    assert not path.exists()
    return path


# --- fingerprints ---------------------------------------------------------------------------


async def database_fingerprint(info: PostgresConnectionInfo) -> dict[str, Any]:
    """Data, schema, sequence values and large objects of one database (as the admin)."""
    conn = await admin.connect(info)
    try:
        tables = [
            row[0]
            for row in await conn.fetch(
                "SELECT format('%I.%I', schemaname, tablename) FROM pg_tables"
                " WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1"
            )
        ]
        data = {
            table: await conn.fetchval(
                f"SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), ''))"
                f" FROM {table} t"
            )
            for table in tables
        }
        sequences = {
            row[0]: tuple(await conn.fetchrow(f"SELECT last_value, is_called FROM {row[0]}") or ())
            for row in await conn.fetch(
                "SELECT format('%I.%I', schemaname, sequencename) FROM pg_sequences ORDER BY 1"
            )
        }
        schema = [
            tuple(row)
            for row in await conn.fetch(
                "SELECT n.nspname, c.relname, c.relkind, pg_get_userbyid(c.relowner),"
                " c.relacl::text, c.relpersistence,"
                " (SELECT string_agg(a.attname || ':' || format_type(a.atttypid, a.atttypmod),"
                "  ',' ORDER BY a.attnum) FROM pg_attribute a"
                "  WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)"
                " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')"
                " ORDER BY 1, 2"
            )
        ]
        routines = [
            tuple(row)
            for row in await conn.fetch(
                "SELECT p.oid::regprocedure::text, md5(p.prosrc), pg_get_userbyid(p.proowner),"
                " p.prosecdef, p.proacl::text FROM pg_proc p"
                " JOIN pg_namespace n ON n.oid = p.pronamespace"
                " WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1"
            )
        ]
        namespaces = [
            tuple(row)
            for row in await conn.fetch(
                "SELECT nspname, pg_get_userbyid(nspowner), nspacl::text FROM pg_namespace"
                " ORDER BY 1"
            )
        ]
        large_objects = await conn.fetchval("SELECT count(*) FROM pg_largeobject_metadata")
        triggers = await conn.fetchval("SELECT count(*) FROM pg_trigger")
    finally:
        await conn.close()
    return {
        "data": data,
        "sequences": sequences,
        "schema": schema,
        "routines": routines,
        "namespaces": namespaces,
        "large_objects": large_objects,
        "triggers": triggers,
    }


async def cluster_fingerprint(info: PostgresConnectionInfo) -> dict[str, Any]:
    """Roles, databases, per-role settings and the server's configuration files."""
    conn = await admin.connect(info)
    try:
        roles = [
            tuple(row)
            for row in await conn.fetch(
                "SELECT rolname, rolsuper, rolcreaterole, rolcreatedb, rolcanlogin,"
                " rolbypassrls, ARRAY(SELECT b.rolname FROM pg_auth_members m"
                "   JOIN pg_roles b ON b.oid = m.roleid WHERE m.member = r.oid ORDER BY 1)::text"
                " FROM pg_roles r ORDER BY 1"
            )
        ]
        databases = [
            tuple(row)
            for row in await conn.fetch(
                "SELECT datname, pg_get_userbyid(datdba), datistemplate, datallowconn,"
                " datconnlimit, datacl::text FROM pg_database ORDER BY 1"
            )
        ]
        role_settings = [
            tuple(row)
            for row in await conn.fetch(
                "SELECT setdatabase, setrole, setconfig::text FROM pg_db_role_setting ORDER BY 1, 2"
            )
        ]
        files = [
            tuple(row)
            for row in await conn.fetch(
                "SELECT sourcefile, name, setting FROM pg_file_settings ORDER BY 1, 2"
            )
        ]
    finally:
        await conn.close()
    return {
        "roles": roles,
        "databases": databases,
        "role_settings": role_settings,
        "files": files,
    }


async def world(
    cluster: EmbeddedPostgresCluster, *sandboxes: PostgresSandbox
) -> list[dict[str, Any]]:
    """Fingerprints of the cluster and of each sandbox's database."""
    prints = [await cluster_fingerprint(cluster.admin)]
    for sandbox in sandboxes:
        prints.append(await database_fingerprint(cluster.admin.with_database(sandbox.name)))
    return prints


async def call(server: Any, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    async with mcp.Client(server.server()) as client:
        result = await client.call_tool(tool, arguments)
    text = "\n".join(
        block.text for block in result.content if isinstance(block, mcp.types.TextContent)
    )
    return bool(result.is_error), text


# --- read-only mode -------------------------------------------------------------------------

GUARD = "not allowed in read-only mode"
READ_ONLY_TRANSACTION = "in a read-only transaction"
DENIED_OR_READ_ONLY = "permission denied|in a read-only transaction"
"""Expected messages are regular expressions, matched ignoring case."""

ATTACKS: list[Any] = [
    pytest.param("INSERT INTO customers VALUES (9, 'Mallory')", GUARD, id="insert"),
    pytest.param("UPDATE customers SET name = 'Mallory'", GUARD, id="update"),
    pytest.param("DELETE FROM orders", GUARD, id="delete"),
    pytest.param("TRUNCATE orders", GUARD, id="truncate"),
    pytest.param(
        "MERGE INTO counters c USING (SELECT 1) s ON true WHEN MATCHED THEN DELETE",
        GUARD,
        id="merge",
    ),
    pytest.param("CREATE TABLE intruder (a integer)", GUARD, id="create-table"),
    pytest.param("DROP TABLE orders", GUARD, id="drop-table"),
    pytest.param("ALTER TABLE customers ADD COLUMN evil integer", GUARD, id="alter-table"),
    pytest.param(
        "CREATE FUNCTION evil() RETURNS integer LANGUAGE sql AS 'SELECT 1'",
        GUARD,
        id="create-function",
    ),
    pytest.param("COPY customers TO PROGRAM 'touch {marker}'", GUARD, id="copy-to-program"),
    pytest.param("COPY customers FROM PROGRAM 'echo 9,Mallory'", GUARD, id="copy-from-program"),
    pytest.param("SET ROLE {admin}", GUARD, id="set-role-admin"),
    pytest.param("SET SESSION AUTHORIZATION {admin}", GUARD, id="set-session-authorization"),
    pytest.param("RESET ROLE", GUARD, id="reset-role"),
    pytest.param(
        "SET default_transaction_read_only = off; INSERT INTO customers VALUES (9, 'x')",
        GUARD,
        id="read-only-off-then-insert",
    ),
    pytest.param("COMMIT; INSERT INTO customers VALUES (9, 'x')", GUARD, id="commit-then-insert"),
    pytest.param("ROLLBACK; BEGIN; DELETE FROM orders", GUARD, id="rollback-begin-delete"),
    pytest.param(
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE; DELETE FROM orders",
        GUARD,
        id="session-characteristics",
    ),
    pytest.param("SET TRANSACTION READ WRITE; DELETE FROM orders", GUARD, id="transaction-rw"),
    pytest.param("SAVEPOINT s; DELETE FROM orders; RELEASE s", GUARD, id="savepoint"),
    pytest.param("PREPARE TRANSACTION 'evil'", GUARD, id="prepare-transaction"),
    pytest.param("select 1; drop table orders", "Statement 2 of 2: DROP", id="stacked-drop"),
    pytest.param("/* looks harmless */ -- x\n DELETE FROM orders", GUARD, id="comment-hidden"),
    pytest.param("SELECT bump_counter()", READ_ONLY_TRANSACTION, id="security-definer"),
    pytest.param("SELECT pg_terminate_backend({admin_pid})", GUARD, id="terminate-admin"),
    pytest.param("SELECT lo_import('/etc/passwd')", GUARD, id="lo-import"),
    pytest.param("SELECT pg_read_file('/etc/passwd')", GUARD, id="read-file"),
    pytest.param("CREATE TEMP TABLE scratch (a integer)", GUARD, id="temp-table"),
    pytest.param("ALTER SYSTEM SET work_mem = '1GB'", GUARD, id="alter-system"),
    pytest.param("VACUUM FULL customers", GUARD, id="vacuum-full"),
    pytest.param("DO $$ BEGIN DELETE FROM orders; END $$", GUARD, id="do-block"),
    pytest.param("SELECT nextval('ticket_seq')", DENIED_OR_READ_ONLY, id="nextval"),
    pytest.param("SELECT setval('ticket_seq', 1000)", DENIED_OR_READ_ONLY, id="setval"),
    pytest.param("LISTEN evil", GUARD, id="listen"),
    pytest.param("NOTIFY evil, 'payload'", GUARD, id="notify"),
    pytest.param("DROP DATABASE {other}", GUARD, id="drop-other-database"),
    pytest.param("SELECT pg_sleep(5)", "statement timeout", id="sleep-past-timeout"),
    pytest.param(
        "SELECT set_config('statement_timeout', '0', false); SELECT pg_sleep(30)",
        GUARD,
        id="lift-timeout-then-sleep",
    ),
    pytest.param("SET statement_timeout = 0; SELECT pg_sleep(30)", GUARD, id="set-timeout"),
    pytest.param(
        'SET U&"statement\\005ftimeout" = 0; SELECT pg_sleep(30)', GUARD, id="unicode-setting"
    ),
    pytest.param(
        "WITH gone AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM gone",
        GUARD,
        id="writing-cte",
    ),
    pytest.param("SELECT * INTO stolen FROM customers", GUARD, id="select-into"),
    pytest.param("EXPLAIN ANALYZE DELETE FROM orders", GUARD, id="explain-analyze"),
    pytest.param("SELECT set_config('role', '{admin}', false)", GUARD, id="set-config-role"),
    pytest.param(
        "SELECT query_to_xml('DELETE FROM orders RETURNING 1', false, false, '')",
        GUARD,
        id="dynamic-sql",
    ),
    pytest.param("LOCK TABLE customers IN ACCESS EXCLUSIVE MODE", GUARD, id="lock-table"),
    pytest.param("CREATE ROLE evil SUPERUSER LOGIN", GUARD, id="create-role"),
    pytest.param("GRANT ALL ON customers TO PUBLIC", GUARD, id="grant"),
    pytest.param("COMMENT ON TABLE customers IS 'pwned'", GUARD, id="comment-on"),
    pytest.param("CALL anything()", GUARD, id="call"),
    pytest.param("REFRESH MATERIALIZED VIEW anything", GUARD, id="refresh"),
    pytest.param("SELECT pg_advisory_lock(1); COMMIT", GUARD, id="commit-at-end"),
]


@pytest.mark.parametrize(("sql", "expected"), ATTACKS)
async def test_read_only_attacks_are_refused_and_change_nothing(
    cluster: EmbeddedPostgresCluster,
    view: PostgresSandbox,
    other: PostgresSandbox,
    marker: Path,
    sql: str,
    expected: str,
) -> None:
    server = sql_server(view, statement_timeout=TIMEOUT)
    holder = await admin.connect(cluster.admin)  # a superuser session to aim at
    try:
        admin_pid = await holder.fetchval("SELECT pg_backend_pid()")
        before = await world(cluster, view, other)
        attack = sql.format(
            marker=marker, admin=cluster.admin.user, other=other.name, admin_pid=admin_pid
        )
        is_error, text = await call(server, "execute_sql", {"sql": attack})
        assert is_error, text
        assert text.startswith("Error: ")
        assert re.search(expected, text, re.IGNORECASE), text
        assert await world(cluster, view, other) == before
        assert not marker.exists()
        assert await holder.fetchval("SELECT 1") == 1  # the admin's session survived
    finally:
        await holder.close()
    # The server keeps serving after each attack.
    is_error, text = await call(
        server, "execute_sql", {"sql": "SELECT count(*) AS n FROM customers"}
    )
    assert not is_error
    assert '"n": 3' in text


EXPLAIN_ATTACKS: list[Any] = [
    pytest.param(
        {"sql": "SELECT 1; DROP TABLE orders"}, "exactly one statement", id="explain-stacked"
    ),
    pytest.param({"sql": "DELETE FROM orders", "analyze": True}, GUARD, id="explain-delete"),
    pytest.param({"sql": "DROP TABLE orders"}, "explains one SELECT", id="explain-ddl"),
    pytest.param(
        {"sql": "SELECT bump_counter()", "analyze": True},
        READ_ONLY_TRANSACTION,
        id="explain-definer",
    ),
    pytest.param(
        {
            "sql": "SELECT 1",
            "hypothetical_indexes": [{"table": "x; DROP TABLE orders", "columns": ["a"]}],
        },
        "must be a table name",
        id="explain-hypothetical-injection",
    ),
]


@pytest.mark.parametrize(("arguments", "expected"), EXPLAIN_ATTACKS)
async def test_explain_attacks_are_refused_and_change_nothing(
    cluster: EmbeddedPostgresCluster,
    view: PostgresSandbox,
    other: PostgresSandbox,
    arguments: dict[str, Any],
    expected: str,
) -> None:
    server = sql_server(view, statement_timeout=TIMEOUT)
    before = await world(cluster, view, other)
    is_error, text = await call(server, "explain_query", arguments)
    assert is_error, text
    assert re.search(expected, text, re.IGNORECASE), text
    assert await world(cluster, view, other) == before


# Without the statement check, the read-only transaction and the reader's privileges still hold.
UNGUARDED: list[Any] = [
    pytest.param("INSERT INTO customers VALUES (9, 'Mallory')", READ_ONLY_TRANSACTION, id="insert"),
    pytest.param("UPDATE customers SET name = 'Mallory'", READ_ONLY_TRANSACTION, id="update"),
    pytest.param("DELETE FROM orders", READ_ONLY_TRANSACTION, id="delete"),
    pytest.param("TRUNCATE orders", READ_ONLY_TRANSACTION, id="truncate"),
    pytest.param("CREATE TABLE intruder (a integer)", READ_ONLY_TRANSACTION, id="create-table"),
    pytest.param("CREATE TEMP TABLE scratch (a integer)", READ_ONLY_TRANSACTION, id="temp-table"),
    pytest.param("DROP TABLE orders", READ_ONLY_TRANSACTION, id="drop-table"),
    pytest.param("COPY customers TO PROGRAM 'touch {marker}'", "permission denied", id="copy"),
    pytest.param("SET ROLE {admin}", "permission denied", id="set-role"),
    pytest.param("SET SESSION AUTHORIZATION {admin}", "permission denied", id="session-auth"),
    pytest.param("SET TRANSACTION READ WRITE", "before any query", id="transaction-rw"),
    pytest.param(
        "COMMIT; SET default_transaction_read_only = off; INSERT INTO customers VALUES (9, 'x')",
        "permission denied",
        id="commit-then-insert",
    ),
    pytest.param(
        "COMMIT; DELETE FROM orders; SELECT 1", "in a read-only transaction", id="commit-delete"
    ),
    # Statements that cannot run in a transaction never get a chance to check privileges here
    # (the owner role test of the sandbox suite checks those privileges directly).
    pytest.param(
        "COMMIT; DROP DATABASE {other}",
        "must be owner|in a read-only transaction|inside a transaction block",
        id="drop-other-database",
    ),
    pytest.param(
        "ALTER SYSTEM SET work_mem = '1GB'",
        "permission denied|inside a transaction block",
        id="alter-system",
    ),
    pytest.param("COMMIT; VACUUM FULL customers", "inside a transaction block", id="vacuum-full"),
    pytest.param("CREATE ROLE evil", READ_ONLY_TRANSACTION, id="create-role"),
    pytest.param("DO $$ BEGIN DELETE FROM orders; END $$", READ_ONLY_TRANSACTION, id="do-block"),
    pytest.param(
        "WITH gone AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM gone",
        READ_ONLY_TRANSACTION,
        id="writing-cte",
    ),
    pytest.param("SELECT * INTO stolen FROM customers", READ_ONLY_TRANSACTION, id="select-into"),
    pytest.param("EXPLAIN ANALYZE DELETE FROM orders", READ_ONLY_TRANSACTION, id="explain-analyze"),
    pytest.param(
        "SELECT set_config('role', '{admin}', false)", "permission denied", id="set-config-role"
    ),
    pytest.param(
        "SELECT query_to_xml('DELETE FROM orders RETURNING 1', false, false, '')",
        "not allowed in a non-volatile function|in a read-only transaction",
        id="dynamic-sql",
    ),
    pytest.param("SELECT lo_import('/etc/passwd')", "permission denied", id="lo-import"),
    pytest.param("SELECT pg_read_file('/etc/passwd')", "permission denied", id="read-file"),
]


@pytest.mark.parametrize(("sql", "expected"), UNGUARDED)
async def test_inner_layers_hold_without_the_statement_check(
    cluster: EmbeddedPostgresCluster,
    view: PostgresSandbox,
    other: PostgresSandbox,
    marker: Path,
    sql: str,
    expected: str,
) -> None:
    session = sql_server(view, statement_timeout=TIMEOUT).context
    assert isinstance(session, SqlSession)
    attack = sql.format(marker=marker, admin=cluster.admin.user, other=other.name)
    before = await world(cluster, view, other)

    async def unchecked(conn: PostgresConnection) -> CappedRows:
        return await run_capped(session, conn, attack, AnswerLimits(10))

    with pytest.raises(SqlFailure) as refused:
        await session.run(unchecked)
    assert re.search(expected, str(refused.value), re.IGNORECASE), str(refused.value)
    assert await world(cluster, view, other) == before
    assert not marker.exists()


# --- unrestricted mode ----------------------------------------------------------------------


@pytest_asyncio.fixture(loop_scope="module")
async def clone(snapshot: ClusterPostgresSnapshot) -> AsyncIterator[PostgresSandbox]:
    made = await snapshot.clone()
    yield made
    await made.destroy()


async def test_unrestricted_mode_writes_its_own_clone(
    cluster: EmbeddedPostgresCluster, clone: PostgresSandbox, snapshot: ClusterPostgresSnapshot
) -> None:
    server = sql_server(clone, access="unrestricted", statement_timeout=TIMEOUT)
    is_error, text = await call(
        server,
        "execute_sql",
        {
            "sql": "INSERT INTO customers VALUES (9, 'Zed'); CREATE TABLE notes (a integer);"
            " SELECT nextval('ticket_seq') AS ticket"
        },
    )
    assert not is_error, text
    assert '"ticket": 42' in text
    conn = await admin.connect(cluster.admin.with_database(clone.name))
    try:
        assert await conn.fetchval("SELECT name FROM customers WHERE id = 9") == "Zed"
        assert await conn.fetchval("SELECT to_regclass('notes') IS NOT NULL")
        owners = await conn.fetch(
            "SELECT relname, pg_get_userbyid(relowner) AS owner FROM pg_class"
            " WHERE relname IN ('customers', 'notes') ORDER BY relname"
        )
    finally:
        await conn.close()
    info = await clone.owner_connection()
    # The seed's table belongs to the seed role, whose privileges the clone's role inherits;
    # what the judge made belongs to the clone's role. Neither is the administrator.
    assert [row["owner"] for row in owners] == [next(iter(clone.stand_ins())), info.user]
    assert cluster.admin.user not in clone.stand_ins()
    # A failing call keeps nothing.
    is_error, text = await call(server, "execute_sql", {"sql": "DELETE FROM orders; SELECT 1/0"})
    assert is_error
    assert "division by zero" in text
    fresh = await snapshot.clone()
    try:
        conn = await admin.connect(cluster.admin.with_database(clone.name))
        try:
            assert await conn.fetchval("SELECT count(*) FROM orders") == 2
        finally:
            await conn.close()
        # The snapshot did not see any of it.
        rows = await database_fingerprint(cluster.admin.with_database(fresh.name))
        assert "public.notes" not in rows["data"]
    finally:
        await fresh.destroy()


UNRESTRICTED_ATTACKS: list[Any] = [
    pytest.param(
        "COMMIT; DROP DATABASE {other}",
        "must be owner|inside a transaction block",
        id="drop-other-database",
    ),
    pytest.param("DROP DATABASE {other}", "cannot run inside a transaction", id="drop-in-tx"),
    pytest.param(
        "ALTER DATABASE {template} ALLOW_CONNECTIONS true", "must be owner", id="alter-template"
    ),
    pytest.param("ALTER DATABASE {template} RENAME TO gone", "must be owner", id="rename-template"),
    pytest.param(
        "COPY customers TO PROGRAM 'touch {marker}'", "permission denied", id="copy-to-program"
    ),
    pytest.param(
        "COPY customers FROM PROGRAM 'echo 9,x'", "permission denied", id="copy-from-program"
    ),
    pytest.param("CREATE ROLE evil SUPERUSER", "permission denied", id="create-role"),
    pytest.param("SET ROLE {admin}", "permission denied", id="set-role-admin"),
    pytest.param("SET SESSION AUTHORIZATION {admin}", "permission denied", id="session-auth"),
    pytest.param("ALTER ROLE CURRENT_USER SUPERUSER", "permission denied", id="alter-own-role"),
    pytest.param(
        "GRANT pg_execute_server_program TO CURRENT_USER", "permission denied", id="grant-self"
    ),
    pytest.param(
        "COMMIT; CREATE DATABASE evil",
        "permission denied|inside a transaction block",
        id="create-database",
    ),
    pytest.param(
        "ALTER SYSTEM SET work_mem = '1GB'",
        "permission denied|inside a transaction block",
        id="alter-system",
    ),
    pytest.param(
        "SELECT pg_terminate_backend({admin_pid})", "permission denied", id="terminate-admin"
    ),
    pytest.param("SELECT pg_read_file('/etc/passwd')", "permission denied", id="read-file"),
    pytest.param("CREATE EXTENSION IF NOT EXISTS vector", "permission denied", id="extension"),
]


BOUNDS = "not allowed on this server"
"""What the statement check says in unrestricted mode (the owner role's privileges decide the
rest: the same attacks run unchecked must still fail on them)."""


@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
@pytest.mark.parametrize(("sql", "expected"), UNRESTRICTED_ATTACKS)
async def test_unrestricted_mode_cannot_reach_beyond_its_clone(
    cluster: EmbeddedPostgresCluster,
    clone: PostgresSandbox,
    other: PostgresSandbox,
    snapshot: ClusterPostgresSnapshot,
    marker: Path,
    sql: str,
    expected: str,
    checked: bool,
) -> None:
    server = sql_server(clone, access="unrestricted", statement_timeout=TIMEOUT)
    await clone.owner_connection()  # the role exists before the cluster is fingerprinted
    holder = await admin.connect(cluster.admin)
    try:
        admin_pid = await holder.fetchval("SELECT pg_backend_pid()")
        before = await world(cluster, other)
        fresh = await snapshot.clone()
        frozen_before = await database_fingerprint(cluster.admin.with_database(fresh.name))
        await fresh.destroy()
        attack = sql.format(
            marker=marker,
            admin=cluster.admin.user,
            other=other.name,
            template=snapshot.name,
            admin_pid=admin_pid,
        )
        if checked:
            is_error, text = await call(server, "execute_sql", {"sql": attack})
            assert is_error, text
            assert re.search(f"{expected}|{BOUNDS}", text, re.IGNORECASE), text
            assert re.match(r"Error: \S", text)
        else:
            session = server.context

            async def unchecked(conn: PostgresConnection) -> CappedRows:
                return await run_capped(session, conn, attack, AnswerLimits(10))

            with pytest.raises(SqlFailure) as refused:
                await session.run(unchecked)
            assert re.search(expected, str(refused.value), re.IGNORECASE), str(refused.value)
        assert await world(cluster, other) == before
        assert not marker.exists()
        assert await holder.fetchval("SELECT 1") == 1
        fresh = await snapshot.clone()
        try:
            assert await database_fingerprint(cluster.admin.with_database(fresh.name)) == (
                frozen_before
            )
        finally:
            await fresh.destroy()
    finally:
        await holder.close()


async def test_unrestricted_access_to_a_view_is_refused(view: PostgresSandbox) -> None:
    with pytest.raises(ValueError, match="read-only view"):
        sql_server(view, access="unrestricted")
