"""The judges' SQL MCP server driven through real MCP client sessions (in-memory, and over
stdio), its answers checked against the database's real state read through an administrative
connection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp
import pytest
import pytest_asyncio

import mcp_servers.sql.analysis
from mcp_servers.serving import ToolServer
from mcp_servers.sql.__main__ import parser
from mcp_servers.sql.judge_server import sql_server
from sandboxes.postgres.embedded import EmbeddedPostgresCluster
from sandboxes.postgres.provider import ClusterPostgresProvider, ClusterPostgresSnapshot
from sandboxes.postgres.sandbox import PostgresSandbox
from tests.sandboxes.postgres.helpers import fetch, write_task

if TYPE_CHECKING:
    from sandboxes.postgres.sandbox import PostgresConnection

pytestmark = pytest.mark.asyncio(loop_scope="module")

REPOSITORY = Path(__file__).resolve().parents[3]

SEED = """
CREATE SCHEMA shop;
CREATE TABLE shop.customers (
    id integer PRIMARY KEY, name text NOT NULL, email text UNIQUE, joined date DEFAULT '2024-01-01'
);
CREATE TABLE shop.orders (
    id serial PRIMARY KEY,
    customer_id integer REFERENCES shop.customers (id),
    total numeric(10, 2) CHECK (total >= 0),
    placed timestamptz
);
CREATE INDEX orders_placed ON shop.orders (placed);
CREATE INDEX orders_placed_again ON shop.orders (placed);
ALTER TABLE shop.orders ADD CONSTRAINT orders_id_positive CHECK (id > 0) NOT VALID;
CREATE VIEW shop.big_spenders AS
    SELECT customer_id, sum(total) AS spent FROM shop.orders GROUP BY customer_id;
CREATE MATERIALIZED VIEW shop.order_counts AS
    SELECT customer_id, count(*) AS n FROM shop.orders GROUP BY customer_id;
CREATE SEQUENCE shop.tickets AS smallint MAXVALUE 100;
SELECT setval('shop.tickets', 90);
CREATE TABLE shop.notes (id integer, body jsonb, tags text[], ratio float8, raw bytea);
INSERT INTO shop.customers VALUES
    (1, 'Ada', 'ada@example.org', '2023-05-01'), (2, 'Bilal', NULL, DEFAULT),
    (3, 'Chén', 'chen@example.org', '2022-12-24');
INSERT INTO shop.orders (customer_id, total, placed)
    SELECT 1 + i % 3, i * 1.25, timestamptz '2024-03-01 12:00+00' + i * interval '1 hour'
    FROM generate_series(1, 1200) AS i;
INSERT INTO shop.notes VALUES (1, '{"k": [1, 2]}', ARRAY['a', 'b'], 0.5, '\\x0102');
-- stands in for pg_stat_statements (the embedded server does not ship the extension)
CREATE SCHEMA stats;
CREATE VIEW stats.pg_stat_statements AS
    SELECT * FROM (VALUES
        ('SELECT slow()', 5::bigint, 900.0::float8, 180.0::float8, 5::bigint,
         10::bigint, 500::bigint, 0::bigint, 0::bigint, 0::bigint),
        ('SELECT many()', 1000::bigint, 1000.0::float8, 1.0::float8, 1000::bigint,
         5000::bigint, 1::bigint, 0::bigint, 0::bigint, 0::bigint),
        ('SELECT spill()', 2::bigint, 10.0::float8, 5.0::float8, 2::bigint,
         0::bigint, 0::bigint, 0::bigint, 9000::bigint, 9000::bigint)
    ) AS s(query, calls, total_exec_time, mean_exec_time, rows, shared_blks_hit,
           shared_blks_read, shared_blks_written, temp_blks_read, temp_blks_written)
    CROSS JOIN (SELECT oid AS dbid FROM pg_database WHERE datname = current_database()) d;
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def snapshot(
    provider: ClusterPostgresProvider, tmp_path_factory: pytest.TempPathFactory
) -> ClusterPostgresSnapshot:
    task = write_task(tmp_path_factory.mktemp("server") / "shop", SEED)
    sandbox = await provider.create(*task)
    return await sandbox.freeze()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def view(snapshot: ClusterPostgresSnapshot) -> PostgresSandbox:
    return await snapshot.clone(writable=False)


async def admin_rows(cluster: EmbeddedPostgresCluster, sandbox: PostgresSandbox, sql: str) -> Any:
    """Rows read independently of the server, as the administrator."""
    return await fetch(cluster.admin.with_database(sandbox.name), sql)


async def call(server: ToolServer[Any], tool: str, arguments: dict[str, Any]) -> Any:
    """The JSON answer of a successful call."""
    async with mcp.Client(server.server()) as client:
        result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, text
    return json.loads(text)


async def call_error(server: ToolServer[Any], tool: str, arguments: dict[str, Any]) -> str:
    """The text of a call that must fail."""
    async with mcp.Client(server.server()) as client:
        result = await client.call_tool(tool, arguments)
    text: str = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error, text
    assert text.startswith("Error: ")
    return text


EVERY_TOOL = {
    "list_schemas",
    "list_objects",
    "get_object_details",
    "execute_sql",
    "explain_query",
    "analyze_db_health",
    "get_top_queries",
    "analyze_workload_indexes",
    "analyze_query_indexes",
}


async def test_tools_and_annotations(view: PostgresSandbox, snapshot: Any) -> None:
    reader = sql_server(view, max_rows=7, statement_timeout=3)
    async with mcp.Client(reader.server()) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == EVERY_TOOL
    for tool in tools.values():
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is False
        assert tool.description
    execute = tools["execute_sql"].description or ""
    assert "7 rows" in execute
    assert "3 s" in execute
    assert "READ ONLY" in execute
    assert tools["execute_sql"].input_schema["required"] == ["sql"]
    assert set(tools["explain_query"].input_schema["properties"]) == {
        "sql",
        "analyze",
        "hypothetical_indexes",
    }
    clone = await snapshot.clone()
    try:
        writer = sql_server(clone, access="unrestricted")
        async with mcp.Client(writer.server()) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        annotations = tools["execute_sql"].annotations
        assert annotations is not None
        assert annotations.read_only_hint is False
        assert annotations.destructive_hint is True
        assert annotations.idempotent_hint is False
        # explain_query rolls back even here
        assert tools["explain_query"].annotations.read_only_hint is True  # type: ignore[union-attr]
    finally:
        await clone.destroy()


async def test_list_schemas(cluster: EmbeddedPostgresCluster, view: PostgresSandbox) -> None:
    schemas = await call(sql_server(view), "list_schemas", {})
    real = await admin_rows(
        cluster,
        view,
        "SELECT nspname, pg_get_userbyid(nspowner) FROM pg_namespace"
        " WHERE nspname !~ '^pg_(toast_)?temp_'",
    )
    assert {(s["schema_name"], s["schema_owner"]) for s in schemas} == {tuple(r) for r in real}
    kinds = {s["schema_name"]: s["schema_type"] for s in schemas}
    assert kinds["shop"] == kinds["public"] == "User Schema"
    assert kinds["pg_catalog"] == "System Schema"
    assert kinds["information_schema"] == "System Information Schema"
    assert schemas[0]["schema_type"] == "User Schema"


async def test_list_objects(cluster: EmbeddedPostgresCluster, view: PostgresSandbox) -> None:
    server = sql_server(view)
    tables = await call(server, "list_objects", {"schema_name": "shop"})
    real = await admin_rows(
        cluster,
        view,
        "SELECT table_name FROM information_schema.tables"
        " WHERE table_schema = 'shop' AND table_type = 'BASE TABLE' ORDER BY 1",
    )
    assert [t["name"] for t in tables] == [r[0] for r in real] == ["customers", "notes", "orders"]
    assert all(t["type"] == "table" and t["schema"] == "shop" for t in tables)
    views = await call(server, "list_objects", {"schema_name": "shop", "object_type": "view"})
    assert [(v["name"], v["type"]) for v in views] == [
        ("big_spenders", "view"),
        ("order_counts", "materialized view"),
    ]
    sequences = await call(
        server, "list_objects", {"schema_name": "shop", "object_type": "sequence"}
    )
    assert {(s["name"], s["data_type"]) for s in sequences} == {
        ("orders_id_seq", "integer"),
        ("tickets", "smallint"),
    }
    extensions = await call(
        server, "list_objects", {"schema_name": "shop", "object_type": "extension"}
    )
    real = await admin_rows(cluster, view, "SELECT extname, extversion FROM pg_extension")
    assert {(e["name"], e["version"]) for e in extensions} == {tuple(r) for r in real}
    assert "unsupported object_type" in await call_error(
        server, "list_objects", {"schema_name": "shop", "object_type": "index"}
    )
    assert "does not exist" in await call_error(server, "list_objects", {"schema_name": "nope"})


async def test_get_object_details(cluster: EmbeddedPostgresCluster, view: PostgresSandbox) -> None:
    server = sql_server(view)
    orders = await call(
        server, "get_object_details", {"schema_name": "shop", "object_name": "orders"}
    )
    columns = await admin_rows(
        cluster,
        view,
        "SELECT column_name, is_nullable = 'YES', column_default FROM information_schema.columns"
        " WHERE table_schema = 'shop' AND table_name = 'orders' ORDER BY ordinal_position",
    )
    assert [(c["column"], c["nullable"], c["default"]) for c in orders["columns"]] == [
        tuple(r) for r in columns
    ]
    assert orders["columns"][2]["data_type"] == "numeric(10,2)"
    constraints = {c["name"]: c for c in orders["constraints"]}
    assert constraints["orders_customer_id_fkey"]["type"] == "FOREIGN KEY"
    assert constraints["orders_customer_id_fkey"]["columns"] == ["customer_id"]
    assert "REFERENCES shop.customers(id)" in constraints["orders_customer_id_fkey"]["definition"]
    assert constraints["orders_id_positive"]["validated"] is False
    assert constraints["orders_pkey"]["type"] == "PRIMARY KEY"
    indexes = await admin_rows(
        cluster, view, "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'orders'"
    )
    assert {(i["name"], i["definition"]) for i in orders["indexes"]} == {tuple(r) for r in indexes}
    spenders = await call(
        server,
        "get_object_details",
        {"schema_name": "shop", "object_name": "big_spenders", "object_type": "view"},
    )
    assert "sum(total)" in spenders["definition"]
    assert [c["column"] for c in spenders["columns"]] == ["customer_id", "spent"]
    tickets = await call(
        server,
        "get_object_details",
        {"schema_name": "shop", "object_name": "tickets", "object_type": "sequence"},
    )
    assert (tickets["last_value"], tickets["max_value"], tickets["data_type"]) == (
        90,
        100,
        "smallint",
    )
    serial = await call(
        server,
        "get_object_details",
        {"schema_name": "shop", "object_name": "orders_id_seq", "object_type": "sequence"},
    )
    assert serial["owned_by"] == "shop.orders.id"
    assert serial["last_value"] == 1200
    plpgsql = await call(
        server,
        "get_object_details",
        {"schema_name": "", "object_name": "plpgsql", "object_type": "extension"},
    )
    version = await admin_rows(
        cluster, view, "SELECT extversion FROM pg_extension WHERE extname = 'plpgsql'"
    )
    assert plpgsql["version"] == version[0][0]
    assert "no table named 'shop.nope'" in await call_error(
        server, "get_object_details", {"schema_name": "shop", "object_name": "nope"}
    )


async def test_execute_sql(cluster: EmbeddedPostgresCluster, view: PostgresSandbox) -> None:
    server = sql_server(view, max_rows=5)
    answer = await call(server, "execute_sql", {"sql": "SELECT * FROM shop.customers ORDER BY id"})
    real = await admin_rows(cluster, view, "SELECT id, name, email FROM shop.customers ORDER BY id")
    assert answer["columns"] == ["id", "name", "email", "joined"]
    assert [(r["id"], r["name"], r["email"]) for r in answer["rows"]] == [tuple(r) for r in real]
    assert answer["rows"][2]["joined"] == "2022-12-24"
    assert answer["row_count"] == 3
    assert "notice" not in answer
    # The row cap: the first rows, the real total, and how many were left out.
    capped = await call(server, "execute_sql", {"sql": "SELECT id FROM shop.orders ORDER BY id"})
    total = (await admin_rows(cluster, view, "SELECT count(*) FROM shop.orders"))[0][0]
    assert [r["id"] for r in capped["rows"]] == [1, 2, 3, 4, 5]
    assert capped["row_count"] == total == 1200
    assert capped["rows_omitted"] == 1195
    assert "1195 rows were omitted" in capped["notice"]
    # Several statements: the last one's rows. JSON-safe values.
    values = await call(
        server,
        "execute_sql",
        {
            "sql": "SET search_path = shop; SELECT n.*, o.total, o.placed, 1 AS id"
            " FROM notes n, orders o WHERE o.id = 1"
        },
    )
    row = values["rows"][0]
    assert values["columns"] == ["id", "body", "tags", "ratio", "raw", "total", "placed", "id_2"]
    assert row["body"] == {"k": [1, 2]}
    assert row["tags"] == ["a", "b"]
    assert row["ratio"] == 0.5
    assert row["raw"] == "\\x0102"
    assert row["total"] == "1.25"
    assert row["placed"].startswith("2024-03-01T13:00:00")
    assert row["id_2"] == 1
    status = await call(server, "execute_sql", {"sql": "SET enable_seqscan = off"})
    assert status == {"status": "SET"}
    # Errors carry PostgreSQL's message and position.
    text = await call_error(server, "execute_sql", {"sql": "SELECT nope FROM shop.customers"})
    assert 'column "nope" does not exist' in text
    assert "LINE 1:" in text
    assert "no statement" in await call_error(server, "execute_sql", {"sql": " -- nothing"})
    # A rolled-back SET leaves nothing behind for the next call.
    after = await call(server, "execute_sql", {"sql": "SHOW enable_seqscan"})
    assert after["rows"][0]["enable_seqscan"] == "on"


async def test_explain_query(view: PostgresSandbox) -> None:
    server = sql_server(view)
    async with mcp.Client(server.server()) as client:
        plain = await client.call_tool(
            "explain_query", {"sql": "SELECT * FROM shop.orders WHERE placed > now()"}
        )
        analyzed = await client.call_tool(
            "explain_query", {"sql": "SELECT count(*) FROM shop.customers;", "analyze": True}
        )
        parameters = await client.call_tool(
            "explain_query", {"sql": "SELECT * FROM shop.orders WHERE id = $1"}
        )
        hypothetical = await client.call_tool(
            "explain_query",
            {
                "sql": "SELECT * FROM shop.customers WHERE name = 'Ada'",
                "hypothetical_indexes": [{"table": "shop.customers", "columns": ["name"]}],
            },
        )
    plan = plain.content[0].text  # type: ignore[union-attr]
    assert not plain.is_error
    assert "on orders" in plan
    assert "cost=" in plan
    assert "actual time" not in plan
    measured = analyzed.content[0].text  # type: ignore[union-attr]
    assert not analyzed.is_error
    assert "actual time=" in measured
    assert "Execution Time" in measured
    assert parameters.is_error
    assert "$1-style parameters" in parameters.content[0].text  # type: ignore[union-attr]
    assert hypothetical.is_error
    assert "hypopg" in hypothetical.content[0].text  # type: ignore[union-attr]


async def test_analyze_db_health(view: PostgresSandbox) -> None:
    server = sql_server(view)
    report = await call(server, "analyze_db_health", {})
    assert set(report) == {
        "index",
        "connection",
        "vacuum",
        "sequence",
        "replication",
        "buffer",
        "constraint",
    }
    index = report["index"]
    assert index["duplicate_indexes"][0]["indexes"] == ["orders_placed", "orders_placed_again"]
    assert index["invalid_indexes"] == []
    assert [f["constraint"] for f in index["foreign_keys_without_index"]] == [
        "orders_customer_id_fkey"
    ]
    near = report["sequence"]["sequences_near_limit"]
    assert [(s["sequence"], s["used_fraction"]) for s in near] == [("tickets", 0.899)]
    assert [c["constraint"] for c in report["constraint"]["constraints_not_validated"]] == [
        "orders_id_positive"
    ]
    assert report["replication"]["in_recovery"] is False
    assert report["connection"]["max_connections"] > 0
    assert {t["table"] for t in report["vacuum"]["tables"]} >= {"customers", "orders"}
    only = await call(server, "analyze_db_health", {"health_type": "sequence, constraint"})
    assert set(only) == {"sequence", "constraint"}
    assert "unsupported health_type" in await call_error(
        server, "analyze_db_health", {"health_type": "karma"}
    )


async def test_get_top_queries(view: PostgresSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    server = sql_server(view)
    assert "pg_stat_statements extension, which is not installed" in await call_error(
        server, "get_top_queries", {}
    )

    async def stand_in(conn: PostgresConnection) -> str:
        return "stats"

    monkeypatch.setattr(mcp_servers.sql.analysis, "statements_schema", stand_in)
    by_total = await call(server, "get_top_queries", {"sort_by": "total_time", "limit": 2})
    assert [q["query"] for q in by_total["queries"]] == ["SELECT many()", "SELECT slow()"]
    by_mean = await call(server, "get_top_queries", {"sort_by": "mean_time"})
    assert by_mean["queries"][0]["query"] == "SELECT slow()"
    assert by_mean["queries"][0]["mean_exec_time_ms"] == "180.000"
    by_resources = await call(server, "get_top_queries", {})
    assert by_resources["queries"][0]["query"] == "SELECT spill()"
    assert "limit must be between" in await call_error(server, "get_top_queries", {"limit": 0})


async def test_index_advisers_say_they_are_not_supported(view: PostgresSandbox) -> None:
    server = sql_server(view)
    for tool, arguments in (
        ("analyze_workload_indexes", {}),
        ("analyze_query_indexes", {"queries": ["SELECT 1"]}),
    ):
        text = await call_error(server, tool, arguments)
        assert f"{tool} is not supported by this server" in text


async def test_unrestricted_mode_commits_to_its_clone(
    cluster: EmbeddedPostgresCluster, snapshot: ClusterPostgresSnapshot
) -> None:
    clone = await snapshot.clone()
    try:
        server = sql_server(clone, access="unrestricted", max_rows=2)
        inserted = await call(
            server,
            "execute_sql",
            {"sql": "INSERT INTO shop.customers VALUES (4, 'Dana') RETURNING id, name"},
        )
        assert inserted["rows"] == [{"id": 4, "name": "Dana"}]
        updated = await call(server, "execute_sql", {"sql": "UPDATE shop.orders SET total = 0"})
        assert updated == {"status": "UPDATE 1200"}
        real = await admin_rows(cluster, clone, "SELECT count(*) FROM shop.orders WHERE total = 0")
        assert real[0][0] == 1200
        # explain_query with analyze runs the statement, then rolls it back.
        async with mcp.Client(server.server()) as client:
            result = await client.call_tool(
                "explain_query", {"sql": "DELETE FROM shop.orders", "analyze": True}
            )
        assert not result.is_error
        assert (await admin_rows(cluster, clone, "SELECT count(*) FROM shop.orders"))[0][0] == 1200
        # Each call starts from a fresh session: settings and temporary tables do not survive.
        await call(server, "execute_sql", {"sql": "SET search_path = shop"})
        await call(server, "execute_sql", {"sql": "CREATE TEMP TABLE scratch (a integer)"})
        shown = await call(server, "execute_sql", {"sql": "SHOW search_path"})
        assert shown["rows"][0]["search_path"] != "shop"
        assert "does not exist" in await call_error(
            server, "execute_sql", {"sql": "SELECT * FROM scratch"}
        )
    finally:
        await clone.destroy()
    fresh = await snapshot.clone()
    try:
        assert (await admin_rows(cluster, fresh, "SELECT count(*) FROM shop.customers"))[0][0] == 3
    finally:
        await fresh.destroy()


async def test_a_dsn_endpoint_keeps_read_only_guards(
    cluster: EmbeddedPostgresCluster, snapshot: ClusterPostgresSnapshot
) -> None:
    clone = await snapshot.clone()
    refusing = sql_server(clone.connection.dsn, statement_timeout=2)  # the superuser's DSN
    server = sql_server(clone.connection.dsn, statement_timeout=2, allow_superuser=True)
    try:
        assert "a superuser" in await call_error(
            refusing, "execute_sql", {"sql": "SELECT count(*) FROM shop.orders"}
        )
        assert "not allowed in read-only mode" in await call_error(
            server, "execute_sql", {"sql": "DELETE FROM shop.orders"}
        )
        assert "not allowed in read-only mode" in await call_error(
            server,
            "execute_sql",
            {"sql": "WITH gone AS (DELETE FROM shop.orders RETURNING 1) SELECT count(*) FROM gone"},
        )
        count = await call(server, "execute_sql", {"sql": "SELECT count(*) AS n FROM shop.orders"})
        assert count["rows"] == [{"n": 1200}]
        assert (await admin_rows(cluster, clone, "SELECT count(*) FROM shop.orders"))[0][0] == 1200
    finally:
        await server.context.aclose()
        await refusing.context.aclose()
        await clone.destroy()


async def test_statement_timeout(view: PostgresSandbox) -> None:
    server = sql_server(view, statement_timeout=0.5)
    text = await call_error(server, "execute_sql", {"sql": "SELECT pg_sleep(3)"})
    assert "statement timeout" in text
    assert "0.5 s" in text
    answer = await call(server, "execute_sql", {"sql": "SELECT 1 AS one"})
    assert answer["rows"] == [{"one": 1}]


async def test_stdio(view: PostgresSandbox, cluster: EmbeddedPostgresCluster) -> None:
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    parameters = mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_servers.sql", "--dsn", view.connection.dsn, "--max-rows", "2"],
        env=environment,
        cwd=str(REPOSITORY),
    )
    async with mcp.Client(parameters) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools == EVERY_TOOL
        result = await client.call_tool("execute_sql", {"sql": "SELECT id FROM shop.orders"})
        answer = json.loads(result.content[0].text)  # type: ignore[union-attr]
        assert answer["row_count"] == 1200
        assert len(answer["rows"]) == 2
        refused = await client.call_tool("execute_sql", {"sql": "DROP TABLE shop.orders"})
        assert refused.is_error
        schemas = await client.call_tool("list_schemas", {})
        assert "shop" in schemas.content[0].text  # type: ignore[union-attr]
    real = await admin_rows(cluster, view, "SELECT count(*) FROM shop.orders")
    assert real[0][0] == 1200
    usage = subprocess.run(
        [sys.executable, "-m", "mcp_servers.sql", "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPOSITORY,
        env=environment,
    ).stdout
    assert "--access-mode" in usage
    assert "--allow-superuser" in usage
    assert "role the DSN names" in usage.replace("\n", " ")


async def test_command_line_limits() -> None:
    parsed = parser().parse_args(["--dsn", "postgresql:///x", "--size-quota", "1.5"])
    assert parsed.size_quota == 1.5 * 2**20
    assert parsed.allow_superuser is False
    assert parser().parse_args(["--dsn", "d", "--size-quota", "0"]).size_quota is None
    with pytest.raises(SystemExit):
        parser().parse_args(["--dsn", "d", "--max-value-bytes", "0"])
