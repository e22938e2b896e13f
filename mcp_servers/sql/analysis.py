"""The SQL server's analysis tools: database health checks, top queries and index advice.

Owns ``analyze_db_health`` (catalog and statistics checks that mean something on a sandbox:
invalid and duplicate indexes, foreign keys without an index, constraints not validated,
sequences close to their limit, dead rows and transaction id age, cache hit ratios, sessions,
replication), ``get_top_queries`` (from pg_stat_statements when the extension is installed) and
the two index advisers, which this server does not implement and say so. A tool that cannot
answer on this database returns an error result (``isError``) explaining why, so a judge does not
mistake "not available" for "nothing found".
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

import asyncpg
from pydantic import Field

from mcp_servers.results import ToolArguments, ToolResult, ToolSpec
from mcp_servers.sql.access import SqlSession
from mcp_servers.sql.answers import json_safe
from mcp_servers.sql.errors import SqlFailure

if TYPE_CHECKING:
    from sandboxes.postgres.sandbox import PostgresConnection

HEALTH_TYPES = (
    "index",
    "connection",
    "vacuum",
    "sequence",
    "replication",
    "buffer",
    "constraint",
)
"""The checks of ``analyze_db_health``, in the order ``all`` runs them."""

SEQUENCE_WARNING = 0.75
"""A sequence is reported once it has used this fraction of its range."""

DEAD_ROWS_WARNING = 0.2
"""A table is reported when dead rows make up this fraction of its rows (and at least
``DEAD_ROWS_MINIMUM`` of them)."""

DEAD_ROWS_MINIMUM = 1000


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _error(message: str) -> ToolResult:
    return ToolResult(text=f"Error: {message}", is_error=True)


class HealthArguments(ToolArguments):
    """``analyze_db_health``."""

    health_type: str = "all"
    """Which checks to run: 'all', or one or more of 'index', 'connection', 'vacuum',
    'sequence', 'replication', 'buffer', 'constraint', separated by commas."""


class TopQueriesArguments(ToolArguments):
    """``get_top_queries``."""

    sort_by: Literal["resources", "mean_time", "total_time"] = "resources"
    """'total_time' (all executions together), 'mean_time' (per execution) or 'resources'
    (blocks read, written and spilled to temporary files)."""
    limit: int = 10
    """How many queries to show (1 to 100)."""


class WorkloadIndexesArguments(ToolArguments):
    """``analyze_workload_indexes``."""

    max_index_size_mb: int = 10000
    """Size budget for recommended indexes, in MB."""
    method: str = "dta"
    """Recommendation method ('dta' or 'llm')."""


class QueryIndexesArguments(WorkloadIndexesArguments):
    """``analyze_query_indexes``."""

    queries: list[str] = Field(default_factory=list)
    """The queries to recommend indexes for."""


# ---------------------------------------------------------------------------------------------
# Health checks: each returns a JSON-ready section
# ---------------------------------------------------------------------------------------------

Fetch = Callable[..., Awaitable[list[dict[str, Any]]]]

_USER_RELATION = "n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'"

_INVALID_INDEXES_SQL = f"""
SELECT n.nspname AS schema, c.relname AS index, t.relname AS table
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_class t ON t.oid = i.indrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE NOT i.indisvalid AND {_USER_RELATION}
ORDER BY 1, 2
"""
_DUPLICATE_INDEXES_SQL = f"""
SELECT n.nspname AS schema, t.relname AS table,
       array_agg(c.relname ORDER BY c.relname) AS indexes,
       pg_get_indexdef(min(i.indexrelid::bigint)::oid) AS definition
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_class t ON t.oid = i.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE {_USER_RELATION}
GROUP BY n.nspname, t.relname, i.indrelid, c.relam, i.indkey::text, i.indclass::text,
         i.indcollation::text, coalesce(pg_get_expr(i.indexprs, i.indrelid), ''),
         coalesce(pg_get_expr(i.indpred, i.indrelid), '')
HAVING count(*) > 1
ORDER BY 1, 2
"""
_UNINDEXED_FOREIGN_KEYS_SQL = f"""
SELECT n.nspname AS schema, t.relname AS table, con.conname AS constraint,
       ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(attnum, position)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
             ORDER BY k.position) AS columns
FROM pg_constraint con
JOIN pg_class t ON t.oid = con.conrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE con.contype = 'f' AND {_USER_RELATION}
  AND NOT EXISTS (
      SELECT 1 FROM pg_index i
      WHERE i.indrelid = con.conrelid
        AND (i.indkey::int2[])[0:cardinality(con.conkey) - 1] @> con.conkey
        AND (i.indkey::int2[])[0:cardinality(con.conkey) - 1] <@ con.conkey)
ORDER BY 1, 2, 3
"""


async def _index_health(fetch: Fetch) -> dict[str, Any]:
    invalid = await fetch(_INVALID_INDEXES_SQL)
    duplicates = await fetch(_DUPLICATE_INDEXES_SQL)
    unindexed = await fetch(_UNINDEXED_FOREIGN_KEYS_SQL)
    problems = []
    if invalid:
        problems.append(f"{len(invalid)} invalid index(es) (a failed CREATE INDEX CONCURRENTLY?)")
    if duplicates:
        problems.append(f"{len(duplicates)} set(s) of duplicate indexes")
    if unindexed:
        problems.append(f"{len(unindexed)} foreign key(s) without an index on their columns")
    return {
        "summary": "; ".join(problems)
        or "no invalid or duplicate indexes, every foreign key has an index",
        "invalid_indexes": invalid,
        "duplicate_indexes": duplicates,
        "foreign_keys_without_index": unindexed,
    }


_CONNECTIONS_SQL = """
SELECT coalesce(state, 'not visible to this role') AS state, count(*) AS sessions
FROM pg_stat_activity
WHERE datname = current_database() AND backend_type = 'client backend'
GROUP BY 1 ORDER BY 1
"""
_CONNECTION_LIMITS_SQL = """
SELECT current_setting('max_connections')::int AS max_connections,
       (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')
           AS server_sessions
"""


async def _connection_health(fetch: Fetch) -> dict[str, Any]:
    by_state = await fetch(_CONNECTIONS_SQL)
    limits = (await fetch(_CONNECTION_LIMITS_SQL))[0]
    used = limits["server_sessions"] / max(1, limits["max_connections"])
    summary = (
        f"{limits['server_sessions']} of {limits['max_connections']} connections in use "
        f"on the server ({used:.0%})"
    )
    return {
        "summary": summary,
        "this_database_by_state": by_state,
        **limits,
        "note": "includes this tool's own session",
    }


_VACUUM_TABLES_SQL = f"""
SELECT n.nspname AS schema, c.relname AS table, s.n_live_tup AS live_rows,
       s.n_dead_tup AS dead_rows,
       s.last_vacuum, s.last_autovacuum, s.last_analyze, s.last_autoanalyze,
       age(c.relfrozenxid) AS xid_age
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid
WHERE c.relkind IN ('r', 'm') AND {_USER_RELATION}
ORDER BY s.n_dead_tup DESC NULLS LAST, 1, 2
"""
_WRAPAROUND_SQL = """
SELECT age(datfrozenxid) AS database_xid_age,
       current_setting('autovacuum_freeze_max_age')::bigint AS autovacuum_freeze_max_age,
       current_setting('autovacuum') = 'on' AS autovacuum_enabled
FROM pg_database WHERE datname = current_database()
"""


async def _vacuum_health(fetch: Fetch) -> dict[str, Any]:
    tables = await fetch(_VACUUM_TABLES_SQL)
    wraparound = (await fetch(_WRAPAROUND_SQL))[0]
    bloated = [
        table
        for table in tables
        if (dead := table["dead_rows"] or 0) >= DEAD_ROWS_MINIMUM
        and dead / max(1, dead + (table["live_rows"] or 0)) >= DEAD_ROWS_WARNING
    ]
    freeze_limit = wraparound["autovacuum_freeze_max_age"]
    old = [table for table in tables if table["xid_age"] >= freeze_limit]
    never = [
        f"{table['schema']}.{table['table']}"
        for table in tables
        if not any(table[key] for key in ("last_analyze", "last_autoanalyze"))
    ]
    problems = []
    if bloated:
        problems.append(f"{len(bloated)} table(s) with many dead rows")
    if old:
        problems.append(f"{len(old)} table(s) past autovacuum_freeze_max_age")
    if not wraparound["autovacuum_enabled"]:
        problems.append("autovacuum is off")
    return {
        "summary": "; ".join(problems) or "no table has many dead rows or an old xid age",
        "tables_with_many_dead_rows": bloated,
        "tables_past_freeze_age": old,
        "tables_never_analyzed": never,
        **wraparound,
        "note": "row statistics count since this database copy was made; a fresh sandbox "
        "starts with none",
        "tables": tables[:50],
    }


_SEQUENCES_SQL = f"""
SELECT n.nspname AS schema, c.relname AS sequence, format_type(s.seqtypid, NULL) AS data_type,
       s.seqmin AS min_value, s.seqmax AS max_value, s.seqincrement AS increment,
       s.seqcycle AS cycle, ps.last_value,
       col.column_type,
       col.owned_by
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_sequence s ON s.seqrelid = c.oid
LEFT JOIN pg_sequences ps ON ps.schemaname = n.nspname AND ps.sequencename = c.relname
LEFT JOIN LATERAL (
    SELECT format('%I.%I', t.relname, a.attname) AS owned_by,
           format_type(a.atttypid, NULL) AS column_type
    FROM pg_depend d
    JOIN pg_class t ON t.oid = d.refobjid
    JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
    WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
      AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
    LIMIT 1) col ON true
WHERE {_USER_RELATION}
ORDER BY 1, 2
"""
_TYPE_LIMITS = {"smallint": 32767, "integer": 2147483647, "bigint": 9223372036854775807}


async def _sequence_health(fetch: Fetch) -> dict[str, Any]:
    sequences = await fetch(_SEQUENCES_SQL)
    near: list[dict[str, Any]] = []
    for sequence in sequences:
        low, high = int(sequence["min_value"]), int(sequence["max_value"])
        if int(sequence["increment"]) < 0:
            low, high = high, low
        column_limit = _TYPE_LIMITS.get(sequence["column_type"] or "")
        if column_limit is not None and int(sequence["increment"]) > 0:
            high = min(high, column_limit)  # a serial column may end before its sequence
        if sequence["last_value"] is None or high == low:
            continue
        used = (int(sequence["last_value"]) - low) / (high - low)
        if used >= SEQUENCE_WARNING and not sequence["cycle"]:
            near.append({**sequence, "effective_limit": high, "used_fraction": round(used, 4)})
    return {
        "summary": (
            f"{len(near)} of {len(sequences)} sequence(s) have used at least "
            f"{SEQUENCE_WARNING:.0%} of their range"
            if near
            else f"none of {len(sequences)} sequence(s) is near its limit"
        ),
        "sequences_near_limit": near,
        "note": "last_value is null for sequences never used or not readable by this role",
    }


_REPLICATION_SQL = """
SELECT pg_is_in_recovery() AS in_recovery,
       (SELECT count(*) FROM pg_stat_replication) AS replicas_connected,
       current_setting('wal_level') AS wal_level
"""
_SLOTS_SQL = """
SELECT slot_name, slot_type, active, database,
       pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)) AS retained_wal
FROM pg_replication_slots ORDER BY slot_name
"""


async def _replication_health(fetch: Fetch) -> dict[str, Any]:
    state = (await fetch(_REPLICATION_SQL))[0]
    slots = await fetch(_SLOTS_SQL)
    inactive = [slot for slot in slots if not slot["active"]]
    if state["in_recovery"]:
        summary = "this server is a standby (in recovery)"
    elif not slots and not state["replicas_connected"]:
        summary = "no replication: no replica connected and no replication slot"
    else:
        summary = f"{state['replicas_connected']} replica(s) connected, {len(slots)} slot(s)"
    if inactive:
        summary += f"; {len(inactive)} inactive slot(s) retaining WAL"
    return {"summary": summary, **state, "replication_slots": slots}


_BUFFER_SQL = """
SELECT sum(heap_blks_hit) AS table_hits, sum(heap_blks_read) AS table_reads,
       (SELECT sum(idx_blks_hit) FROM pg_statio_user_indexes) AS index_hits,
       (SELECT sum(idx_blks_read) FROM pg_statio_user_indexes) AS index_reads
FROM pg_statio_user_tables
"""


def _ratio(hits: Any, reads: Any) -> float | None:
    total = int(hits or 0) + int(reads or 0)
    return None if total == 0 else round(int(hits or 0) / total, 4)


async def _buffer_health(fetch: Fetch) -> dict[str, Any]:
    counts = (await fetch(_BUFFER_SQL))[0]
    table = _ratio(counts["table_hits"], counts["table_reads"])
    index = _ratio(counts["index_hits"], counts["index_reads"])
    parts = [
        f"{label} cache hit ratio {value:.1%}" if value is not None else f"no {label} reads yet"
        for label, value in (("table", table), ("index", index))
    ]
    return {
        "summary": "; ".join(parts),
        "table_hit_ratio": table,
        "index_hit_ratio": index,
        **{key: int(value or 0) for key, value in counts.items()},
        "note": "block counts since this database copy was made",
    }


_UNVALIDATED_SQL = f"""
SELECT n.nspname AS schema, t.relname AS table, con.conname AS constraint,
       pg_get_constraintdef(con.oid, true) AS definition
FROM pg_constraint con
JOIN pg_class t ON t.oid = con.conrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE NOT con.convalidated AND {_USER_RELATION}
ORDER BY 1, 2, 3
"""
_DISABLED_TRIGGERS_SQL = f"""
SELECT n.nspname AS schema, t.relname AS table, tg.tgname AS trigger,
       tg.tgconstraint <> 0 AS enforces_constraint
FROM pg_trigger tg
JOIN pg_class t ON t.oid = tg.tgrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE tg.tgenabled = 'D' AND {_USER_RELATION}
ORDER BY 1, 2, 3
"""


async def _constraint_health(fetch: Fetch) -> dict[str, Any]:
    unvalidated = await fetch(_UNVALIDATED_SQL)
    disabled = await fetch(_DISABLED_TRIGGERS_SQL)
    problems = []
    if unvalidated:
        problems.append(
            f"{len(unvalidated)} constraint(s) NOT VALID (existing rows were never checked)"
        )
    if disabled:
        problems.append(f"{len(disabled)} disabled trigger(s)")
    return {
        "summary": "; ".join(problems) or "every constraint is validated, no trigger disabled",
        "constraints_not_validated": unvalidated,
        "disabled_triggers": disabled,
    }


_CHECKS: dict[str, Callable[[Fetch], Awaitable[dict[str, Any]]]] = {
    "index": _index_health,
    "connection": _connection_health,
    "vacuum": _vacuum_health,
    "sequence": _sequence_health,
    "replication": _replication_health,
    "buffer": _buffer_health,
    "constraint": _constraint_health,
}


async def analyze_db_health(session: SqlSession, args: HealthArguments) -> ToolResult:
    """Run the requested checks in one transaction; a JSON object with a section each."""
    requested = [part.strip().lower() for part in args.health_type.split(",") if part.strip()]
    if not requested or "all" in requested:
        requested = list(HEALTH_TYPES)
    unknown = [name for name in requested if name not in _CHECKS]
    if unknown:
        return _error(
            f"unsupported health_type {', '.join(unknown)}: use 'all' or any of "
            + ", ".join(HEALTH_TYPES)
        )

    async def work(conn: PostgresConnection) -> dict[str, Any]:
        async def fetch(query: str, *params: Any) -> list[dict[str, Any]]:
            try:
                records = await conn.fetch(query, *params)
            except asyncpg.PostgresError as failure:
                raise session.failure(failure, query, 0) from None
            return [{key: json_safe(value) for key, value in r.items()} for r in records]

        return {name: await _CHECKS[name](fetch) for name in dict.fromkeys(requested)}

    try:
        report = await session.run(work, keep=False)
    except SqlFailure as failure:
        return _error(str(failure))
    return ToolResult(text=_dumps(report))


# ---------------------------------------------------------------------------------------------
# Top queries and index advice
# ---------------------------------------------------------------------------------------------

_STATEMENTS_SCHEMA_SQL = """
SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'pg_stat_statements'
"""

_ORDER = {
    "total_time": "total_exec_time DESC",
    "mean_time": "mean_exec_time DESC",
    "resources": "shared_blks_read + shared_blks_written + temp_blks_read + temp_blks_written"
    " DESC, total_exec_time DESC",
}


async def statements_schema(conn: PostgresConnection) -> str | None:
    """The schema of the pg_stat_statements view, or None when the extension is missing."""
    found = await conn.fetchval(_STATEMENTS_SCHEMA_SQL)
    return None if found is None else str(found)


NOT_INSTALLED = (
    "get_top_queries needs the pg_stat_statements extension, which is not installed in this "
    "database, so no query statistics exist here. Inspect the data and plans with execute_sql "
    "and explain_query instead."
)


async def get_top_queries(session: SqlSession, args: TopQueriesArguments) -> ToolResult:
    """The slowest or most resource-hungry statements recorded by pg_stat_statements."""
    if not 1 <= args.limit <= 100:
        return _error("limit must be between 1 and 100")

    async def work(conn: PostgresConnection) -> list[dict[str, Any]] | None:
        schema = await statements_schema(conn)
        if schema is None:
            return None
        quoted = '"' + schema.replace('"', '""') + '"'
        query = (
            "SELECT query, calls, round(total_exec_time::numeric, 3) AS total_exec_time_ms,"
            " round(mean_exec_time::numeric, 3) AS mean_exec_time_ms, rows,"
            " shared_blks_hit, shared_blks_read, shared_blks_written,"
            " temp_blks_read + temp_blks_written AS temp_blks"
            f" FROM {quoted}.pg_stat_statements"
            " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
            f" ORDER BY {_ORDER[args.sort_by]} LIMIT $1"
        )
        try:
            records = await conn.fetch(query, args.limit)
        except asyncpg.PostgresError as failure:
            raise session.failure(failure, query, 0) from None
        return [{key: json_safe(value) for key, value in r.items()} for r in records]

    try:
        rows = await session.run(work, keep=False)
    except SqlFailure as failure:
        return _error(str(failure))
    if rows is None:
        return _error(NOT_INSTALLED)
    return ToolResult(text=_dumps({"sort_by": args.sort_by, "queries": rows}))


INDEX_ADVICE_UNSUPPORTED = (
    "{tool} is not supported by this server: it does not implement index recommendation. To "
    "judge whether an index would help, compare plans with explain_query (its "
    "hypothetical_indexes parameter needs the hypopg extension) and check existing indexes with "
    "get_object_details and analyze_db_health(health_type='index')."
)


async def analyze_workload_indexes(
    session: SqlSession, args: WorkloadIndexesArguments
) -> ToolResult:
    """Not supported: says so."""
    return _error(INDEX_ADVICE_UNSUPPORTED.format(tool="analyze_workload_indexes"))


async def analyze_query_indexes(session: SqlSession, args: QueryIndexesArguments) -> ToolResult:
    """Not supported: says so."""
    return _error(INDEX_ADVICE_UNSUPPORTED.format(tool="analyze_query_indexes"))


def tool_specs(session: SqlSession) -> list[ToolSpec[SqlSession]]:
    """The analysis tools as published by the SQL server (none of them writes)."""
    return [
        ToolSpec(
            "analyze_db_health",
            HealthArguments,
            analyze_db_health,
            False,
            "Check the database's health and return a JSON object with one section per check, "
            "each with a one-line summary and the offending objects: index (invalid and "
            "duplicate indexes, foreign keys without an index), constraint (constraints NOT "
            "VALID, disabled triggers), sequence (sequences that used 75% or more of their "
            "range, counting the owning column's type), vacuum (tables with many dead rows, "
            "transaction id age, tables never analyzed), buffer (cache hit ratios), connection "
            "(sessions by state, max_connections), replication (standby, replicas, slots). "
            "Activity statistics start empty on a fresh sandbox copy. Read-only; statements "
            f"are cancelled after {session.statement_timeout:g} s.",
            title="Check database health",
        ),
        ToolSpec(
            "get_top_queries",
            TopQueriesArguments,
            get_top_queries,
            False,
            "The most expensive statements recorded by the pg_stat_statements extension, as "
            "JSON (query text, calls, total and mean execution time in ms, rows, block counts), "
            "sorted by total_time, mean_time or resources. Returns an error when "
            "pg_stat_statements is not installed in this database (the usual case for "
            "sandboxes). Read-only.",
            title="Top queries",
        ),
        ToolSpec(
            "analyze_workload_indexes",
            WorkloadIndexesArguments,
            analyze_workload_indexes,
            False,
            "Not supported by this server: always returns an error saying so (use "
            "explain_query and analyze_db_health to reason about indexes).",
            title="Index advice for the workload (unsupported)",
        ),
        ToolSpec(
            "analyze_query_indexes",
            QueryIndexesArguments,
            analyze_query_indexes,
            False,
            "Not supported by this server: always returns an error saying so (use "
            "explain_query and analyze_db_health to reason about indexes).",
            title="Index advice for queries (unsupported)",
        ),
    ]
