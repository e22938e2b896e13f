"""The agents' Postgres MCP tools over a real PostgreSQL (pgserver): outputs, errors and
transactions."""

from __future__ import annotations

import ast
import importlib
import itertools
import json
import re
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from dataset.actions import ToolCallAction
from dataset.models import Observation, Provenance, Step, Trajectory
from environments.postgres.comparison import normalise_sql_output
from mcp_servers.recorded import RecordedCall, replaying
from mcp_servers.results import ToolArgumentError, ToolResult
from mcp_servers.sql.agent_tools import (
    INSFORGE,
    POSTGRES_MCP,
    SERVER_TOOLS,
    SQL_TOOLS,
    SUPABASE,
    call_sql_tool,
    infer_server,
    server_of,
)

MINI = Path(__file__).resolve().parents[3] / "datasets" / "examples" / "mini"
SEED = (MINI / "tasks" / "pg-active-customers-view" / "seed.sql").read_text()
EXTRA_TYPES = """
CREATE TYPE mood AS ENUM ('sad', 'happy');
CREATE TYPE pair AS (a int, b text);
CREATE VIEW active AS SELECT id, full_name FROM customers WHERE status = 'active';
CREATE SEQUENCE invoice_numbers START 100;
"""
_numbers = itertools.count()
pgserver: Any = importlib.import_module("pgserver")  # untyped; imported for its get_server


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    # Not under pytest's basetemp: a concurrent pytest run may prune it while the server runs.
    directory = Path(tempfile.mkdtemp(prefix="aj-mcp-sql-"))
    instance = pgserver.get_server(directory, cleanup_mode="stop")
    yield instance
    instance.cleanup()
    shutil.rmtree(directory, ignore_errors=True)


def _dsn(server: Any, database: str) -> str:
    base: str = server.get_uri()
    path, _, query = base.partition("?")
    return f"{path.rsplit('/', 1)[0]}/{database}?{query}"


@pytest.fixture
async def dsn(server: Any) -> AsyncIterator[str]:
    """A fresh database loaded from the example task's seed (plus a few extra objects)."""
    name = f"shop_{next(_numbers)}"
    admin = await asyncpg.connect(server.get_uri())
    await admin.execute(f"CREATE DATABASE {name}")
    target = _dsn(server, name)
    loader = await asyncpg.connect(target)
    await loader.execute(SEED + EXTRA_TYPES)
    await loader.close()
    await admin.close()
    yield target
    admin = await asyncpg.connect(server.get_uri())
    await admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
    await admin.close()


async def call(dsn: str, tool: str, **arguments: Any) -> ToolResult:
    """One call on its own connection, as replay makes it."""
    return await call_on(dsn, tool, arguments)


async def call_on(
    dsn: str, tool: str, arguments: dict[str, Any], *, server: str | None = None
) -> ToolResult:
    """One call on its own connection, to the given server implementation."""
    connection = await asyncpg.connect(dsn)
    try:
        return await call_sql_tool(connection, tool, arguments, server=server)
    finally:
        await connection.close()


async def sql(dsn: str, text: str) -> ToolResult:
    return await call(dsn, "execute_sql", sql=text)


@pytest.mark.parametrize(
    "trajectory",
    sorted((MINI / "trajectories").glob("pg-active-customers-view--*.json")),
    ids=lambda path: path.stem,
)
async def test_recorded_calls_replay_to_the_recorded_outputs(server: Any, trajectory: Path) -> None:
    name = f"replay_{next(_numbers)}"
    admin = await asyncpg.connect(server.get_uri())
    await admin.execute(f"CREATE DATABASE {name}")
    await admin.close()
    target = _dsn(server, name)
    loader = await asyncpg.connect(target)
    await loader.execute(SEED)
    await loader.close()
    try:
        for step in json.loads(trajectory.read_text())["steps"]:
            action = step["action"]
            result = await call(target, action["name"], **action["arguments"])
            recorded = step["observation"]["text"]
            assert result.is_error == step["is_error"], f"step {step['index']}"
            # Only the OIDs inside NOT NULL constraint names may differ between servers.
            assert normalise_sql_output(result.text, tool=action["name"]) == normalise_sql_output(
                recorded, tool=action["name"]
            ), f"step {step['index']}"
    finally:
        admin = await asyncpg.connect(server.get_uri())
        await admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
        await admin.close()


def test_the_table_covers_every_server_and_marks_writers() -> None:
    assert set(SERVER_TOOLS[POSTGRES_MCP]) == {
        "execute_sql",
        "list_schemas",
        "list_objects",
        "get_object_details",
        "explain_query",
    }
    assert set(SERVER_TOOLS[SUPABASE]) == {"execute_sql", "apply_migration", "list_tables"}
    assert set(SERVER_TOOLS[INSFORGE]) == {
        "run-raw-sql",
        "get-table-schema",
        "get-backend-metadata",
        "get-instructions",
    }
    assert set(SQL_TOOLS) == set().union(*SERVER_TOOLS.values())
    writers = {name for name, spec in SQL_TOOLS.items() if spec.writes}
    assert writers == {"execute_sql", "explain_query", "apply_migration", "run-raw-sql"}
    properties = SQL_TOOLS["get-table-schema"].arguments.model_json_schema()["properties"]
    assert "tableName" in properties


async def test_execute_sql_returns_the_last_statements_rows(dsn: str) -> None:
    result = await sql(
        dsn, "CREATE TABLE t (a int); INSERT INTO t VALUES (1), (2); SELECT * FROM t"
    )
    assert result.text == "[{'a': 1}, {'a': 2}]"
    assert not result.is_error
    assert (await sql(dsn, "UPDATE t SET a = a + 1")).text == "No results"
    assert (await sql(dsn, "SELECT * FROM t WHERE false")).text == "[]"
    assert (await sql(dsn, "")).text == "No results"
    assert (await sql(dsn, "SELECT 1 AS x; -- done")).text == "[{'x': 1}]"
    assert (await sql(dsn, "SELECT 1 AS a, 2 AS a")).text == "[{'a': 2}]"
    assert (await sql(dsn, "INSERT INTO t VALUES (9) RETURNING a * 2 AS b")).text == "[{'b': 18}]"


async def test_each_call_commits_and_a_failure_rolls_the_whole_script_back(dsn: str) -> None:
    await sql(dsn, "CREATE TABLE t (a int PRIMARY KEY)")
    failed = await sql(dsn, "INSERT INTO t VALUES (1); INSERT INTO t VALUES (1)")
    assert failed.is_error
    assert failed.text == (
        'Error: duplicate key value violates unique constraint "t_pkey"\n'
        "DETAIL:  Key (a)=(1) already exists."
    )
    assert (await sql(dsn, "SELECT count(*) AS n FROM t")).text == "[{'n': 0}]"
    await sql(dsn, "INSERT INTO t VALUES (5)")
    other = await asyncpg.connect(dsn)
    assert await other.fetchval("SELECT count(*) FROM t") == 1
    await other.close()
    own = await sql(dsn, "BEGIN; INSERT INTO t VALUES (6); COMMIT; SELECT count(*) AS n FROM t")
    assert own.text == "[{'n': 2}]"
    vacuum = await sql(dsn, "VACUUM t")
    assert vacuum.text == "Error: VACUUM cannot run inside a transaction block"


async def test_error_text_matches_psycopg_with_line_excerpts(dsn: str) -> None:
    syntax = await sql(dsn, "SELECT 1;\nSELEC 2")
    assert syntax.text == 'Error: syntax error at or near "SELEC"\nLINE 2: SELEC 2\n        ^'
    later = await sql(dsn, "SELECT 1; SELECT\tnope FROM customers")
    assert later.text == (
        'Error: column "nope" does not exist\n'
        "LINE 1: SELECT 1; SELECT nope FROM customers\n"
        "                         ^"
    )
    raised = await sql(
        dsn, "DO $$ BEGIN RAISE EXCEPTION 'boom %', 1 USING DETAIL = 'd', HINT = 'h'; END $$"
    )
    assert raised.text == (
        "Error: boom 1\nDETAIL:  d\nHINT:  h\n"
        "CONTEXT:  PL/pgSQL function inline_code_block line 1 at RAISE"
    )
    assert (await sql(dsn, "SELECT 1/0")).text == "Error: division by zero"


async def test_values_print_as_psycopg_returns_them(dsn: str) -> None:
    result = await sql(
        dsn,
        "SET TIME ZONE 'Europe/Paris'; SELECT 12.50::numeric AS n, DATE '2024-03-04' AS d,"
        " TIMESTAMPTZ '2024-01-02 03:04:05+00' AS tz, TIMESTAMP '2024-01-02 03:04:05' AS ts,"
        " INTERVAL '1 year 2 mons 3 days 04:05:06.5' AS i, 0.1::real AS r,"
        " '{\"a\": [1, null]}'::jsonb AS j, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid AS u,"
        " int4range(1, 5) AS rg, 'empty'::int4range AS e, ROW(1, 'x y', NULL) AS rec,"
        " B'101' AS b, point(1, 2) AS p, 'x'::\"char\" AS c, '1 2'::int2vector AS v,"
        " ARRAY['sad'::mood, 'happy'] AS moods, ROW(1, 'z')::pair AS pr, ARRAY[1, 2] AS a,"
        " '\\x0102'::bytea AS by, '10.0.0.1'::inet AS ip",
    )
    row = result.text
    for expected in (
        "'n': Decimal('12.50')",
        "'d': datetime.date(2024, 3, 4)",
        "'tz': datetime.datetime(2024, 1, 2, 4, 4, 5,"
        " tzinfo=zoneinfo.ZoneInfo(key='Europe/Paris'))",
        "'ts': datetime.datetime(2024, 1, 2, 3, 4, 5)",
        "'i': datetime.timedelta(days=428, seconds=14706, microseconds=500000)",
        "'r': 0.1",
        "'j': {'a': [1, None]}",
        "'u': UUID('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')",
        "'rg': Range(1, 5, '[)')",
        "'e': Range(empty=True)",
        "'rec': ('1', 'x y', None)",
        "'b': '101'",
        "'p': '(1,2)'",
        "'c': 'x'",
        "'v': '1 2'",
        "'moods': '{sad,happy}'",
        "'pr': '(1,z)'",
        "'a': [1, 2]",
        "'by': b'\\x01\\x02'",
        "'ip': IPv4Address('10.0.0.1')",
    ):
        assert expected in row


async def test_unloadable_infinity_dates_fail_like_psycopg(dsn: str) -> None:
    result = await sql(dsn, "SELECT 'infinity'::date AS d")
    assert result.text == "Error: date too large (after year 10K): 'infinity'"


async def test_catalog_tools(dsn: str) -> None:
    schemas = ast.literal_eval((await call(dsn, "list_schemas")).text)
    assert {
        "schema_name": "public",
        "schema_owner": "pg_database_owner",
        "schema_type": "User Schema",
    } in schemas
    tables = await call(dsn, "list_objects", schema_name="public")
    assert tables.text == (
        "[{'schema': 'public', 'name': 'customers', 'type': 'BASE TABLE'},"
        " {'schema': 'public', 'name': 'orders', 'type': 'BASE TABLE'}]"
    )
    views = await call(dsn, "list_objects", schema_name="public", object_type="view")
    assert views.text == "[{'schema': 'public', 'name': 'active', 'type': 'VIEW'}]"
    sequences = await call(dsn, "list_objects", schema_name="public", object_type="sequence")
    assert sequences.text == (
        "[{'schema': 'public', 'name': 'invoice_numbers', 'data_type': 'bigint'}]"
    )
    extensions = ast.literal_eval(
        (await call(dsn, "list_objects", schema_name="public", object_type="extension")).text
    )
    assert {"name": "plpgsql", "version": "1.0", "relocatable": False} in extensions
    bad = await call(dsn, "list_objects", schema_name="public", object_type="index")
    assert bad.text == "Error: Unsupported object type: index"
    sequence = await call(
        dsn,
        "get_object_details",
        schema_name="public",
        object_name="invoice_numbers",
        object_type="sequence",
    )
    assert sequence.text == (
        "{'schema': 'public', 'name': 'invoice_numbers', 'data_type': 'bigint',"
        " 'start_value': '100', 'increment': '1'}"
    )
    view = ast.literal_eval(
        (
            await call(
                dsn,
                "get_object_details",
                schema_name="public",
                object_name="active",
                object_type="view",
            )
        ).text
    )
    assert [column["column"] for column in view["columns"]] == ["id", "full_name"]
    missing = await call(
        dsn, "get_object_details", schema_name="public", object_name="nope", object_type="extension"
    )
    assert missing.text == "{}"


async def test_explain_query(dsn: str) -> None:
    plain = await call(dsn, "explain_query", sql="SELECT * FROM customers WHERE status = 'active'")
    assert plain.text.startswith("→ Seq Scan (Cost: 0.00..")
    assert " on customers [Rows: " in plain.text
    assert "\n  Filter: (status = 'active'::text)" in plain.text
    analyzed = await call(dsn, "explain_query", sql="SELECT count(*) FROM orders", analyze=True)
    assert analyzed.text.startswith("Planning Time: ")
    assert "\nExecution Time: " in analyzed.text
    assert "Loops: 1]" in analyzed.text
    generic = await call(dsn, "explain_query", sql="SELECT * FROM customers WHERE id = $1")
    assert generic.text.startswith("→ ")
    bound = await call(dsn, "explain_query", sql="SELECT $1", analyze=True)
    assert bound.text.startswith("Error: EXPLAIN ANALYZE cannot be used with bind variables")
    index = [{"table": "customers", "columns": ["email"]}]
    both = await call(
        dsn, "explain_query", sql="SELECT 1", analyze=True, hypothetical_indexes=index
    )
    assert both.text == "Error: Cannot use analyze and hypothetical indexes together"
    unsupported = await call(dsn, "explain_query", sql="SELECT 1", hypothetical_indexes=index)
    assert unsupported.is_error
    assert "not supported" in unsupported.text
    assert "hypopg" in unsupported.text
    broken = await call(dsn, "explain_query", sql="SELECT nope FROM customers")
    assert broken.text.startswith(
        'Error: Error executing explain plan: column "nope" does not exist\nLINE 1: EXPLAIN'
    )


async def test_supabase_tools(dsn: str) -> None:
    result = await call(
        dsn, "execute_sql", query="SELECT id, full_name FROM customers WHERE id < 3 ORDER BY id"
    )
    message = json.loads(result.text)
    assert message.startswith("Below is the result of the SQL query.")
    rows = json.loads(message.split("\n")[3])
    assert rows == [{"id": 1, "full_name": "Ada Moreno"}, {"id": 2, "full_name": "Bilal Haddad"}]
    assert message.count("untrusted-data-") == 4
    assert result.wrote is False
    # pg-meta's values: int8 as a number, numeric and timestamps as their PostgreSQL text.
    typed = json.loads(
        (
            await call(
                dsn,
                "execute_sql",
                query="SELECT (SELECT count(*) FROM orders) AS n, 1.50::numeric AS p, "
                "'2024-03-04 10:00:00'::timestamp AS t",
            )
        ).text
    )
    assert json.loads(typed.split("\n")[3]) == [{"n": 16, "p": "1.50", "t": "2024-03-04 10:00:00"}]
    migration = await call(
        dsn,
        "apply_migration",
        name="add_notes",
        query="ALTER TABLE customers ADD COLUMN notes text",
    )
    assert migration.text == '{"success":true}'
    assert migration.wrote is True
    assert "'notes'" in (await sql(dsn, "SELECT * FROM customers LIMIT 1")).text
    failed = await call(dsn, "apply_migration", name="bad", query="ALTER TABLE nope ADD x int")
    assert failed.is_error
    assert json.loads(failed.text) == {
        "error": {"name": "PgMetaDatabaseError", "message": 'relation "nope" does not exist'}
    }
    tables = json.loads((await call(dsn, "list_tables", schemas=["public"])).text)
    customers = next(table for table in tables if table["name"] == "customers")
    assert customers["primary_keys"] == ["id"]
    assert [column["name"] for column in customers["columns"]][:2] == ["id", "full_name"]
    counted = await sql(dsn, "SELECT count(*) AS n FROM customers")
    assert counted.text == f"[{{'n': {customers['rows']}}}]"


async def test_supabase_keeps_migrations_as_supabase_does(dsn: str) -> None:
    first = await call(dsn, "apply_migration", name="one", query="CREATE TABLE m1 (a int)")
    assert first.text == '{"success":true}'
    kept = (
        await sql(
            dsn, "SELECT version, name, statements FROM supabase_migrations.schema_migrations"
        )
    ).text
    assert "'name': 'one'" in kept
    assert "'statements': ['CREATE TABLE m1 (a int)']" in kept
    assert re.search(r"'version': '\d{14}'", kept)
    # Supabase names a migration after the UTC second it is applied in: another migration in
    # the same second collides on the version and is rolled back, bookkeeping and all.
    now = datetime.now(UTC)
    taken = [(now + timedelta(seconds=offset)).strftime("%Y%m%d%H%M%S") for offset in range(3)]
    values = ",".join(f"('{version}')" for version in taken)
    await sql(dsn, f"INSERT INTO supabase_migrations.schema_migrations (version) VALUES {values}")
    colliding = await call(dsn, "apply_migration", name="three", query="CREATE TABLE m3 (a int)")
    assert json.loads(colliding.text) == {
        "error": {
            "name": "PgMetaDatabaseError",
            "message": 'duplicate key value violates unique constraint "schema_migrations_pkey"',
        }
    }
    assert (await sql(dsn, "SELECT to_regclass('m3') AS r")).text == "[{'r': None}]"


def _recorded(text: str) -> RecordedCall:
    step = Step(
        index=1,
        action=ToolCallAction(name="apply_migration", arguments={}, call_id="c1"),
        observation=Observation(text=text),
    )
    return RecordedCall(Trajectory(id="t", task_id="x", agent="a", steps=[step]), step)


async def test_replayed_migrations_take_their_clock_from_the_recording(dsn: str) -> None:
    with replaying(_recorded('{"success":true}')):
        first = await call(dsn, "apply_migration", name="one", query="CREATE TABLE m1 (a int)")
        second = await call(dsn, "apply_migration", name="two", query="CREATE TABLE m2 (a int)")
    assert (first.text, second.text) == ('{"success":true}', '{"success":true}')
    collided = (
        '{"error":{"name":"PgMetaDatabaseError","message":"duplicate key value violates '
        'unique constraint \\"schema_migrations_pkey\\""}}'
    )
    with replaying(_recorded(collided)):
        third = await call(dsn, "apply_migration", name="three", query="CREATE TABLE m3 (a int)")
    assert third.text == collided
    assert (await sql(dsn, "SELECT to_regclass('m3') AS r")).text == "[{'r': None}]"
    versions = await sql(
        dsn, "SELECT count(DISTINCT version) AS n FROM supabase_migrations.schema_migrations"
    )
    assert versions.text == "[{'n': 2}]"


async def test_insforge_tools(dsn: str) -> None:
    result = await call(dsn, "run-raw-sql", query="SELECT count(*) AS n FROM orders")
    assert result.text == (
        'SQL query executed completed successfully:\n{\n  "rows": [\n    {\n      "n": "16"\n'
        '    }\n  ],\n  "rowCount": 1,\n  "fields": [\n    {\n      "name": "n",\n'
        '      "dataTypeID": 20\n    }\n  ]\n}'
    )
    with_params = await call(dsn, "run-raw-sql", query="SELECT $1::int + 1 AS v", params=[41])
    assert '"v": 42' in with_params.text
    created = await call(dsn, "run-raw-sql", query="CREATE TABLE notes (a int)")
    assert json.loads(created.text.split("\n", 1)[1]) == {
        "rows": [],
        "rowCount": None,
        "fields": [],
    }
    several = await call(dsn, "run-raw-sql", query="INSERT INTO notes VALUES (1); SELECT 1 AS x")
    assert json.loads(several.text.split("\n", 1)[1]) == {"rows": []}
    failed = await call(dsn, "run-raw-sql", query="SELECT nope")
    assert failed.is_error
    assert failed.text == 'Error executing SQL query: column "nope" does not exist'
    refused = await call(dsn, "run-raw-sql", query="SELECT * FROM information_schema.tables")
    assert refused.text == "Error executing SQL query: Query contains restricted operations"
    schema = await call(dsn, "get-table-schema", tableName="orders")
    assert schema.text.startswith("Schema retrieved completed successfully:\n")
    exported = json.loads(schema.text.split("\n", 1)[1])["orders"]
    assert list(exported) == [
        "schema",
        "indexes",
        "foreignKeys",
        "rlsEnabled",
        "policies",
        "triggers",
        "rows",
    ]
    assert exported["schema"][0] == {
        "columnName": "id",
        "dataType": "integer",
        "characterMaximumLength": None,
        "isNullable": "NO",
        "columnDefault": None,
    }
    # The seed: orders (id PRIMARY KEY, customer_id REFERENCES customers (id), ...) and an
    # index on customer_id; indexes come sorted by name.
    assert [index["indexname"] for index in exported["indexes"]] == [
        "orders_customer_id_idx",
        "orders_pkey",
    ]
    assert exported["foreignKeys"] == [
        {
            "constraintName": "orders_customer_id_fkey",
            "columnName": "customer_id",
            "foreignTableName": "customers",
            "foreignColumnName": "id",
            "deleteRule": "NO ACTION",
            "updateRule": "NO ACTION",
        }
    ]
    metadata = await call(dsn, "get-backend-metadata")
    assert metadata.text.startswith("Backend metadata:\n\n")
    tables = json.loads(metadata.text.split("\n\n", 1)[1])["database"]["tables"]
    assert {"schema": "public", "tableName": "orders", "recordCount": 16} in tables


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        (
            "list_objects",
            {},
            "Error executing tool list_objects: 1 validation error for list_objectsArguments\n"
            "schema_name\n  Field required [type=missing, input_value={}, input_type=dict]",
        ),
        (
            "run-raw-sql",
            {},
            'Error: MCP error -32602: Invalid arguments for tool run-raw-sql: [\n  {\n    "code": '
            '"invalid_type",\n    "expected": "string",\n    "received": "undefined",\n    '
            '"path": [\n      "query"\n    ],\n    "message": "Required"\n  }\n]',
        ),
        (
            "get-table-schema",
            {"tableName": ["x"]},
            "Error: MCP error -32602: Invalid arguments for tool get-table-schema: [\n  {\n    "
            '"code": "invalid_type",\n    "expected": "string",\n    "received": "array",\n    '
            '"path": [\n      "tableName"\n    ],\n    "message": "Expected string, received '
            'array"\n  }\n]',
        ),
        (
            "apply_migration",
            {"name": "x"},
            '{"error":{"name":"ZodError","message":"[\\n  {\\n    \\"code\\": \\"invalid_type\\",'
            '\\n    \\"expected\\": \\"string\\",\\n    \\"received\\": \\"undefined\\",\\n    '
            '\\"path\\": [\\n      \\"query\\"\\n    ],\\n    '
            '\\"message\\": \\"Required\\"\\n  }\\n]"}}',
        ),
    ],
)
async def test_arguments_that_do_not_fit_get_the_servers_own_validation_error(
    dsn: str, name: str, arguments: dict[str, Any], expected: str
) -> None:
    result = await call(dsn, name, **arguments)
    assert result.is_error
    assert result.text.startswith(expected)
    assert result.wrote is False


async def test_supabase_execute_sql_without_query_is_a_zod_error_not_a_default(dsn: str) -> None:
    result = await call_on(dsn, "execute_sql", {}, server=SUPABASE)
    assert json.loads(result.text)["error"]["name"] == "ZodError"
    assert '\\"path\\": [\\n      \\"query\\"' in result.text


async def test_not_an_object_or_an_unknown_tool_is_a_malformed_call(dsn: str) -> None:
    with pytest.raises(ToolArgumentError) as caught:
        await call_on(dsn, "list_objects", ["public"])  # type: ignore[arg-type]
    assert caught.value.tool == "list_objects"


async def test_unknown_tool_and_the_default_sql(dsn: str) -> None:
    with pytest.raises(ToolArgumentError, match="unknown tool 'drop_everything'"):
        await call(dsn, "drop_everything")
    # postgres-mcp's ``sql`` defaults to the string "all".
    assert (await call(dsn, "execute_sql")).text.startswith('Error: syntax error at or near "all"')


@pytest.mark.parametrize(
    ("calls", "server"),
    [
        ([("list_schemas", {}), ("execute_sql", {"sql": "SELECT 1"})], POSTGRES_MCP),
        ([("execute_sql", {}), ("execute_sql", {"query": "SELECT 1"})], SUPABASE),
        ([("list_tables", {"schemas": ["public"]})], SUPABASE),
        ([("get-instructions", {}), ("run-raw-sql", {"query": "SELECT 1"})], INSFORGE),
        ([("execute_sql", {})], None),
    ],
)
def test_the_server_is_told_from_the_tools_and_argument_names(
    calls: list[tuple[str, dict[str, Any]]], server: str | None
) -> None:
    assert infer_server(calls) == server


def test_a_named_server_beats_inference() -> None:
    step = Step(
        index=1,
        action=ToolCallAction(name="execute_sql", arguments={"sql": "SELECT 1"}, call_id="c1"),
    )
    named = Trajectory(
        id="t",
        task_id="x",
        agent="a",
        steps=[step],
        provenance=Provenance(source_format="mcpmark", details={"mcp": "supabase"}),
    )
    assert server_of(named) == SUPABASE
    assert server_of(named.model_copy(update={"provenance": None})) == POSTGRES_MCP
