"""Verifier of pg-clinic-noshow-report (MCPMark contract: exit code 0 means PASS).

Checks that clinic.department_no_show_rates is a table with department_id integer,
department_name text, appointments integer, no_shows integer, no_show_rate numeric(5,2) in order
and a primary key on department_id, that it has one row per department with the 2024 counts
(cancelled appointments excluded) and the rounded rate (0 without appointments), and that the
tables are unchanged.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from decimal import Decimal
from typing import NoReturn

import asyncpg

EXPECTED_COLUMNS = [('department_id', 'integer'), ('department_name', 'text'), ('appointments', 'integer'), ('no_shows', 'integer'), ('no_show_rate', 'numeric(5,2)')]
EXPECTED_ROWS = [(1, 'Cardiology', 535, 58, '10.84'), (2, 'Dermatology', 567, 64, '11.29'), (3, 'General Practice', 591, 74, '12.52'), (4, 'Neurology', 578, 58, '10.03'), (5, 'Orthopedics', 639, 79, '12.36'), (6, 'Pediatrics', 582, 76, '13.06'), (7, 'Radiology', 0, 0, '0.00')]
UNCHANGED = {'clinic.departments': (('id', 'name'), (7, '5976a622f7105c5d9be1eb8b8da53473')), 'clinic.doctors': (('id', 'full_name', 'department_id', 'login_name'), (36, '480d5e960b24702d6d8b276012cd1ac1')), 'clinic.patients': (('id', 'full_name', 'birth_date', 'phone', 'email', 'street', 'city', 'postcode'), (1800, '7df407722181a45ff9c875556e82fd47')), 'clinic.appointments': (('id', 'patient_id', 'doctor_id', 'scheduled_on', 'status', 'fee'), (8000, '4d767935e076dfaa79191173e379b073'))}


def report(ok: bool, what: str) -> bool:
    """Print ``[ok] what`` or ``[FAIL] what`` and return whether the check passed."""
    print(("[ok] " if ok else "[FAIL] ") + what)
    return bool(ok)


async def table_fingerprint(
    connection: asyncpg.Connection, table: str, columns: Sequence[str], key: str
) -> tuple[int, str]:
    """Row count and md5 of a table's rows in key order (values as text, NULL as ~)."""
    values = ", ".join(f"coalesce(({column})::text, '~')" for column in columns)
    row = await connection.fetchrow(
        "SELECT count(*) AS n, md5(coalesce(string_agg(concat_ws('|', " + values + "), E'\\n'"
        " ORDER BY " + key + "), '')) AS digest FROM " + table
    )
    assert row is not None  # an aggregate without GROUP BY returns one row
    return int(row["n"]), str(row["digest"])


async def same_rows(
    connection: asyncpg.Connection,
    table: str,
    columns: Sequence[str],
    key: str,
    expected: tuple[int, str],
) -> bool:
    """Report that ``table`` holds exactly the rows whose fingerprint is ``expected``."""
    try:
        found = await table_fingerprint(connection, table, columns, key)
    except asyncpg.PostgresError as error:
        return report(False, table + " unchanged (" + str(error).splitlines()[0] + ")")
    return report(
        found == tuple(expected),
        f"{table} holds exactly the expected rows ({expected[0]} expected, {found[0]} found)",
    )


async def unchanged(
    connection: asyncpg.Connection,
    tables: Mapping[str, tuple[Sequence[str], tuple[int, str]]],
) -> bool:
    """Report that every table of ``tables`` ({name: (columns, fingerprint)}) keeps its rows."""
    ok = True
    for table, (columns, expected) in tables.items():
        ok &= await same_rows(connection, table, columns, "id", expected)
    return ok


async def columns_of(
    connection: asyncpg.Connection, schema: str, table: str
) -> list[tuple[str, str, bool]]:
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


async def relkind(connection: asyncpg.Connection, schema: str, name: str) -> str | None:
    """pg_class.relkind of schema.name, or None."""
    kind: str | None = await connection.fetchval(
        "SELECT c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = $1 AND c.relname = $2",
        schema,
        name,
    )
    return kind


async def verify(check: Callable[[asyncpg.Connection], Awaitable[bool]]) -> int:
    """Connect as MCPMark's runners describe (``POSTGRES_*`` or ``DATABASE_URL``; the database
    from the first argument or ``POSTGRES_DATABASE``), run ``check``, print PASS or FAIL, and
    return the exit code."""
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


async def check(connection: asyncpg.Connection) -> bool:
    kind = await relkind(connection, "clinic", "department_no_show_rates")
    if not report(kind == "r", "clinic.department_no_show_rates is a table"):
        return False
    columns = [
        (name, type_)
        for name, type_, _ in await columns_of(connection, "clinic", "department_no_show_rates")
    ]
    if not report(columns == EXPECTED_COLUMNS, "columns: " + repr(EXPECTED_COLUMNS)):
        print("    found: " + repr(columns))
        return False
    key = await connection.fetchval(
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE conrelid = 'clinic.department_no_show_rates'::regclass AND contype = 'p'"
    )
    ok = report(key == "PRIMARY KEY (department_id)", "primary key on department_id")
    records = await connection.fetch(
        "SELECT department_id, department_name, appointments, no_shows, no_show_rate"
        " FROM clinic.department_no_show_rates ORDER BY department_id"
    )
    found = [tuple(r) for r in records]
    expected = [(a, b, c, d, Decimal(e)) for a, b, c, d, e in EXPECTED_ROWS]
    ok &= report(
        len(found) == len(expected),
        f"{len(expected)} rows, one per department (found {len(found)})",
    )
    wrong = [row for row in expected if row not in found]
    ok &= report(not wrong, "every department's counts and rate are right")
    for row in wrong[:5]:
        print("    expected: " + repr(row))
    ok &= await unchanged(connection, UNCHANGED)
    return ok


def main(check: Callable[[asyncpg.Connection], Awaitable[bool]]) -> NoReturn:
    """Run ``check`` against the task's database and exit 0 when it passes."""
    sys.exit(asyncio.run(verify(check)))


if __name__ == "__main__":
    main(check)
