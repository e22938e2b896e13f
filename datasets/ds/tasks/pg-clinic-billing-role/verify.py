"""Verifier of pg-clinic-billing-role (MCPMark contract: exit code 0 means PASS).

Checks that the role cl_billing exists without login, has USAGE on clinic, SELECT on all of
clinic.appointments, SELECT on patients.id and patients.full_name only, UPDATE on
appointments.fee only and no other privilege on any clinic table; and that no data changed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import NoReturn

import asyncpg

EXPECTED_COLUMN_PRIVILEGES = [('appointments', 'doctor_id', 'SELECT'), ('appointments', 'fee', 'SELECT'), ('appointments', 'fee', 'UPDATE'), ('appointments', 'id', 'SELECT'), ('appointments', 'patient_id', 'SELECT'), ('appointments', 'scheduled_on', 'SELECT'), ('appointments', 'status', 'SELECT'), ('patients', 'full_name', 'SELECT'), ('patients', 'id', 'SELECT')]
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


async def role_exists(connection: asyncpg.Connection, role: str) -> bool:
    """Report whether ``role`` exists."""
    found = await connection.fetchval("SELECT count(*) FROM pg_roles WHERE rolname = $1", role)
    return report(found == 1, "role " + role + " exists")


async def cannot_log_in(
    connection: asyncpg.Connection, role: str, *, nor_bypass_rls: bool = False
) -> bool:
    """Report that ``role`` exists with neither LOGIN nor SUPERUSER (nor, with
    ``nor_bypass_rls``, BYPASSRLS)."""
    flags = await connection.fetchrow(
        "SELECT rolcanlogin, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = $1", role
    )
    barred = flags is not None and not flags["rolcanlogin"] and not flags["rolsuper"]
    if nor_bypass_rls:
        return report(
            barred and flags is not None and not flags["rolbypassrls"],
            role + " cannot log in and does not bypass RLS",
        )
    return report(barred, role + " cannot log in")


async def schema_usage(connection: asyncpg.Connection, role: str, schema: str) -> bool:
    """Report that ``role`` has USAGE on ``schema``."""
    allowed = await connection.fetchval(
        "SELECT has_schema_privilege($1, $2, 'USAGE')", role, schema
    )
    return report(allowed, role + " has USAGE on schema " + schema)


async def table_privilege(
    connection: asyncpg.Connection, role: str, table: str, privileges: str
) -> bool:
    """Whether ``role`` holds any of ``privileges`` (comma-separated) on the whole ``table``."""
    return bool(
        await connection.fetchval("SELECT has_table_privilege($1, $2, $3)", role, table, privileges)
    )


async def column_grants(
    connection: asyncpg.Connection, role: str, schema: str, privileges: Sequence[str]
) -> list[tuple[str, str, str]]:
    """Sorted (table, column, privilege) of every column of ``schema``'s tables on which ``role``
    holds one of ``privileges`` (directly or through a table-wide grant)."""
    rows = await connection.fetch(
        "SELECT c.relname AS tbl, a.attname AS col, p.privilege"
        " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped"
        " CROSS JOIN unnest($3::text[]) AS p(privilege)"
        " WHERE n.nspname = $2 AND c.relkind = 'r'"
        " AND has_column_privilege($1, c.oid, a.attnum, p.privilege)",
        role,
        schema,
        list(privileges),
    )
    return sorted((r["tbl"], r["col"], r["privilege"]) for r in rows)


async def check(connection: asyncpg.Connection) -> bool:
    if not await role_exists(connection, "cl_billing"):
        return False
    ok = await cannot_log_in(connection, "cl_billing")
    ok &= await schema_usage(connection, "cl_billing", "clinic")
    ok &= report(
        await table_privilege(connection, "cl_billing", "clinic.appointments", "SELECT"),
        "cl_billing may SELECT every column of clinic.appointments",
    )
    found = await column_grants(
        connection, "cl_billing", "clinic", ["SELECT", "INSERT", "UPDATE", "REFERENCES"]
    )
    expected = sorted(tuple(item) for item in EXPECTED_COLUMN_PRIVILEGES)
    ok &= report(
        found == expected,
        "column privileges are exactly: SELECT on appointments, SELECT on patients.id"
        " and patients.full_name, UPDATE on appointments.fee",
    )
    for item in sorted(set(expected) - set(found)):
        print("    missing: " + repr(item))
    for item in sorted(set(found) - set(expected)):
        print("    unexpected: " + repr(item))
    for table in ("departments", "doctors", "patients", "appointments"):
        whole = await table_privilege(
            connection, "cl_billing", "clinic." + table, "DELETE, TRUNCATE, TRIGGER"
        )
        ok &= report(not whole, "no DELETE, TRUNCATE or TRIGGER on clinic." + table)
    ok &= await unchanged(connection, UNCHANGED)
    return ok


def main(check: Callable[[asyncpg.Connection], Awaitable[bool]]) -> NoReturn:
    """Run ``check`` against the task's database and exit 0 when it passes."""
    sys.exit(asyncio.run(verify(check)))


if __name__ == "__main__":
    main(check)
