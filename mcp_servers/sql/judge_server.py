"""The SQL MCP server judges use: postgres-mcp's tool names over a Postgres sandbox or a DSN.

Owns the tool table published by ``sql_server``: ``list_schemas``, ``list_objects``,
``get_object_details``, ``execute_sql`` and ``explain_query`` with postgres-mcp's names and
parameters, plus the analysis tools of ``analysis`` (``analyze_db_health``, ``get_top_queries``,
``analyze_workload_indexes``, ``analyze_query_indexes``). Unlike ``agent_tools`` (which replays
recorded calls byte for byte), answers here are written for a judge: JSON text, rows as objects
with JSON-safe values, capped in rows and bytes while they are read (see ``answers``), with a
notice of what was left out.

Failures come back as MCP error results (``isError``) whose text starts with ``Error:``: SQL
errors with PostgreSQL's message, refusals of the statement checks (``inspection``), a role
that may do too much, timeouts and quota stops, and the tools that cannot answer on this
database (``get_top_queries`` without pg_stat_statements, the index advisers, which this server
does not implement).

Access modes (see ``access``): ``read-only`` connects as a role without write privileges where
the endpoint offers one, runs every call in a READ ONLY transaction that is always rolled back
and refuses non-query statements before running them; ``unrestricted`` connects a writable
sandbox as its owner role (confined to that database) and commits each successful call, within
a size quota. ``explain_query`` rolls back in both modes, so ``analyze`` never keeps what it ran.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import asyncpg
from pydantic import Field, field_validator

from mcp_servers.results import ToolArguments, ToolResult, ToolSpec
from mcp_servers.serving import ToolServer
from mcp_servers.sql import analysis
from mcp_servers.sql.access import (
    DEFAULT_SIZE_QUOTA,
    MIB,
    AccessMode,
    Endpoint,
    SandboxEndpoint,
    SqlSession,
    endpoint_for,
)
from mcp_servers.sql.answers import (
    DEFAULT_MAX_ANSWER_BYTES,
    DEFAULT_MAX_VALUE_BYTES,
    AnswerLimits,
    CappedRows,
    answer_notes,
    json_safe,
    run_capped,
)
from mcp_servers.sql.errors import SqlFailure
from mcp_servers.sql.inspection import checked_script, explain_target
from sandboxes.postgres.sandbox import PostgresConnectionInfo, PostgresSandbox

if TYPE_CHECKING:
    from sandboxes.postgres.sandbox import PostgresConnection

DEFAULT_MAX_ROWS = 500
"""Rows a result shows at most unless the server is configured otherwise."""

DEFAULT_STATEMENT_TIMEOUT = 30.0
"""Seconds a statement may run unless the server is configured otherwise."""

SERVER_NAME = "sql"


def dumps(value: Any) -> str:
    """The JSON text of a tool's answer (non-ASCII kept, one line)."""
    return json.dumps(value, ensure_ascii=False)


def error(message: str) -> ToolResult:
    return ToolResult(text=f"Error: {message}", is_error=True)


# ---------------------------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------------------------


class NoArguments(ToolArguments):
    """A tool without parameters."""


class ListObjectsArguments(ToolArguments):
    """``list_objects``."""

    schema_name: str
    """Schema to list, e.g. 'public' (see list_schemas)."""
    object_type: str = "table"
    """What to list: 'table', 'view', 'sequence' or 'extension' (extensions are database-wide;
    schema_name is then ignored)."""


class GetObjectDetailsArguments(ToolArguments):
    """``get_object_details``."""

    schema_name: str
    """Schema of the object."""
    object_name: str
    """Name of the object (exact, case-sensitive, without quotes)."""
    object_type: str = "table"
    """'table', 'view', 'sequence' or 'extension'."""


class ExecuteSqlArguments(ToolArguments):
    """``execute_sql``."""

    sql: str
    """The SQL to run. Several statements separated by semicolons are allowed; the result of
    the last one is returned."""


class ExplainQueryArguments(ToolArguments):
    """``explain_query``."""

    sql: str
    """One statement to explain (SELECT, WITH, VALUES, TABLE, INSERT, UPDATE, DELETE or
    MERGE), with literal values (no $1-style parameters)."""
    analyze: bool = False
    """True to run the statement and show real row counts and timings (EXPLAIN ANALYZE); it
    runs inside a transaction that is rolled back, and within the statement timeout."""
    hypothetical_indexes: list[dict[str, Any]] = Field(default_factory=list)
    """Indexes to pretend exist, each {"table": "name", "columns": ["col", ...], "using":
    "btree"}; needs the hypopg extension. Leave empty for none."""

    @field_validator("hypothetical_indexes", mode="before")
    @classmethod
    def _parse_json_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                return value
        return value


# ---------------------------------------------------------------------------------------------
# Catalog tools
# ---------------------------------------------------------------------------------------------


def _records(records: list[asyncpg.Record]) -> list[dict[str, Any]]:
    return [{key: json_safe(value) for key, value in record.items()} for record in records]


async def _fetch(session: SqlSession, query: str, *params: Any) -> list[dict[str, Any]]:
    async def work(conn: PostgresConnection) -> list[dict[str, Any]]:
        try:
            return _records(await conn.fetch(query, *params))
        except asyncpg.PostgresError as failure:
            raise session.failure(failure, query, 0) from None

    return await session.run(work)


_SCHEMAS_SQL = """
SELECT n.nspname AS schema_name, pg_get_userbyid(n.nspowner) AS schema_owner,
       CASE WHEN n.nspname ~ '^pg_' THEN 'System Schema'
            WHEN n.nspname = 'information_schema' THEN 'System Information Schema'
            ELSE 'User Schema' END AS schema_type
FROM pg_namespace n
WHERE n.nspname !~ '^pg_(toast_)?temp_'
ORDER BY n.nspname ~ '^pg_' OR n.nspname = 'information_schema', n.nspname
"""


async def list_schemas(session: SqlSession, args: NoArguments) -> ToolResult:
    """Every schema with its owner and kind, user schemas first."""
    try:
        return ToolResult(text=dumps(await _fetch(session, _SCHEMAS_SQL)))
    except SqlFailure as failure:
        return error(str(failure))


_RELATION_KINDS: dict[str, dict[str, str]] = {
    "table": {"r": "table", "p": "partitioned table", "f": "foreign table"},
    "view": {"v": "view", "m": "materialized view"},
    "sequence": {"S": "sequence"},
}
_KIND_NAME = (
    "CASE c.relkind "
    + " ".join(
        f"WHEN '{kind}' THEN '{name}'"
        for kinds in _RELATION_KINDS.values()
        for kind, name in kinds.items()
    )
    + " END"
)

_RELATIONS_SQL = f"""
SELECT n.nspname AS schema, c.relname AS name, {_KIND_NAME} AS type,
       CASE WHEN c.relkind = 'S' THEN format_type(s.seqtypid, NULL) END AS data_type,
       CASE WHEN c.relkind IN ('r', 'p', 'm') AND c.reltuples >= 0
            THEN c.reltuples::bigint END AS estimated_rows
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_sequence s ON s.seqrelid = c.oid
WHERE n.nspname = $1 AND c.relkind::text = ANY($2::text[])
ORDER BY c.relname
"""
_EXTENSIONS_SQL = """
SELECT e.extname AS name, e.extversion AS version, n.nspname AS schema,
       e.extrelocatable AS relocatable
FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
ORDER BY e.extname
"""
_SCHEMA_EXISTS_SQL = "SELECT count(*) AS n FROM pg_namespace WHERE nspname = $1"
_UNKNOWN_TYPE = "unsupported object_type {!r}: use 'table', 'view', 'sequence' or 'extension'"


async def list_objects(session: SqlSession, args: ListObjectsArguments) -> ToolResult:
    """Tables, views, sequences or extensions."""
    kind = args.object_type.strip().lower()
    try:
        if kind == "extension":
            return ToolResult(text=dumps(await _fetch(session, _EXTENSIONS_SQL)))
        if kind not in _RELATION_KINDS:
            return error(_UNKNOWN_TYPE.format(args.object_type))
        kinds = list(_RELATION_KINDS[kind])
        rows = await _fetch(session, _RELATIONS_SQL, args.schema_name, kinds)
        if not rows and not (await _fetch(session, _SCHEMA_EXISTS_SQL, args.schema_name))[0]["n"]:
            return error(f"schema {args.schema_name!r} does not exist (see list_schemas)")
    except SqlFailure as failure:
        return error(str(failure))
    for row in rows:
        if kind != "sequence":
            row.pop("data_type")
        if kind == "sequence":
            row.pop("estimated_rows")
    return ToolResult(text=dumps(rows))


_RELATION_SQL = f"""
SELECT c.oid, n.nspname AS schema, c.relname AS name, {_KIND_NAME} AS type,
       pg_get_userbyid(c.relowner) AS owner,
       CASE WHEN c.relkind IN ('r', 'p', 'm') AND c.reltuples >= 0
            THEN c.reltuples::bigint END AS estimated_rows,
       obj_description(c.oid, 'pg_class') AS comment,
       CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid, true) END AS definition
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind::text = ANY($3::text[])
"""
_COLUMNS_SQL = """
SELECT a.attname AS column, format_type(a.atttypid, a.atttypmod) AS data_type,
       NOT a.attnotnull AS nullable, pg_get_expr(d.adbin, d.adrelid) AS default,
       CASE a.attidentity WHEN 'a' THEN 'ALWAYS' WHEN 'd' THEN 'BY DEFAULT' END AS identity,
       CASE a.attgenerated WHEN 's' THEN 'STORED' END AS generated,
       col_description(a.attrelid, a.attnum) AS comment
FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
"""
_CONSTRAINTS_SQL = """
SELECT con.conname AS name,
       CASE con.contype WHEN 'p' THEN 'PRIMARY KEY' WHEN 'u' THEN 'UNIQUE'
            WHEN 'f' THEN 'FOREIGN KEY' WHEN 'c' THEN 'CHECK' WHEN 'x' THEN 'EXCLUDE'
            WHEN 'n' THEN 'NOT NULL' WHEN 't' THEN 'TRIGGER' ELSE con.contype::text END AS type,
       ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(attnum, position)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
             ORDER BY k.position) AS columns,
       pg_get_constraintdef(con.oid, true) AS definition,
       con.convalidated AS validated
FROM pg_constraint con
WHERE con.conrelid = $1
ORDER BY con.contype, con.conname
"""
_INDEXES_SQL = """
SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition,
       i.indisprimary AS primary, i.indisunique AS unique, i.indisvalid AS valid
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = $1
ORDER BY c.relname
"""
_TRIGGERS_SQL = """
SELECT t.tgname AS name, pg_get_triggerdef(t.oid, true) AS definition,
       t.tgenabled <> 'D' AS enabled
FROM pg_trigger t
WHERE t.tgrelid = $1 AND NOT t.tgisinternal
ORDER BY t.tgname
"""
_SEQUENCE_SQL = """
SELECT n.nspname AS schema, c.relname AS name, format_type(s.seqtypid, NULL) AS data_type,
       s.seqstart AS start_value, s.seqmin AS min_value, s.seqmax AS max_value,
       s.seqincrement AS increment, s.seqcycle AS cycle, s.seqcache AS cache,
       ps.last_value,
       (SELECT format('%I.%I.%I', tn.nspname, t.relname, a.attname)
        FROM pg_depend d JOIN pg_class t ON t.oid = d.refobjid
        JOIN pg_namespace tn ON tn.oid = t.relnamespace
        JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
        WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
          AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
        LIMIT 1) AS owned_by
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_sequence s ON s.seqrelid = c.oid
LEFT JOIN pg_sequences ps ON ps.schemaname = n.nspname AND ps.sequencename = c.relname
WHERE n.nspname = $1 AND c.relname = $2
"""
_EXTENSION_SQL = """
SELECT e.extname AS name, e.extversion AS version, n.nspname AS schema,
       e.extrelocatable AS relocatable, obj_description(e.oid, 'pg_extension') AS description
FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = $1
"""


async def _relation_details(
    session: SqlSession, args: GetObjectDetailsArguments, kind: str
) -> dict[str, Any] | None:
    kinds = list(_RELATION_KINDS[kind])

    async def work(conn: PostgresConnection) -> dict[str, Any] | None:
        try:
            found = await conn.fetchrow(_RELATION_SQL, args.schema_name, args.object_name, kinds)
            if found is None:
                return None
            oid = found["oid"]
            details = {key: json_safe(value) for key, value in found.items() if key != "oid"}
            if details["definition"] is None:
                details.pop("definition")
            details["columns"] = _records(await conn.fetch(_COLUMNS_SQL, oid))
            details["constraints"] = _records(await conn.fetch(_CONSTRAINTS_SQL, oid))
            details["indexes"] = _records(await conn.fetch(_INDEXES_SQL, oid))
            details["triggers"] = _records(await conn.fetch(_TRIGGERS_SQL, oid))
        except asyncpg.PostgresError as failure:
            raise session.failure(failure, "", 0) from None
        return details

    return await session.run(work)


async def get_object_details(session: SqlSession, args: GetObjectDetailsArguments) -> ToolResult:
    """A table's or view's columns, constraints, indexes and triggers; a sequence's settings
    and current value; an extension's version."""
    kind = args.object_type.strip().lower()
    where = f"{args.schema_name}.{args.object_name}"
    try:
        details: dict[str, Any] | None
        if kind in ("table", "view"):
            details = await _relation_details(session, args, kind)
        elif kind == "sequence":
            rows = await _fetch(session, _SEQUENCE_SQL, args.schema_name, args.object_name)
            details = rows[0] if rows else None
        elif kind == "extension":
            rows = await _fetch(session, _EXTENSION_SQL, args.object_name)
            details = rows[0] if rows else None
            where = args.object_name
        else:
            return error(_UNKNOWN_TYPE.format(args.object_type))
    except SqlFailure as failure:
        return error(str(failure))
    if details is None:
        return error(f"no {kind} named {where!r} (see list_objects)")
    return ToolResult(text=dumps(details))


# ---------------------------------------------------------------------------------------------
# execute_sql and explain_query
# ---------------------------------------------------------------------------------------------


def capped_answer(result: CappedRows, limits: AnswerLimits) -> dict[str, Any]:
    """The JSON object ``execute_sql`` answers with."""
    if result.columns is None:
        return {"status": result.status}
    answer: dict[str, Any] = {
        "columns": result.columns,
        "rows": result.rows,
        "row_count": result.total,
    }
    answer.update(answer_notes(result, limits))
    return answer


async def execute_sql(session: SqlSession, args: ExecuteSqlArguments) -> ToolResult:
    """Run SQL; the last statement's rows (capped) or command status, as JSON."""
    try:
        parsed = checked_script(args.sql, read_only=session.read_only)
    except SqlFailure as refusal:
        return error(str(refusal))

    async def work(conn: PostgresConnection) -> CappedRows:
        return await run_capped(session, conn, args.sql, session.limits, parsed)

    try:
        result = await session.run(work)
    except SqlFailure as failure:
        return error(str(failure))
    return ToolResult(text=dumps(capped_answer(result, session.limits)))


_IDENTIFIER = r'(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")'
_TABLE_NAME = re.compile(rf"{_IDENTIFIER}(?:\.{_IDENTIFIER})?")
_INDEX_METHOD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _hypothetical_statements(indexes: list[dict[str, Any]]) -> list[str] | str:
    """``hypopg_create_index`` calls for ``indexes``, or why they are malformed."""
    calls = []
    for index in indexes:
        table, columns = index.get("table"), index.get("columns")
        method = index.get("using", "btree")
        if not isinstance(table, str) or not _TABLE_NAME.fullmatch(table):
            return f"hypothetical index {index!r}: 'table' must be a table name"
        if not isinstance(method, str) or not _INDEX_METHOD.fullmatch(method):
            return f"hypothetical index {index!r}: 'using' must be an index method name"
        if not isinstance(columns, list) or not columns:
            return f"hypothetical index {index!r}: 'columns' must be a non-empty list of names"
        quoted = ", ".join('"' + str(column).replace('"', '""') + '"' for column in columns)
        definition = f"CREATE INDEX ON {table} USING {method} ({quoted})"
        calls.append("SELECT hypopg_create_index('" + definition.replace("'", "''") + "')")
    return calls


async def explain_query(session: SqlSession, args: ExplainQueryArguments) -> ToolResult:
    """PostgreSQL's EXPLAIN text for one statement; nothing it runs is kept."""
    try:
        sql = explain_target(args.sql, read_only=session.read_only, analyze=args.analyze).strip()
    except SqlFailure as refusal:
        return error(str(refusal))
    options = ["ANALYZE", "BUFFERS"] if args.analyze else []
    setup: list[str] = []
    if args.hypothetical_indexes:
        if args.analyze:
            return error("hypothetical indexes cannot be combined with analyze")
        made = _hypothetical_statements(args.hypothetical_indexes)
        if isinstance(made, str):
            return error(made)
        setup = made
    statement = f"EXPLAIN ({', '.join([*options, 'FORMAT TEXT'])}) {sql}"

    async def work(conn: PostgresConnection) -> str:
        if setup and not await conn.fetchval(
            "SELECT count(*) FROM pg_extension WHERE extname = 'hypopg'"
        ):
            raise SqlFailure(
                "hypothetical indexes need the hypopg extension, which is not installed in this "
                "database; explain without them"
            )
        for call in setup:
            try:
                await conn.execute(call)
            except asyncpg.PostgresError as failure:
                raise session.failure(failure, call, 0) from None
        try:
            prepared = await conn.prepare(statement)
            if prepared.get_parameters():
                raise SqlFailure(
                    "explain_query cannot plan $1-style parameters: replace them with literal "
                    "values"
                )
            lines = await prepared.fetch()
        except asyncpg.PostgresError as failure:
            # positions count from the start of the EXPLAIN; show them in the caller's SQL
            raise session.failure(failure, sql, len(sql) - len(statement)) from None
        return "\n".join(str(line[0]) for line in lines)

    try:
        plan = await session.run(work, keep=False)
    except SqlFailure as failure:
        return error(str(failure))
    encoded = plan.encode()
    cap = session.limits.max_answer_bytes
    if len(encoded) > cap:
        plan = (
            encoded[:cap].decode(errors="ignore")
            + f"\n[plan cut: it has {len(encoded)} bytes in all, and this server answers with "
            f"at most {cap}]"
        )
    return ToolResult(text=plan)


# ---------------------------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------------------------


def _limits(session: SqlSession) -> str:
    quota = (
        f" The sandbox may grow by at most {session.size_quota / MIB:g} MiB: a call past that "
        "is stopped and rolled back."
        if session.size_quota is not None
        else ""
    )
    return f"Each call is cancelled after {session.statement_timeout:g} s. " + (
        "Read-only: every call runs in its own READ ONLY transaction that is always rolled "
        "back, as a role without write privileges where the server has one."
        if session.read_only
        else "Unrestricted: a successful call is committed to this private sandbox." + quota
    )


def _tools(session: SqlSession) -> dict[str, ToolSpec[SqlSession]]:
    limits = _limits(session)
    read_only = session.read_only
    json_values = (
        "Values are JSON: numbers and booleans as such, json/jsonb parsed, numeric as exact "
        "strings, dates and timestamps in ISO 8601, bytea as \\x hex, other types as their "
        "PostgreSQL text."
    )
    never = (
        "Functions reaching past the database (server files, large objects, dblink, "
        "set_config, signalling or locking other sessions, SQL given as text such as "
        "query_to_xml) and SET of the call's role, time limit or memory are refused before "
        "anything runs. "
    )
    if read_only:
        execute_rules = (
            "Only queries are accepted: SELECT, WITH, VALUES, TABLE, SHOW, EXPLAIN and SET/RESET "
            "of ordinary settings; anything else (writes, DDL, COPY, transaction control, SET "
            "ROLE, ...) is refused before it runs. " + never
        )
    else:
        execute_rules = (
            "Any statement the sandbox's owner role may run is accepted (writes and DDL "
            "included); the call's statements run in one transaction, committed when all "
            "succeed and rolled back on the first error. " + never
        )
    caps = (
        f"Values longer than {session.limits.max_value_bytes} bytes are cut to their first "
        f"{session.limits.max_value_bytes} bytes (as text; values_cut and cut say which), and "
        f"an answer carries at most {session.limits.max_answer_bytes} bytes of rows. "
    )
    specs = [
        ToolSpec(
            "list_schemas",
            NoArguments,
            list_schemas,
            False,
            "List every schema of the database as JSON objects {schema_name, schema_owner, "
            "schema_type}, user schemas first (schema_type 'User Schema', 'System Schema' or "
            f"'System Information Schema'). {limits}",
            title="List schemas",
        ),
        ToolSpec(
            "list_objects",
            ListObjectsArguments,
            list_objects,
            False,
            "List the tables, views, sequences or extensions of a schema as JSON objects: "
            "tables and views {schema, name, type, estimated_rows} (type tells plain, "
            "partitioned and foreign tables, views and materialized views apart; estimated_rows "
            "is the planner's estimate, not a count), sequences {schema, name, type, "
            "data_type}, extensions {name, version, schema, relocatable}. Every object is "
            f"listed, whatever the privileges on it. {limits}",
            title="List objects",
        ),
        ToolSpec(
            "get_object_details",
            GetObjectDetailsArguments,
            get_object_details,
            False,
            "Describe one object as JSON. Tables and views: owner, estimated_rows, comment, "
            "the view's definition, columns (data_type, nullable, default, identity, "
            "generated), constraints (type, columns, definition, validated), indexes "
            "(definition, primary, unique, valid) and triggers. Sequences: data_type, start, "
            "min, max, increment, cycle, last_value (null when never used) and the column "
            f"owning it. Extensions: version, schema, description. {limits}",
            title="Describe an object",
        ),
        ToolSpec(
            "execute_sql",
            ExecuteSqlArguments,
            execute_sql,
            not read_only,
            "Run SQL and return the result of its last statement as JSON: {columns, rows, "
            "row_count} with rows as objects keyed by column name (repeated names get a _2 "
            "suffix), or {status} (the command tag) for a statement without rows. At most "
            f"{session.max_rows} rows are returned: row_count is always the full count, and "
            f"rows_omitted and a notice say how many were left out. {caps}Several statements "
            f"separated by semicolons are allowed. {execute_rules}{json_values} {limits}",
            destructive=True,
            idempotent=False,
            title="Run SQL",
        ),
        ToolSpec(
            "explain_query",
            ExplainQueryArguments,
            explain_query,
            False,
            "Show PostgreSQL's execution plan for one statement as EXPLAIN's text output "
            "(node types, estimated costs and rows). With analyze=true the statement really "
            "runs, adding actual times, row counts and buffer use, inside a transaction that is "
            "always rolled back, so nothing it does is kept. hypothetical_indexes shows the "
            "plan as if those indexes existed (needs the hypopg extension). Each statement is "
            f"cancelled after {session.statement_timeout:g} s.",
            title="Explain a query",
        ),
        *analysis.tool_specs(session),
    ]
    return {spec.name: spec for spec in specs}


def _instructions(session: SqlSession) -> str:
    return (
        f"Tools over one PostgreSQL database ({session.endpoint.description}). Start with "
        "list_schemas, list_objects and get_object_details to find the tables, then query them "
        "with execute_sql. Answers are JSON text; errors start with 'Error:'. "
        f"Results show at most {session.max_rows} rows. {_limits(session)}"
    )


def sql_server(
    endpoint: PostgresSandbox | PostgresConnectionInfo | str | Endpoint,
    *,
    access: AccessMode = "read-only",
    max_rows: int = DEFAULT_MAX_ROWS,
    statement_timeout: float = DEFAULT_STATEMENT_TIMEOUT,
    max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
    size_quota: int | None = DEFAULT_SIZE_QUOTA,
    allow_superuser: bool = False,
    name: str = SERVER_NAME,
) -> ToolServer[SqlSession]:
    """The SQL tools over ``endpoint``: a Postgres sandbox, a connection info or a DSN.

    A sandbox's read-only view is reached as its reader role; a writable sandbox as its owner
    role (``PostgresSandbox.owner_connection``, made on first use), in either mode; a DSN or a
    connection info as the role it names (the statement checks and read-only mode's
    transaction apply whatever that role may do). A role that is a superuser, or may read or
    write the server's files or run programs there, is refused at the first call unless
    ``allow_superuser``. ``unrestricted`` needs something writable: a view is refused.

    Limits: ``max_rows`` rows, ``max_value_bytes`` bytes per value and ``max_answer_bytes``
    bytes of rows per answer; ``statement_timeout`` (seconds) bounds every statement and, with
    a short grace, every call (the watchdog cancels it on the server); in unrestricted mode
    the database may grow by ``size_quota`` bytes (None: no quota).

    Close what the server holds with ``await server.context.aclose()`` (the watchdog's session,
    a DSN's pool; a sandbox's pools close with the sandbox).
    """
    if access not in ("read-only", "unrestricted"):
        raise ValueError(f"access must be 'read-only' or 'unrestricted', not {access!r}")
    resolved = endpoint if isinstance(endpoint, Endpoint) else endpoint_for(endpoint)
    if (
        access != "read-only"
        and isinstance(resolved, SandboxEndpoint)
        and resolved.sandbox.read_only
    ):
        raise ValueError(
            f"{resolved.sandbox.name} is a read-only view: "
            "unrestricted access needs a writable clone"
        )
    session = SqlSession(
        resolved,
        access=access,
        max_rows=max_rows,
        statement_timeout=statement_timeout,
        max_value_bytes=max_value_bytes,
        max_answer_bytes=max_answer_bytes,
        size_quota=size_quota,
        allow_superuser=allow_superuser,
    )
    return ToolServer(name, _tools(session), session, instructions=_instructions(session))
