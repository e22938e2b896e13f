"""Verifier of pg-clinic-doctor-workload (MCPMark contract: exit code 0 means PASS).

Checks that clinic.doctor_workload is a materialized view with the columns doctor_id,
doctor_name, department, completed, no_shows, revenue in order, one row per doctor (doctors
without appointments included) with the right counts and completed-fee revenue, that it has the
unique index doctor_workload_doctor_id_idx on doctor_id, and that the tables are unchanged.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from decimal import Decimal
from typing import NoReturn

import asyncpg

EXPECTED_COLUMNS = ['doctor_id', 'doctor_name', 'department', 'completed', 'no_shows', 'revenue']
EXPECTED_ROWS = [(1, 'Keira Torres', 'Dermatology', 138, 23, '21940.00'), (2, 'Hugo Pereira', 'General Practice', 145, 23, '22330.00'), (3, 'Hugo Ibsen', 'Neurology', 154, 15, '23725.00'), (4, 'Uri Young', 'Orthopedics', 145, 23, '21040.00'), (5, 'Felix Ibsen', 'Pediatrics', 156, 27, '23425.00'), (6, 'Clio Fischer', 'Cardiology', 140, 30, '22445.00'), (7, 'Emil Jovanovic', 'Dermatology', 131, 21, '19615.00'), (8, 'Emil Horvat', 'General Practice', 156, 26, '24220.00'), (9, 'Mira Keller', 'Neurology', 130, 19, '19055.00'), (10, 'Amara Nowak', 'Orthopedics', 174, 19, '28055.00'), (11, 'Amara Young', 'Pediatrics', 137, 27, '21620.00'), (12, 'Benedikt Ortega', 'Cardiology', 162, 21, '26200.00'), (13, 'Cora Castillo', 'Dermatology', 152, 23, '23825.00'), (14, 'Dario Urban', 'General Practice', 125, 21, '18940.00'), (15, 'Pavel Jovanovic', 'Neurology', 143, 24, '22355.00'), (16, 'Keira Ibsen', 'Orthopedics', 169, 30, '26190.00'), (17, 'Cora Brandt', 'Pediatrics', 158, 17, '24270.00'), (18, 'Felix Weber', 'Cardiology', 157, 16, '25090.00'), (19, 'Benedikt Fischer', 'Dermatology', 167, 15, '24570.00'), (20, 'Benedikt Weber', 'General Practice', 156, 18, '24480.00'), (21, 'Uri Eriksen', 'Neurology', 136, 20, '21215.00'), (22, 'Yara Rossi', 'Orthopedics', 123, 18, '18955.00'), (23, 'Pavel Brandt', 'Pediatrics', 161, 18, '25505.00'), (24, 'Yara Horvat', 'Cardiology', 155, 23, '23465.00'), (25, 'Sven Nowak', 'Dermatology', 128, 23, '20115.00'), (26, 'Greta Fischer', 'General Practice', 145, 27, '21565.00'), (27, 'Cora Urban', 'Neurology', 158, 22, '23450.00'), (28, 'Amara Marsh', 'Orthopedics', 144, 27, '23005.00'), (29, 'Emil Lindqvist', 'Pediatrics', 134, 22, '20085.00'), (30, 'Luca Nowak', 'Cardiology', 157, 20, '24055.00'), (31, 'Uri Lindqvist', 'Dermatology', 148, 25, '24055.00'), (32, 'Alma Young', 'General Practice', 152, 29, '23755.00'), (33, 'Amara Castillo', 'Neurology', 149, 28, '23390.00'), (34, 'Benedikt Weber', 'Orthopedics', 167, 25, '25220.00'), (35, 'Pavel Lindqvist', 'Pediatrics', 127, 21, '19295.00'), (36, 'Boris Zeller', 'Cardiology', 0, 0, '0.00')]
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


async def index_definition(connection: asyncpg.Connection, schema: str, name: str) -> str | None:
    """pg_get_indexdef of a named index, or None."""
    definition: str | None = await connection.fetchval(
        "SELECT pg_get_indexdef(c.oid) FROM pg_class c"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind = 'i'",
        schema,
        name,
    )
    return definition


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
    kind = await relkind(connection, "clinic", "doctor_workload")
    if not report(kind == "m", "clinic.doctor_workload is a materialized view"):
        return False
    names = [name for name, _, _ in await columns_of(connection, "clinic", "doctor_workload")]
    if not report(names == EXPECTED_COLUMNS, "columns are " + ", ".join(EXPECTED_COLUMNS)):
        print("    found: " + ", ".join(names))
        return False
    records = await connection.fetch(
        "SELECT doctor_id, doctor_name, department, completed, no_shows, revenue"
        " FROM clinic.doctor_workload"
    )
    found = sorted(
        (int(r[0]), r[1], r[2], int(r[3]), int(r[4]), Decimal(str(r[5]))) for r in records
    )
    expected = [(a, b, c, d, e, Decimal(f)) for a, b, c, d, e, f in EXPECTED_ROWS]
    ok = report(
        len(found) == len(expected), f"{len(expected)} rows, one per doctor (found {len(found)})"
    )
    wrong = [row for row in expected if row not in found]
    ok &= report(not wrong, "every doctor's completed, no_shows and revenue are right")
    for row in wrong[:5]:
        print("    expected: " + repr(row))
    index = await index_definition(connection, "clinic", "doctor_workload_doctor_id_idx")
    ok &= report(
        index == "CREATE UNIQUE INDEX doctor_workload_doctor_id_idx ON clinic.doctor_workload"
        " USING btree (doctor_id)",
        "unique index doctor_workload_doctor_id_idx on (doctor_id)",
    )
    ok &= await unchanged(connection, UNCHANGED)
    return ok


def main(check: Callable[[asyncpg.Connection], Awaitable[bool]]) -> NoReturn:
    """Run ``check`` against the task's database and exit 0 when it passes."""
    sys.exit(asyncio.run(verify(check)))


if __name__ == "__main__":
    main(check)
