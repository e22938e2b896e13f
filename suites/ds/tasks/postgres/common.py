"""Pieces every Postgres task of the DS suite uses.

* Scripted runs as data: a run is a list of ``Step`` (a tool call, the thought recorded with it
  and whether the script expects the server to answer with an error) and a final message.
  ``scripted`` turns such a list into a policy; a call whose error status is not the expected one
  stops the recording, so a run cannot silently drift from the story it was written to tell.
* SQL literals for the seeds, and ``insert_rows`` for multi-row INSERT statements.
* Fingerprints: the verifiers compare a table with what it must hold through a digest of its
  rows computed in SQL (``fingerprint_sql``), and the task modules compute the same digest in
  Python from the generated data (``fingerprint``).
* ``verifier_source``: the common frame of every ``verify.py`` (MCPMark contract: connection from
  the environment, database name as the first argument, exit code 0 = PASS), around a task's own
  ``check`` function and constants.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from suites.ds.spec import AgentSession, Policy

Value = int | str | Decimal | date | None
"""A value of a generated row."""


@dataclass(frozen=True)
class Step:
    """One tool call of a scripted run."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    think: str | None = None
    error: bool = False
    """Whether the server is expected to answer with an error."""


class ScriptDriftError(RuntimeError):
    """A scripted call did (or did not) fail against the script's expectation."""


def sql(statement: str, think: str | None = None, *, error: bool = False) -> Step:
    """An ``execute_sql`` call."""
    return Step("execute_sql", {"sql": statement}, think, error)


def list_schemas(think: str | None = None) -> Step:
    """A ``list_schemas`` call."""
    return Step("list_schemas", {}, think)


def list_objects(schema: str, kind: str = "table", think: str | None = None) -> Step:
    """A ``list_objects`` call."""
    return Step("list_objects", {"schema_name": schema, "object_type": kind}, think)


def details(schema: str, name: str, kind: str = "table", think: str | None = None) -> Step:
    """A ``get_object_details`` call."""
    return Step(
        "get_object_details",
        {"schema_name": schema, "object_name": name, "object_type": kind},
        think,
    )


def explain(statement: str, think: str | None = None) -> Step:
    """An ``explain_query`` call (estimated plan, no hypothetical indexes)."""
    return Step("explain_query", {"sql": statement}, think)


def scripted(steps: Sequence[Step], final: str) -> Policy:
    """A policy that makes ``steps`` in order and ends with ``final``."""

    async def run(session: AgentSession) -> str:
        for number, step in enumerate(steps, start=1):
            if step.think:
                session.think(step.think)
            result = await session.call(step.tool, **step.arguments)
            if result.is_error != step.error:
                expected = "an error" if step.error else "success"
                raise ScriptDriftError(
                    f"step {number} ({step.tool}) expected {expected}, got: {result.text[:300]}"
                )
        return final

    return run


# ---------------------------------------------------------------------------------------------
# Seeds
# ---------------------------------------------------------------------------------------------


def literal(value: Value) -> str:
    """``value`` as an SQL literal."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        raise TypeError("booleans are not used in the seeds")
    if isinstance(value, int | Decimal):
        return str(value)
    if isinstance(value, date):
        return f"'{value.isoformat()}'"
    return "'" + value.replace("'", "''") + "'"


def insert_rows(
    table: str, columns: Sequence[str], rows: Iterable[Sequence[Value]], chunk: int = 500
) -> str:
    """Multi-row INSERT statements for ``rows`` (``chunk`` rows per statement)."""
    statements = []
    batch: list[str] = []
    head = f"INSERT INTO {table} ({', '.join(columns)}) VALUES\n"

    def flush() -> None:
        if batch:
            statements.append(head + ",\n".join(batch) + ";\n")
            batch.clear()

    for row in rows:
        batch.append("    (" + ", ".join(literal(value) for value in row) + ")")
        if len(batch) >= chunk:
            flush()
    flush()
    return "\n".join(statements)


def cents(amount: int) -> Decimal:
    """An amount in cents as a two-decimal ``Decimal``."""
    return (Decimal(amount) / 100).quantize(Decimal("0.01"))


# ---------------------------------------------------------------------------------------------
# Fingerprints
# ---------------------------------------------------------------------------------------------

NULL_MARK = "~"
"""How a NULL is written in a fingerprint."""


def _text(value: Value) -> str:
    if value is None:
        return NULL_MARK
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def fingerprint(rows: Iterable[Sequence[Value]]) -> tuple[int, str]:
    """Row count and digest of ``rows`` (already in key order), as ``fingerprint_sql`` computes
    them: values as PostgreSQL prints them, ``|`` between values, a newline between rows."""
    lines = ["|".join(_text(value) for value in row) for row in rows]
    return len(lines), hashlib.md5("\n".join(lines).encode()).hexdigest()


# ---------------------------------------------------------------------------------------------
# Verifiers
# ---------------------------------------------------------------------------------------------

_FRAME_HEAD = '''"""%(doc)s"""

from __future__ import annotations

import asyncio
import os
import sys

import asyncpg

%(constants)s


def report(ok, what):
    print(("[ok] " if ok else "[FAIL] ") + what)
    return bool(ok)


async def fingerprint(connection, table, columns, key):
    """Row count and md5 of a table's rows in key order (values as text, NULL as ~)."""
    values = ", ".join("coalesce((%%s)::text, '~')" %% column for column in columns)
    row = await connection.fetchrow(
        "SELECT count(*) AS n, md5(coalesce(string_agg(concat_ws('|', " + values + "), E'\\\\n'"
        " ORDER BY " + key + "), '')) AS digest FROM " + table
    )
    return int(row["n"]), row["digest"]


async def same_rows(connection, table, columns, key, expected):
    try:
        found = await fingerprint(connection, table, columns, key)
    except asyncpg.PostgresError as error:
        return report(False, table + " unchanged (" + str(error).splitlines()[0] + ")")
    return report(
        found == tuple(expected),
        "%%s holds exactly the expected rows (%%d expected, %%d found)"
        %% (table, expected[0], found[0]),
    )


async def columns_of(connection, schema, table):
    """[(name, type as format_type prints it, not null)] of a relation, in order."""
    rows = await connection.fetch(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull"
        " FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped"
        " ORDER BY a.attnum",
        schema,
        table,
    )
    return [(r["attname"], r["type"], r["attnotnull"]) for r in rows]


async def relkind(connection, schema, name):
    """pg_class.relkind of schema.name, or None."""
    return await connection.fetchval(
        "SELECT c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = $1 AND c.relname = $2",
        schema,
        name,
    )


async def constraint(connection, schema, table, name):
    """(contype, definition) of a named constraint of schema.table, or None."""
    row = await connection.fetchrow(
        "SELECT con.contype::text AS kind, pg_get_constraintdef(con.oid) AS definition"
        " FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = $1 AND c.relname = $2 AND con.conname = $3",
        schema,
        table,
        name,
    )
    return None if row is None else (row["kind"], row["definition"])


async def index_definition(connection, schema, name):
    """pg_get_indexdef of a named index, or None."""
    return await connection.fetchval(
        "SELECT pg_get_indexdef(c.oid) FROM pg_class c"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind = 'i'",
        schema,
        name,
    )


async def unchanged(connection, tables):
    """Every table of tables ({name: (columns, (count, digest))}) still holds its rows."""
    ok = True
    for table, (columns, expected) in tables.items():
        ok &= await same_rows(connection, table, columns, "id", expected)
    return ok


async def violation(connection, statement):
    """Run statement in a transaction that is rolled back; the name of the constraint it broke
    ("" for a violation without a name), or None when it went through."""
    transaction = connection.transaction()
    await transaction.start()
    try:
        await connection.execute(statement)
    except asyncpg.IntegrityConstraintViolationError as error:
        return getattr(error, "constraint_name", None) or ""
    finally:
        await transaction.rollback()
    return None


'''

_FRAME_TAIL = """

async def main():
    database = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("POSTGRES_DATABASE")
    try:
        if os.environ.get("POSTGRES_HOST") or not os.environ.get("DATABASE_URL"):
            connection = await asyncpg.connect(
                host=os.environ.get("POSTGRES_HOST", "localhost"),
                port=int(os.environ.get("POSTGRES_PORT", "5432")),
                user=os.environ.get("POSTGRES_USERNAME", "postgres"),
                password=os.environ.get("POSTGRES_PASSWORD") or None,
                database=database,
            )
        else:
            connection = await asyncpg.connect(os.environ["DATABASE_URL"])
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
        print("cannot connect to the database: " + str(error))
        return 1
    try:
        passed = await check(connection)
    except asyncpg.PostgresError as error:
        report(False, "query failed: " + str(error).splitlines()[0])
        passed = False
    finally:
        await connection.close()
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
"""


def verifier_source(doc: str, constants: dict[str, object], check: str) -> str:
    """A complete ``verify.py``: the docstring, ``NAME = repr(value)`` constants, the shared
    helpers, the task's ``async def check(connection)`` source, and the entry point."""
    lines = [f"{name} = {value!r}" for name, value in constants.items()]
    head = _FRAME_HEAD % {"doc": doc.strip(), "constants": "\n".join(lines)}
    return head + check.strip("\n") + "\n" + _FRAME_TAIL
