"""Verifier of pg-clinic-split-contacts (MCPMark contract: exit code 0 means PASS).

Checks clinic.patient_contacts (columns, primary key, foreign key to patients, and one row per
patient with the phone and email the patient had, NULLs kept), that clinic.patients no longer
has phone and email but still holds every patient with the other values unchanged, and that the
other clinic tables are unchanged.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import NoReturn

import asyncpg

CONTACTS = (1800, 'f864e5e900c1e47238f886e61fa1f38f')
CONTACT_COLUMNS = [('patient_id', 'integer', True), ('phone', 'text', False), ('email', 'text', False)]
OTHER_TABLES = {'clinic.departments': (('id', 'name'), (7, '5976a622f7105c5d9be1eb8b8da53473')), 'clinic.doctors': (('id', 'full_name', 'department_id', 'login_name'), (36, '480d5e960b24702d6d8b276012cd1ac1')), 'clinic.appointments': (('id', 'patient_id', 'doctor_id', 'scheduled_on', 'status', 'fee'), (8000, '4d767935e076dfaa79191173e379b073'))}
PATIENTS = (1800, 'b9dca1f819824433cbba0b45143443b7')
PATIENT_COLUMNS = [('id', 'integer', True), ('full_name', 'text', True), ('birth_date', 'date', True), ('street', 'text', True), ('city', 'text', True), ('postcode', 'text', True)]


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
    columns = await columns_of(connection, "clinic", "patient_contacts")
    if not report(
        columns == CONTACT_COLUMNS, "clinic.patient_contacts columns: " + repr(CONTACT_COLUMNS)
    ):
        print("    found: " + repr(columns))
        return False
    keys = await connection.fetch(
        "SELECT contype::text AS kind, pg_get_constraintdef(oid) AS definition"
        " FROM pg_constraint WHERE conrelid = 'clinic.patient_contacts'::regclass"
        " AND contype IN ('p', 'f') ORDER BY contype"
    )
    found = [(k["kind"], k["definition"]) for k in keys]
    ok = report(
        found
        == [
            ("f", "FOREIGN KEY (patient_id) REFERENCES clinic.patients(id)"),
            ("p", "PRIMARY KEY (patient_id)"),
        ],
        "patient_id is the primary key and references clinic.patients(id)",
    )
    ok &= await same_rows(
        connection,
        "clinic.patient_contacts",
        ["patient_id", "phone", "email"],
        "patient_id",
        CONTACTS,
    )
    patients = await columns_of(connection, "clinic", "patients")
    ok &= report(
        patients == PATIENT_COLUMNS,
        "clinic.patients has lost phone and email and kept its other columns",
    )
    names = [column[0] for column in PATIENT_COLUMNS]
    if [column[0] for column in patients] == names:
        ok &= await same_rows(connection, "clinic.patients", names, "id", PATIENTS)
    ok &= await unchanged(connection, OTHER_TABLES)
    return ok


def main(check: Callable[[asyncpg.Connection], Awaitable[bool]]) -> NoReturn:
    """Run ``check`` against the task's database and exit 0 when it passes."""
    sys.exit(asyncio.run(verify(check)))


if __name__ == "__main__":
    main(check)
