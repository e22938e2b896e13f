"""InsForge's database tools (``run-raw-sql``, ``get-table-schema``, ``get-backend-metadata``,
``get-instructions``), as the InsForge MCP server answered them in MCPMark's recorded runs.

The server forwards each call to the InsForge backend, a Node.js service on node-postgres (see
``node_driver``), and prints the backend's JSON answer after a fixed heading. What the
recordings show, and how it is reproduced here:

* ``run-raw-sql``: ``SQL query executed completed successfully:`` and, indented by two spaces,
  ``{rows, rowCount, fields}`` of a single statement (``rowCount`` null for a command tag
  without a count, ``fields`` each column's ``name`` and ``dataTypeID``) or ``{rows: []}`` for a
  script of several statements (node-postgres then returns one result per statement, which the
  backend does not read). Values as node-postgres parses them. Before running anything the
  backend refuses any text mentioning ``pg_catalog``, ``information_schema`` or
  ``DROP``/``CREATE``/``ALTER DATABASE`` ("Query contains restricted operations"). Failures read
  ``Error executing SQL query: <primary message>``.
* ``get-table-schema``: ``Schema retrieved completed successfully:`` and the backend's JSON
  export of the table: ``{<table>: {schema, indexes, foreignKeys, rlsEnabled, policies,
  triggers, rows}}`` (columns from ``information_schema``; indexes and foreign keys sorted by
  name; policies in creation order; ``rows`` empty: no data is exported).
* ``get-backend-metadata``: ``Backend metadata:`` and the backend's state: its database part is
  the public tables (bytewise order, with exact row counts) and the database size; auth
  providers, storage, functions, AI models and version are the hosted service's configuration,
  which a sandbox does not have (empty here; replay compares only the database part).
* ``get-instructions``: InsForge's usage documentation, which depends on no state; here a short
  text of our own (replay does not compare it).
* Arguments that do not fit are refused before the tool runs; MCPMark's client recorded that as
  ``Error: MCP error -32602: Invalid arguments for tool <name>: <zod issues>``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import asyncpg
from pydantic import Field

from mcp_servers.results import ToolArguments, ToolResult
from mcp_servers.sql.driver import sql_literal
from mcp_servers.sql.node_driver import NodeFailure, TypeStyle, js_json, run_node_script

if TYPE_CHECKING:
    from sandboxes.postgres.sandbox import PostgresConnection


class RunRawSqlArguments(ToolArguments):
    """InsForge ``run-raw-sql``."""

    query: str
    """The SQL to execute (admin access; may modify data)."""
    params: list[Any] | None = None
    """Values for ``$1``, ``$2``, ... placeholders."""
    api_key: str | None = Field(default=None, alias="apiKey")
    """InsForge API key; ignored here."""


class GetTableSchemaArguments(ToolArguments):
    """InsForge ``get-table-schema``."""

    table_name: str = Field(alias="tableName")
    """Name of the table."""
    api_key: str | None = Field(default=None, alias="apiKey")
    """InsForge API key; ignored here."""


class ApiKeyArguments(ToolArguments):
    """InsForge tools that take nothing but the optional API key."""

    api_key: str | None = Field(default=None, alias="apiKey")
    """InsForge API key; ignored here."""


SQL_SUCCESS = "SQL query executed completed successfully:\n"
SQL_FAILURE = "Error executing SQL query: "
SCHEMA_SUCCESS = "Schema retrieved completed successfully:\n"
METADATA_HEADING = "Backend metadata:\n\n"

RESTRICTED = [
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"DROP\s+DATABASE",
        r"CREATE\s+DATABASE",
        r"ALTER\s+DATABASE",
        r"pg_catalog",
        r"information_schema",
    )
]
"""Text the backend refuses to run (matched anywhere in the query, comments included)."""


def restricted(query: str) -> bool:
    """Whether the backend refuses ``query`` before running it."""
    return any(pattern.search(query) for pattern in RESTRICTED)


async def run_raw_sql(connection: PostgresConnection, args: RunRawSqlArguments) -> ToolResult:
    """Run the SQL; the backend's ``{rows, rowCount, fields}`` after the success heading."""
    if restricted(args.query):
        return ToolResult(
            text=SQL_FAILURE + "Query contains restricted operations", is_error=True, wrote=False
        )
    params = args.params if args.params else None
    try:
        outcome = await run_node_script(connection, args.query, TypeStyle.NODE, params)
    except NodeFailure as failure:
        return ToolResult(text=SQL_FAILURE + str(failure), is_error=True)
    body: dict[str, Any]
    if len(outcome.results) == 1:
        result = outcome.results[0]
        body = {
            "rows": result.rows,
            "rowCount": result.row_count,
            "fields": [{"name": name, "dataTypeID": oid} for name, oid in result.fields],
        }
    else:
        body = {"rows": []}
    return ToolResult(text=SQL_SUCCESS + js_json(body, 2), wrote=outcome.wrote)


_SCHEMA_COLUMNS = """
SELECT column_name AS "columnName", data_type AS "dataType",
       character_maximum_length::int AS "characterMaximumLength",
       is_nullable::text AS "isNullable", column_default::text AS "columnDefault"
FROM information_schema.columns
WHERE table_schema = 'public' AND table_name = {table}
ORDER BY ordinal_position
"""
_SCHEMA_INDEXES = """
SELECT i.relname AS indexname, pg_get_indexdef(i.oid) AS indexdef,
       x.indisunique AS "isUnique", x.indisprimary AS "isPrimary"
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
WHERE x.indrelid = {relation}
ORDER BY i.relname COLLATE "C"
"""
_SCHEMA_FOREIGN_KEYS = """
SELECT * FROM (
    SELECT DISTINCT k.conname AS "constraintName", sa.attname AS "columnName",
           t.relname AS "foreignTableName", ta.attname AS "foreignColumnName",
           CASE k.confdeltype WHEN 'a' THEN 'NO ACTION' WHEN 'r' THEN 'RESTRICT'
                WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' ELSE 'SET DEFAULT' END
               AS "deleteRule",
           CASE k.confupdtype WHEN 'a' THEN 'NO ACTION' WHEN 'r' THEN 'RESTRICT'
                WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' ELSE 'SET DEFAULT' END
               AS "updateRule"
    FROM pg_constraint k
    JOIN pg_class t ON t.oid = k.confrelid
    JOIN pg_attribute sa ON sa.attrelid = k.conrelid AND sa.attnum = ANY(k.conkey)
    JOIN pg_attribute ta ON ta.attrelid = k.confrelid AND ta.attnum = ANY(k.confkey)
    WHERE k.contype = 'f' AND k.conrelid = {relation}
) AS keys
ORDER BY "constraintName" COLLATE "C", "columnName" COLLATE "C",
         "foreignTableName" COLLATE "C", "foreignColumnName" COLLATE "C"
"""
_SCHEMA_POLICIES = """
SELECT p.polname AS policyname,
       CASE p.polcmd WHEN 'r' THEN 'SELECT' WHEN 'a' THEN 'INSERT' WHEN 'w' THEN 'UPDATE'
            WHEN 'd' THEN 'DELETE' ELSE 'ALL' END AS cmd,
       (CASE WHEN p.polroles = '{{0}}' THEN ARRAY['public']::name[]
             ELSE ARRAY(SELECT r.rolname FROM pg_roles r WHERE r.oid = ANY(p.polroles)
                        ORDER BY r.rolname) END)::text AS roles,
       pg_get_expr(p.polqual, p.polrelid) AS qual,
       pg_get_expr(p.polwithcheck, p.polrelid) AS "withCheck"
FROM pg_policy p
WHERE p.polrelid = {relation}
ORDER BY p.oid
"""
_SCHEMA_TRIGGERS = """
SELECT trigger_name::text AS "triggerName", action_timing::text AS "actionTiming",
       event_manipulation::text AS "eventManipulation",
       action_orientation::text AS "actionOrientation",
       action_condition::text AS "actionCondition",
       action_statement::text AS "actionStatement",
       action_reference_new_table::text AS "newTable",
       action_reference_old_table::text AS "oldTable"
FROM information_schema.triggers
WHERE event_object_schema = 'public' AND event_object_table = {table}
ORDER BY trigger_name COLLATE "C"
"""


async def get_table_schema(
    connection: PostgresConnection, args: GetTableSchemaArguments
) -> ToolResult:
    """The table's JSON export (structure only) after the success heading."""
    table = sql_literal(args.table_name)
    try:
        async with connection.transaction(readonly=True):
            relation = await connection.fetchval(
                "SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                f" WHERE n.nspname = 'public' AND c.relname = {table}"
            )
            relation_literal = str(relation) if relation is not None else "0"

            async def rows(query: str) -> list[dict[str, Any]]:
                text = query.format(table=table, relation=relation_literal)
                return [dict(record) for record in await connection.fetch(text)]

            schema = {
                "schema": await rows(_SCHEMA_COLUMNS),
                "indexes": await rows(_SCHEMA_INDEXES),
                "foreignKeys": await rows(_SCHEMA_FOREIGN_KEYS),
                "rlsEnabled": bool(
                    relation is not None
                    and await connection.fetchval(
                        f"SELECT relrowsecurity FROM pg_class WHERE oid = {relation_literal}"
                    )
                ),
                "policies": await rows(_SCHEMA_POLICIES),
                "triggers": await rows(_SCHEMA_TRIGGERS),
                "rows": [],
            }
    except asyncpg.PostgresError as error:
        message = error.as_dict().get("message", str(error))
        return ToolResult(text=f"Error getting table schema: {message}", is_error=True, wrote=False)
    return ToolResult(text=SCHEMA_SUCCESS + js_json({args.table_name: schema}, 2), wrote=False)


METADATA_HINT = (
    "To retrieve detailed schema information for a specific table, call the get-table-schema "
    "tool with the table name."
)
"""The backend's pointer to ``get-table-schema`` inside the metadata."""

_PUBLIC_TABLES = """
SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname NOT LIKE '\\_%'
ORDER BY c.relname COLLATE "C"
"""


async def get_backend_metadata(connection: PostgresConnection, args: ApiKeyArguments) -> ToolResult:
    """The backend's state: its public tables with row counts and the database size."""
    try:
        async with connection.transaction(readonly=True):
            names = [record["name"] for record in await connection.fetch(_PUBLIC_TABLES)]
            tables = [
                {
                    "schema": "public",
                    "tableName": name,
                    "recordCount": await connection.fetchval(
                        'SELECT count(*) FROM public."' + name.replace('"', '""') + '"'
                    ),
                }
                for name in names
            ]
            size = await connection.fetchval("SELECT pg_database_size(current_database())")
    except asyncpg.PostgresError as error:
        message = error.as_dict().get("message", str(error))
        return ToolResult(
            text=f"Error retrieving backend metadata: {message}", is_error=True, wrote=False
        )
    metadata = {
        "auth": {"oauths": []},
        "database": {
            "tables": tables,
            "totalSizeInGB": int(size) / 1024**3,
            "hint": METADATA_HINT,
        },
        "storage": {"buckets": [], "totalSizeInGB": 0},
        "functions": [],
        "aiIntegration": {"models": []},
        "version": "1.0.0",
    }
    return ToolResult(text=METADATA_HEADING + js_json(metadata, 2), wrote=False)


INSTRUCTIONS = """\
# InsForge backend (emulated)

This backend is a PostgreSQL database behind InsForge's tools.

- Call `get-backend-metadata` first: it lists the public tables and their row counts.
- `get-table-schema` shows a table's columns, indexes, foreign keys, row-level security
  policies and triggers.
- `run-raw-sql` runs SQL with administrator rights (it may change data); text that mentions
  `pg_catalog`, `information_schema` or database-level DDL is refused.
"""
"""Our own stand-in for InsForge's documentation (which depends on no state)."""


async def get_instructions(connection: PostgresConnection, args: ApiKeyArguments) -> ToolResult:
    """How to use this backend's tools (documentation; the same for every state)."""
    return ToolResult(text=INSTRUCTIONS, wrote=False)
