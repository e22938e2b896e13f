"""Running SQL as ``postgres-mcp``'s driver (psycopg) did.

Owns the execution of a script: all statements but the last in one simple query inside
``BEGIN``, the last one prepared so its rows and column types are known, then ``COMMIT`` (a
failure rolls everything back); the rows converted by ``values``; and the server's catalog
queries with their parameters inlined as literals.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import asyncpg
from asyncpg.prepared_stmt import PreparedStatement

from mcp_servers.sql.errors import SqlFailure, postgres_error_text
from mcp_servers.sql.statements import split_statements
from mcp_servers.sql.values import configure_codecs, convert_value, session_zone, text_decoder

if TYPE_CHECKING:
    from sandboxes.postgres.sandbox import PostgresConnection


@dataclass
class Outcome:
    """The last statement's result: column names and converted rows, or no description."""

    rows: list[dict[str, Any]] | None
    wrote: bool | None = None
    """Whether the script's transaction wrote anything (it was given a transaction id); None
    when the script ended that transaction itself, so it cannot be told."""


async def transaction_wrote(connection: PostgresConnection) -> bool | None:
    """Whether the open transaction has written anything so far: PostgreSQL assigns a
    transaction id at the first write (rows, catalog entries, locks on rows). None outside a
    transaction."""
    if not connection.is_in_transaction():
        return None
    return bool(await connection.fetchval("SELECT pg_current_xact_id_if_assigned() IS NOT NULL"))


_SPI_ROWS = """
CREATE FUNCTION pg_temp.aj_statement_rows(statement text) RETURNS SETOF text
LANGUAGE plpgsql AS $aj$
DECLARE value text;
BEGIN
    FOR value IN EXECUTE statement LOOP
        RETURN NEXT value;
    END LOOP;
END
$aj$
"""


async def _rows_without_binding(
    connection: PostgresConnection, statement_text: str, prepared: PreparedStatement
) -> list[tuple[Any]]:
    """Rows of a statement with ``$n`` placeholders, run without parameters as psycopg did.

    Only ``EXPLAIN (GENERIC_PLAN)`` gets that far (anything else fails on its placeholders, with
    the same error psycopg saw); its single column is read through PL/pgSQL, since the
    extended protocol would bind values and plan for them.
    """
    await connection.execute(statement_text)
    if len(prepared.get_attributes()) != 1:
        return []
    await connection.execute(_SPI_ROWS)
    texts = await connection.fetch("SELECT pg_temp.aj_statement_rows($1)", statement_text)
    await connection.execute("DROP FUNCTION pg_temp.aj_statement_rows(text)")
    decode = text_decoder(prepared.get_attributes()[0].type.name)
    return [(None if record[0] is None else decode(record[0]),) for record in texts]


async def _rows_of_last(
    connection: PostgresConnection, statement_text: str
) -> list[dict[str, Any]] | None:
    prepared = await connection.prepare(statement_text)
    if await configure_codecs(connection, prepared.get_attributes()):
        prepared = await connection.prepare(statement_text)
    records: Sequence[asyncpg.Record | tuple[Any]]
    if prepared.get_parameters():
        records = await _rows_without_binding(connection, statement_text, prepared)
    else:
        records = await prepared.fetch()
    attributes = prepared.get_attributes()
    if not attributes:
        if (prepared.get_statusmsg() or "").startswith("SELECT"):
            return [{} for _ in records]
        return None
    zone = session_zone(connection)
    columns = [(a.name, a.type.oid, a.type.kind, a.type.name, a.type.schema) for a in attributes]
    rows: list[dict[str, Any]] = []
    for record in records:
        row: dict[str, Any] = {}
        values = record.values() if isinstance(record, asyncpg.Record) else record
        for (column, oid, kind, type_name, schema), value in zip(columns, values, strict=True):
            row[column] = convert_value(value, oid, kind, type_name, schema, zone)
        rows.append(row)
    return rows


async def run_script(connection: PostgresConnection, script: str) -> Outcome:
    """Run ``script`` as postgres-mcp's driver did: one transaction, committed at the end, the
    last statement's rows returned. Raises ``SqlFailure`` with psycopg's message on error."""
    spans = split_statements(script)
    if not spans:
        return Outcome(None)
    last_start = spans[-1][0]
    began = False
    offset = 0
    try:
        await connection.execute("BEGIN")
        began = True
        if last_start:
            await connection.execute(script[:last_start])
        offset = last_start
        rows = await _rows_of_last(connection, script[last_start:])
        wrote = await transaction_wrote(connection)
        if connection.is_in_transaction():
            await connection.execute("COMMIT")
        return Outcome(rows, wrote)
    except asyncpg.PostgresError as error:
        raise SqlFailure(postgres_error_text(error, script, offset)) from None
    finally:
        if began and connection.is_in_transaction():
            with contextlib.suppress(Exception):
                await connection.execute("ROLLBACK")


def sql_literal(value: str) -> str:
    """A string as a SQL literal, as psycopg's ``sql.Literal`` would quote it."""
    quoted = "'" + value.replace("'", "''") + "'"
    return " E" + quoted.replace("\\", "\\\\") if "\\" in value else quoted


async def run_query(connection: PostgresConnection, sql: str, *params: str) -> list[dict[str, Any]]:
    """Run one of the server's catalog queries (parameters inlined as literals, like it does)."""
    text = sql.format(*(sql_literal(param) for param in params)) if params else sql
    outcome = await run_script(connection, text)
    return outcome.rows or []
