"""The Postgres MCP tools agents used, re-implemented over an ``asyncpg`` connection.

Owns the tool surface (names, parameters, output and error text) of each server implementation
MCPMark's Postgres runs used, and which one answers a call:

* ``postgres-mcp`` (crystaldba, the server MCPMark launches, unrestricted mode): ``execute_sql``,
  ``list_schemas``, ``list_objects``, ``get_object_details``, ``explain_query`` (here);
* Supabase's server: ``execute_sql{query}``, ``apply_migration{name, query}``,
  ``list_tables{schemas}`` (``supabase_tools``);
* InsForge's server: ``run-raw-sql{query}``, ``get-table-schema{tableName}``,
  ``get-backend-metadata``, ``get-instructions`` (``insforge_tools``).

``execute_sql`` exists in two servers. Replaying, the recording decides (``mcp_servers.recorded``:
the server the trajectory names, else the one its tools and argument names belong to); a live
call that names ``query`` (and not ``sql``) gets Supabase's semantics, any other postgres-mcp's.
Arguments that do not fit a tool are answered with that server's own validation error, as the
agent saw it: postgres-mcp (FastMCP) ``Error executing tool <name>: <pydantic errors>``,
Supabase a ``ZodError``, InsForge the client's ``MCP error -32602`` text; none runs anything.

Beside it, ``statements`` splits scripts, ``driver`` runs them as ``postgres-mcp``'s driver did,
``values`` turns results into psycopg's values and ``errors`` words failures as psycopg does;
``node_driver`` does the same for the Node.js servers behind Supabase and InsForge.

How ``postgres-mcp`` behaves, and how it is reproduced here:

* Its driver runs the whole script with psycopg in one ``execute`` (simple query protocol) inside
  the transaction psycopg opens, then ``COMMIT``; a failure rolls everything back. Here the script
  is split (quotes, dollar quotes, comments, ``E''`` strings, ``BEGIN ATOMIC`` bodies): all but the
  last statement go to the server as they are, in one simple query, inside ``BEGIN``; the last is
  prepared so its rows and column types are known; then ``COMMIT``. Transaction control inside the
  script acts on that transaction as it did on psycopg's. ``sql`` defaults to the text ``all``
  (the server's own default), so a call without it fails with a syntax error there too.
* The output is ``str()`` of the last statement's rows as a list of dicts (``No results`` when
  it returns no rows description, ``[]`` for no rows). Values are converted to what psycopg's
  default loaders return: ``real`` and ``interval`` re-read from their text form (psycopg counts a
  year as 365 days, a month as 30), ``timestamptz`` in the session's time zone as a ``ZoneInfo``,
  ``json``/``jsonb`` parsed, ``uuid`` as ``uuid.UUID``, built-in ranges as psycopg ``Range``
  look-alikes, anonymous records as tuples of strings, and types psycopg has no loader for
  (geometric, bit strings, ``"char"``, ``tid``, ``pg_lsn``, composite types, arrays of user
  types, ...) as their PostgreSQL text.
* Errors read ``Error: <message>`` where the message is psycopg's: libpq's error text without the
  severity, including the ``LINE n:`` excerpt with its caret, ``DETAIL``, ``HINT``, ``QUERY`` and
  ``CONTEXT`` lines. ``postgres-mcp`` returns them as ordinary text (``isError`` false);
  ``ToolResult.is_error`` is set anyway, as the dataset importer marks ``Error: ...`` outputs.
* ``explain_query`` with hypothetical indexes needs the ``hypopg`` extension; without it the call
  answers that hypothetical indexes are not supported on this database (own wording).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import date, datetime, time
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from dataset.actions import ToolCallAction
from mcp_servers.recorded import recorded_call
from mcp_servers.results import ToolArgumentError, ToolArguments, ToolResult, ToolSpec
from mcp_servers.sql import insforge_tools, supabase_tools
from mcp_servers.sql.driver import run_query, run_script, sql_literal
from mcp_servers.sql.errors import SqlFailure
from mcp_servers.sql.node_driver import js_json

if TYPE_CHECKING:
    from dataset.models import Trajectory
    from sandboxes.postgres.sandbox import PostgresConnection

POSTGRES_MCP = "postgres-mcp"
"""crystaldba's postgres-mcp (MCPMark's own Postgres server)."""
SUPABASE = "supabase"
"""Supabase's MCP server."""
INSFORGE = "insforge"
"""InsForge's MCP server."""

# ---------------------------------------------------------------------------------------------
# Argument models
# ---------------------------------------------------------------------------------------------


class PostgresMcpExecuteSqlArguments(ToolArguments):
    """postgres-mcp ``execute_sql``."""

    sql: str = "all"
    """SQL to run. Several statements separated by semicolons are allowed; the rows of the last
    one are returned."""


class ExecuteSqlArguments(ToolArguments):
    """``execute_sql`` of postgres-mcp (``sql``) or of Supabase (``query``), for a live call
    that does not say which server it is for."""

    sql: str | None = None
    """SQL to run (postgres-mcp). Several statements separated by semicolons are allowed; the
    rows of the last one are returned."""
    query: str | None = None
    """The SQL query to execute (Supabase's name for the same parameter)."""
    project_id: str | None = None
    """Supabase project id; ignored here."""


class NoArguments(ToolArguments):
    """A tool without parameters."""


class ListObjectsArguments(ToolArguments):
    """``list_objects``."""

    schema_name: str
    """Schema name."""
    object_type: str = "table"
    """Object type: 'table', 'view', 'sequence', or 'extension'."""


class GetObjectDetailsArguments(ListObjectsArguments):
    """``get_object_details``."""

    object_name: str
    """Object name."""


class ExplainQueryArguments(ToolArguments):
    """``explain_query``."""

    sql: str
    """SQL query to explain."""
    analyze: bool = False
    """When true, actually runs the query to show real execution statistics instead of
    estimates. Takes longer but provides more accurate information."""
    hypothetical_indexes: list[dict[str, Any]] = Field(default_factory=list)
    """Indexes to simulate, each {'table': name, 'columns': [names], 'using': 'btree' (optional)};
    an empty list for none. Needs the hypopg extension."""

    @model_validator(mode="before")
    @classmethod
    def _parse_json_strings(cls, data: Any) -> Any:
        # FastMCP parses a JSON string given for a non-string parameter.
        if isinstance(data, dict) and isinstance(data.get("hypothetical_indexes"), str):
            with contextlib.suppress(ValueError):
                data = {**data, "hypothetical_indexes": json.loads(data["hypothetical_indexes"])}
        return data


# ---------------------------------------------------------------------------------------------
# postgres-mcp tools
# ---------------------------------------------------------------------------------------------


def _error(message: str) -> ToolResult:
    return ToolResult(text=f"Error: {message}", is_error=True)


async def execute_sql(
    connection: PostgresConnection, args: PostgresMcpExecuteSqlArguments
) -> ToolResult:
    """Run SQL with postgres-mcp's semantics and output."""
    try:
        outcome = await run_script(connection, args.sql)
    except SqlFailure as failure:
        return _error(str(failure))
    if outcome.rows is None:
        return ToolResult(text="No results", wrote=outcome.wrote)
    return ToolResult(text=str(outcome.rows), wrote=outcome.wrote)


async def execute_sql_either(
    connection: PostgresConnection, args: ExecuteSqlArguments
) -> ToolResult:
    """A live ``execute_sql``: Supabase's when only ``query`` is given, else postgres-mcp's."""
    if args.query is not None and args.sql is None:
        return await supabase_tools.execute_sql(
            connection, supabase_tools.SupabaseExecuteSqlArguments(query=args.query)
        )
    return await execute_sql(
        connection, PostgresMcpExecuteSqlArguments(sql="all" if args.sql is None else args.sql)
    )


_SCHEMAS_SQL = """
            SELECT
                schema_name,
                schema_owner,
                CASE
                    WHEN schema_name LIKE 'pg_%' THEN 'System Schema'
                    WHEN schema_name = 'information_schema' THEN 'System Information Schema'
                    ELSE 'User Schema'
                END as schema_type
            FROM information_schema.schemata
            ORDER BY schema_type, schema_name
            """


async def list_schemas(connection: PostgresConnection, args: NoArguments) -> ToolResult:
    """Every schema with its owner and whether it is a system or user schema."""
    try:
        return ToolResult(text=str(await run_query(connection, _SCHEMAS_SQL)))
    except SqlFailure as failure:
        return _error(str(failure))


_TABLES_SQL = """
                SELECT table_schema, table_name, table_type
                FROM information_schema.tables
                WHERE table_schema = {} AND table_type = {}
                ORDER BY table_name
                """
_SEQUENCES_SQL = """
                SELECT sequence_schema, sequence_name, data_type
                FROM information_schema.sequences
                WHERE sequence_schema = {}
                ORDER BY sequence_name
                """
_EXTENSIONS_SQL = """
                SELECT extname, extversion, extrelocatable
                FROM pg_extension
                ORDER BY extname
                """


async def list_objects(connection: PostgresConnection, args: ListObjectsArguments) -> ToolResult:
    """Tables, views, sequences or extensions of a schema."""
    kind = args.object_type
    try:
        if kind in ("table", "view"):
            table_type = "BASE TABLE" if kind == "table" else "VIEW"
            rows = await run_query(connection, _TABLES_SQL, args.schema_name, table_type)
            found: list[dict[str, Any]] = [
                {"schema": r["table_schema"], "name": r["table_name"], "type": r["table_type"]}
                for r in rows
            ]
        elif kind == "sequence":
            rows = await run_query(connection, _SEQUENCES_SQL, args.schema_name)
            found = [
                {
                    "schema": r["sequence_schema"],
                    "name": r["sequence_name"],
                    "data_type": r["data_type"],
                }
                for r in rows
            ]
        elif kind == "extension":
            rows = await run_query(connection, _EXTENSIONS_SQL)
            found = [
                {
                    "name": r["extname"],
                    "version": r["extversion"],
                    "relocatable": r["extrelocatable"],
                }
                for r in rows
            ]
        else:
            return _error(f"Unsupported object type: {kind}")
    except SqlFailure as failure:
        return _error(str(failure))
    return ToolResult(text=str(found))


_COLUMNS_SQL = """
                SELECT column_name, data_type, is_nullable, column_default
                FROM information_schema.columns
                WHERE table_schema = {} AND table_name = {}
                ORDER BY ordinal_position
                """
# postgres-mcp's catalogue queries have no ORDER BY: the server listed constraints and indexes
# in the order the catalogue returned them, which was creation order. That order is made
# explicit here (constraints by pg_constraint oid, then the NOT NULL ones PostgreSQL lists by
# column number; key columns by position; indexes by oid), so replay does not depend on plans.
_CONSTRAINTS_SQL = """
                SELECT tc.constraint_name, tc.constraint_type, kcu.column_name
                FROM information_schema.table_constraints AS tc
                LEFT JOIN information_schema.key_column_usage AS kcu
                  ON tc.constraint_name = kcu.constraint_name
                 AND tc.table_schema = kcu.table_schema
                LEFT JOIN pg_catalog.pg_constraint AS pc
                  ON pc.conname = tc.constraint_name
                 AND pc.conrelid = (quote_ident(tc.table_schema) || '.'
                                    || quote_ident(tc.table_name))::regclass
                WHERE tc.table_schema = {} AND tc.table_name = {}
                ORDER BY pc.oid NULLS LAST,
                         CASE WHEN tc.constraint_name ~ '^[0-9]+_[0-9]+_[0-9]+_not_null$'
                              THEN split_part(tc.constraint_name, '_', 3)::int END,
                         tc.constraint_name, kcu.ordinal_position
                """
_INDEXES_SQL = """
                SELECT indexname, indexdef
                FROM pg_indexes
                WHERE schemaname = {} AND tablename = {}
                ORDER BY (quote_ident(schemaname) || '.' || quote_ident(indexname))::regclass::oid
                """
_SEQUENCE_SQL = """
                SELECT sequence_schema, sequence_name, data_type, start_value, increment
                FROM information_schema.sequences
                WHERE sequence_schema = {} AND sequence_name = {}
                """
_EXTENSION_SQL = """
                SELECT extname, extversion, extrelocatable
                FROM pg_extension
                WHERE extname = {}
                """


async def _relation_details(
    connection: PostgresConnection, args: GetObjectDetailsArguments
) -> dict[str, Any]:
    schema, name = args.schema_name, args.object_name
    columns = [
        {
            "column": r["column_name"],
            "data_type": r["data_type"],
            "is_nullable": r["is_nullable"],
            "default": r["column_default"],
        }
        for r in await run_query(connection, _COLUMNS_SQL, schema, name)
    ]
    constraints: dict[str, dict[str, Any]] = {}
    for row in await run_query(connection, _CONSTRAINTS_SQL, schema, name):
        entry = constraints.setdefault(
            row["constraint_name"], {"type": row["constraint_type"], "columns": []}
        )
        if row["column_name"]:
            entry["columns"].append(row["column_name"])
    indexes = [
        {"name": r["indexname"], "definition": r["indexdef"]}
        for r in await run_query(connection, _INDEXES_SQL, schema, name)
    ]
    return {
        "basic": {"schema": schema, "name": name, "type": args.object_type},
        "columns": columns,
        "constraints": [{"name": key, **value} for key, value in constraints.items()],
        "indexes": indexes,
    }


async def get_object_details(
    connection: PostgresConnection, args: GetObjectDetailsArguments
) -> ToolResult:
    """Columns, constraints and indexes of a table or view; or a sequence's or extension's facts."""
    kind = args.object_type
    try:
        result: dict[str, Any]
        if kind in ("table", "view"):
            result = await _relation_details(connection, args)
        elif kind == "sequence":
            rows = await run_query(connection, _SEQUENCE_SQL, args.schema_name, args.object_name)
            result = (
                {
                    "schema": rows[0]["sequence_schema"],
                    "name": rows[0]["sequence_name"],
                    "data_type": rows[0]["data_type"],
                    "start_value": rows[0]["start_value"],
                    "increment": rows[0]["increment"],
                }
                if rows
                else {}
            )
        elif kind == "extension":
            rows = await run_query(connection, _EXTENSION_SQL, args.object_name)
            result = (
                {
                    "name": rows[0]["extname"],
                    "version": rows[0]["extversion"],
                    "relocatable": rows[0]["extrelocatable"],
                }
                if rows
                else {}
            )
        else:
            return _error(f"Unsupported object type: {kind}")
    except SqlFailure as failure:
        return _error(str(failure))
    return ToolResult(text=str(result))


def _format_plan_node(node: Mapping[str, Any], level: int = 0) -> str:
    """postgres-mcp's one-line-per-node plan rendering."""
    indent = "  " * level
    costs = f"{node['Startup Cost']:.2f}..{node['Total Cost']:.2f}"
    text = f"{indent}→ {node['Node Type']} (Cost: {costs})"
    if node.get("Relation Name"):
        text += f" on {node['Relation Name']}"
    text += f" [Rows: {node['Plan Rows']}]"
    if "Actual Total Time" in node:
        text += (
            f" [Actual: {node['Actual Startup Time']:.2f}..{node['Actual Total Time']:.2f} ms,"
            f" Rows: {node['Actual Rows']}, Loops: {node['Actual Loops']}]"
        )
    if node.get("Filter"):
        condition = node["Filter"]
        if len(condition) > 100:
            condition = condition[:97] + "..."
        text += f"\n{indent}  Filter: {condition}"
    if "Shared Hit Blocks" in node:
        text += (
            f"\n{indent}  Buffers - hit: {node['Shared Hit Blocks']},"
            f" read: {node['Shared Read Blocks']}, written: {node['Shared Written Blocks']}"
        )
    for child in node.get("Plans", []):
        text += "\n" + _format_plan_node(child, level + 1)
    return text


def _format_plan(plan: Mapping[str, Any]) -> str:
    lines = []
    if plan.get("Planning Time") is not None:
        lines.append(f"Planning Time: {plan['Planning Time']:.3f} ms")
    if plan.get("Execution Time") is not None:
        lines.append(f"Execution Time: {plan['Execution Time']:.3f} ms")
    lines.append(_format_plan_node(plan["Plan"]))
    return "\n".join(lines)


async def _explain(connection: PostgresConnection, sql: str, options: list[str]) -> ToolResult:
    try:
        outcome = await run_script(connection, f"EXPLAIN ({', '.join(options)}) {sql}")
    except SqlFailure as failure:
        return _error(f"Error executing explain plan: {failure}")
    rows = outcome.rows or []
    plans = rows[0]["QUERY PLAN"] if rows else None
    if not isinstance(plans, list) or not plans:
        return _error("No results returned from EXPLAIN")
    try:
        return ToolResult(text=_format_plan(plans[0]), wrote=outcome.wrote)
    except (KeyError, TypeError, ValueError) as error:
        return _error(f"Internal error converting explain plan - do not retry: {error}")


async def _hypopg_installed(connection: PostgresConnection) -> bool:
    rows = await run_query(
        connection, "SELECT extversion FROM pg_extension WHERE extname = {}", "hypopg"
    )
    return bool(rows)


def _quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


async def _explain_hypothetical(
    connection: PostgresConnection, sql: str, indexes: list[dict[str, Any]]
) -> ToolResult:
    for index in indexes:
        if "table" not in index:
            return _error("Missing 'table' in index definition")
        if "columns" not in index:
            return _error("Missing 'columns' in index definition")
    statements = [
        "SELECT hypopg_create_index("
        + sql_literal(
            f"CREATE INDEX ON {index['table']} USING {index.get('using', 'btree')} "
            f"({', '.join(_quote_identifier(str(column)) for column in index['columns'])})"
        ).strip()
        + ")"
        for index in indexes
    ]
    script = "; ".join([*statements, f"EXPLAIN (FORMAT JSON) {sql}"])
    try:
        rows = (await run_script(connection, script)).rows or []
    except SqlFailure as failure:
        return _error(f"Error generating explain plan with hypothetical indexes: {failure}")
    finally:
        with contextlib.suppress(Exception):
            await connection.execute("SELECT hypopg_reset()")
    plans = rows[0]["QUERY PLAN"] if rows else None
    if not isinstance(plans, list) or not plans or "Plan" not in plans[0]:
        return _error("Failed to generate a valid explain plan with the hypothetical indexes")
    return ToolResult(text=_format_plan(plans[0]))


async def explain_query(  # noqa: PLR0911 - each refusal is the server's own answer
    connection: PostgresConnection, args: ExplainQueryArguments
) -> ToolResult:
    """The query's plan (estimated, or measured with ``analyze``), optionally with hypothetical
    indexes (hypopg)."""
    has_parameters = re.search(r"\$\d+", args.sql) is not None
    if args.hypothetical_indexes:
        if args.analyze:
            return _error("Cannot use analyze and hypothetical indexes together")
        try:
            installed = await _hypopg_installed(connection)
        except SqlFailure as failure:
            return _error(str(failure))
        if not installed:
            return ToolResult(
                text="Hypothetical indexes are not supported on this database: they need the "
                "hypopg extension, which is not installed.",
                is_error=True,
            )
        return await _explain_hypothetical(connection, args.sql, args.hypothetical_indexes)
    if args.analyze:
        if has_parameters:
            return _error(
                "EXPLAIN ANALYZE cannot be used with bind variables - please replace them with "
                "explicit values"
            )
        return await _explain(connection, args.sql, ["FORMAT JSON", "ANALYZE"])
    options = ["FORMAT JSON", "GENERIC_PLAN"] if has_parameters else ["FORMAT JSON"]
    return await _explain(connection, args.sql, options)


# ---------------------------------------------------------------------------------------------
# JSON values (shared with the judges' server)
# ---------------------------------------------------------------------------------------------


def json_value(value: Any) -> Any:  # noqa: PLR0911 - one rule per value type
    """A row value as a JSON-friendly value: numbers, booleans and JSON stay, the rest is text."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list):
        return [json_value(item) for item in value]
    if isinstance(value, dict):
        return {str(key): json_value(item) for key, item in value.items()}
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, bytes):
        return "\\x" + value.hex()
    if isinstance(value, Decimal):
        return str(value)
    return str(value)


# ---------------------------------------------------------------------------------------------
# The tool tables
# ---------------------------------------------------------------------------------------------


def _spec(
    name: str,
    arguments: type[ToolArguments],
    handler: Callable[[PostgresConnection, Any], Awaitable[ToolResult]],
    description: str,
    *,
    writes: bool,
) -> ToolSpec[PostgresConnection]:
    return ToolSpec(name, arguments, handler, writes, description)


def _table(*specs: ToolSpec[PostgresConnection]) -> dict[str, ToolSpec[PostgresConnection]]:
    return {spec.name: spec for spec in specs}


_RUN_SQL = "Execute any SQL (several statements allowed; the last one's rows are returned)."

POSTGRES_MCP_TOOLS = _table(
    _spec("execute_sql", PostgresMcpExecuteSqlArguments, execute_sql, _RUN_SQL, writes=True),
    _spec(
        "list_schemas", NoArguments, list_schemas, "List all schemas in the database", writes=False
    ),
    _spec(
        "list_objects", ListObjectsArguments, list_objects, "List objects in a schema", writes=False
    ),
    _spec(
        "get_object_details",
        GetObjectDetailsArguments,
        get_object_details,
        "Show detailed information about a database object",
        writes=False,
    ),
    _spec(
        "explain_query",
        ExplainQueryArguments,
        explain_query,
        "Explains the execution plan for a SQL query, showing how the database will execute "
        "it and provides detailed cost estimates.",
        writes=True,  # with analyze, the statement really runs
    ),
)
"""postgres-mcp's tools."""

SUPABASE_TOOLS = _table(
    _spec(
        "execute_sql",
        supabase_tools.SupabaseExecuteSqlArguments,
        supabase_tools.execute_sql,
        "Executes raw SQL in the Postgres database.",
        writes=True,
    ),
    _spec(
        "apply_migration",
        supabase_tools.ApplyMigrationArguments,
        supabase_tools.apply_migration,
        "Applies a migration to the database. Use this when executing DDL operations.",
        writes=True,
    ),
    _spec(
        "list_tables",
        supabase_tools.ListTablesArguments,
        supabase_tools.list_tables,
        "Lists all tables in one or more schemas.",
        writes=False,
    ),
)
"""Supabase's database tools."""

INSFORGE_TOOLS = _table(
    _spec(
        "run-raw-sql",
        insforge_tools.RunRawSqlArguments,
        insforge_tools.run_raw_sql,
        "Execute raw SQL query with optional parameters. Admin access required. Use with "
        "caution as it can modify data directly.",
        writes=True,
    ),
    _spec(
        "get-table-schema",
        insforge_tools.GetTableSchemaArguments,
        insforge_tools.get_table_schema,
        "Returns the detailed schema of a specific table",
        writes=False,
    ),
    _spec(
        "get-backend-metadata",
        insforge_tools.ApiKeyArguments,
        insforge_tools.get_backend_metadata,
        "Index all backend metadata: tables and their row counts",
        writes=False,
    ),
    _spec(
        "get-instructions",
        insforge_tools.ApiKeyArguments,
        insforge_tools.get_instructions,
        "Instructions for using this backend's tools",
        writes=False,
    ),
)
"""InsForge's database tools."""

SERVER_TOOLS: dict[str, dict[str, ToolSpec[PostgresConnection]]] = {
    POSTGRES_MCP: POSTGRES_MCP_TOOLS,
    SUPABASE: SUPABASE_TOOLS,
    INSFORGE: INSFORGE_TOOLS,
}
"""Each server implementation's tools by name."""

SQL_TOOLS: dict[str, ToolSpec[PostgresConnection]] = {
    **POSTGRES_MCP_TOOLS,
    **SUPABASE_TOOLS,
    **INSFORGE_TOOLS,
    "execute_sql": _spec(
        "execute_sql", ExecuteSqlArguments, execute_sql_either, _RUN_SQL, writes=True
    ),
}
"""Every name in one table (``execute_sql`` picks its server by argument name), for lookups
that know only the tool's name and for the agents' server of the authored suites."""


# ---------------------------------------------------------------------------------------------
# Which server answers, and its validation errors
# ---------------------------------------------------------------------------------------------

_SERVER_NAMES = {
    "postgres-mcp": POSTGRES_MCP,
    "postgres_mcp": POSTGRES_MCP,
    "postgres": POSTGRES_MCP,
    "postgresql": POSTGRES_MCP,
    "crystaldba": POSTGRES_MCP,
    "supabase": SUPABASE,
    "insforge": INSFORGE,
}
_PROVENANCE_KEYS = ("server", "mcp_server", "mcp")
"""Where an imported trajectory names the server implementation (MCPMark's ``meta.json``
``mcp``: ``postgres`` for postgres-mcp, ``supabase``, ``insforge``)."""


def server_named(name: object) -> str | None:
    """The server implementation a recorded name means (None when it names none of them)."""
    return _SERVER_NAMES.get(name.strip().lower()) if isinstance(name, str) else None


def server_of(trajectory: Trajectory) -> str | None:
    """The server implementation a trajectory was recorded against: its ``tool_server``, else
    the one its provenance names, else the one whose tools and argument names its calls used."""
    recorded = server_named(trajectory.tool_server)
    if recorded is not None:
        return recorded
    provenance = trajectory.provenance
    details = provenance.details if provenance is not None else {}
    for key in _PROVENANCE_KEYS:
        named = server_named(details.get(key))
        if named is not None:
            return named
    return infer_server(
        (step.action.name, step.action.arguments)
        for step in trajectory.steps
        if isinstance(step.action, ToolCallAction)
    )


def infer_server(calls: Iterable[tuple[str, Mapping[str, Any]]]) -> str | None:
    """The server implementation that has every tool the calls used (ambiguous: the first
    ``execute_sql`` call's argument name decides)."""
    candidates = set(SERVER_TOOLS)
    hint: str | None = None
    for name, arguments in calls:
        having = {server for server, tools in SERVER_TOOLS.items() if name in tools}
        if having:
            candidates &= having
        if name == "execute_sql" and hint is None and isinstance(arguments, Mapping):
            if "query" in arguments and "sql" not in arguments:
                hint = SUPABASE
            elif "sql" in arguments:
                hint = POSTGRES_MCP
    if len(candidates) == 1:
        return next(iter(candidates))
    return hint if hint in candidates else None


def _server_for(name: str, arguments: Mapping[str, Any]) -> str | None:
    call = recorded_call()
    if call is not None:
        recorded = server_of(call.trajectory)
        if recorded is not None and name in SERVER_TOOLS[recorded]:
            return recorded
    having = [server for server, tools in SERVER_TOOLS.items() if name in tools]
    return having[0] if len(having) == 1 else None


_JS_TYPES: dict[type, str] = {bool: "boolean", int: "number", float: "number", str: "string"}
_EXPECTED = {
    "string_type": "string",
    "list_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "bool_type": "boolean",
    "bool_parsing": "boolean",
    "int_type": "number",
    "int_parsing": "number",
    "int_from_float": "number",
    "float_type": "number",
    "float_parsing": "number",
}


def _js_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return _JS_TYPES.get(type(value), "object")


def _field_type(model: type[BaseModel], name: str) -> str:
    for field_name, info in model.model_fields.items():
        if name in (field_name, info.alias):
            annotation = str(info.annotation)
            for marker, js in (("list", "array"), ("dict", "object"), ("bool", "boolean")):
                if marker in annotation:
                    return js
            if "int" in annotation or "float" in annotation:
                return "number"
            return "string"
    return "string"


def zod_issues(model: type[BaseModel], error: ValidationError) -> list[dict[str, Any]]:
    """Pydantic's complaints as the issues zod (the TypeScript servers' validator) reports."""
    issues = []
    for item in error.errors():
        path = list(item["loc"])
        field = str(path[0]) if path else ""
        if item["type"] == "missing":
            expected, received, message = _field_type(model, field), "undefined", "Required"
        else:
            expected = _EXPECTED.get(item["type"], _field_type(model, field))
            received = _js_type(item.get("input"))
            message = f"Expected {expected}, received {received}"
        issues.append(
            {
                "code": "invalid_type",
                "expected": expected,
                "received": received,
                "path": path,
                "message": message,
            }
        )
    return issues


def invalid_arguments(server: str, spec: ToolSpec[Any], error: ValidationError) -> ToolResult:
    """A server's answer to arguments that do not fit the tool, as the agent saw it."""
    if server == SUPABASE:
        return supabase_tools.supabase_error(
            "ZodError", js_json(zod_issues(spec.arguments, error), 2)
        )
    if server == INSFORGE:
        issues = js_json(zod_issues(spec.arguments, error), 2)
        return ToolResult(
            text=f"Error: MCP error -32602: Invalid arguments for tool {spec.name}: {issues}",
            is_error=True,
            wrote=False,
        )
    # FastMCP validates against a model named after the function.
    text = str(error).replace(f"for {spec.arguments.__name__}", f"for {spec.name}Arguments", 1)
    return ToolResult(text=f"Error executing tool {spec.name}: {text}", is_error=True, wrote=False)


async def call_sql_tool(
    connection: PostgresConnection,
    name: str,
    arguments: Mapping[str, Any],
    *,
    server: str | None = None,
) -> ToolResult:
    """Run one SQL tool call on ``connection`` as its server would answer it.

    ``server`` (``POSTGRES_MCP``, ``SUPABASE``, ``INSFORGE``) picks the implementation; by
    default the recording being replayed decides, else the tool's name (and for ``execute_sql``
    its argument names). Arguments that do not fit come back as the server's validation error.
    Raises ``ToolArgumentError`` for an unknown tool or arguments that are not an object. The
    connection must be idle (no transaction open); each call commits on its own.
    """
    server = server or _server_for(name, arguments if isinstance(arguments, Mapping) else {})
    tools = SERVER_TOOLS[server] if server is not None else SQL_TOOLS
    spec = tools.get(name)
    if spec is None:
        raise ToolArgumentError(f"unknown tool {name!r}", tool=name)
    if not isinstance(arguments, Mapping):
        raise ToolArgumentError(
            f"{name}: arguments must be an object, not {type(arguments).__name__}", tool=name
        )
    try:
        parsed = spec.arguments.model_validate(dict(arguments))
    except ValidationError as error:
        return invalid_arguments(server or POSTGRES_MCP, spec, error)
    return await spec.handler(connection, parsed)
