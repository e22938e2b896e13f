"""Verifier of pg-clinic-doctor-rls (MCPMark contract: exit code 0 means PASS).

Checks the role cl_doctor (no login, no RLS bypass; USAGE on clinic; SELECT and nothing else on
appointments and doctors), that row-level security is enabled on clinic.appointments with the
SELECT policy appointments_own_doctor for cl_doctor, and, acting as cl_doctor, that a session
without clinic.doctor_id sees no appointment and one with it sees exactly that doctor's; and
that no data changed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import NoReturn

import asyncpg

EXPECTED_COUNTS = {3: 220, 17: 228, 35: 207, 36: 0}
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


async def may_select(
    connection: asyncpg.Connection, role: str, table: str, shown: str | None = None
) -> bool:
    """Report that ``role`` may SELECT the whole ``table`` (named ``shown`` in the message)."""
    allowed = await table_privilege(connection, role, table, "SELECT")
    return report(allowed, role + " may SELECT from " + (shown or table))


async def table_privilege(
    connection: asyncpg.Connection, role: str, table: str, privileges: str
) -> bool:
    """Whether ``role`` holds any of ``privileges`` (comma-separated) on the whole ``table``."""
    return bool(
        await connection.fetchval("SELECT has_table_privilege($1, $2, $3)", role, table, privileges)
    )


async def any_column_privilege(
    connection: asyncpg.Connection, role: str, table: str, privileges: str
) -> bool:
    """Whether ``role`` holds any of ``privileges`` on ``table`` or on any of its columns."""
    return bool(
        await connection.fetchval(
            "SELECT has_any_column_privilege($1, $2, $3)", role, table, privileges
        )
    )


async def visible(connection: asyncpg.Connection, doctor: int | None) -> tuple[int, int]:
    """(rows, rows of other doctors) clinic.appointments shows cl_doctor for a doctor id
    (None: the setting is not made)."""
    transaction = connection.transaction()
    await transaction.start()
    try:
        await connection.execute("SET LOCAL ROLE cl_doctor")
        if doctor is not None:
            await connection.execute("SELECT set_config('clinic.doctor_id', $1, true)", str(doctor))
        row = await connection.fetchrow(
            "SELECT count(*) AS n, count(*) FILTER (WHERE doctor_id IS DISTINCT FROM $1::int)"
            " AS others FROM clinic.appointments",
            doctor,
        )
        assert row is not None  # an aggregate without GROUP BY returns one row
        return int(row["n"]), int(row["others"])
    finally:
        await transaction.rollback()


async def check(connection: asyncpg.Connection) -> bool:
    if not await role_exists(connection, "cl_doctor"):
        return False
    ok = await cannot_log_in(connection, "cl_doctor", nor_bypass_rls=True)
    ok &= await schema_usage(connection, "cl_doctor", "clinic")
    for table in ("clinic.appointments", "clinic.doctors"):
        ok &= await may_select(connection, "cl_doctor", table)
        other = await any_column_privilege(
            connection, "cl_doctor", table, "INSERT, UPDATE, REFERENCES"
        ) or await table_privilege(connection, "cl_doctor", table, "DELETE, TRUNCATE, TRIGGER")
        ok &= report(not other, "cl_doctor has no other privilege on " + table)
    enabled = await connection.fetchval(
        "SELECT relrowsecurity FROM pg_class WHERE oid = 'clinic.appointments'::regclass"
    )
    ok &= report(enabled, "row-level security is enabled on clinic.appointments")
    policy = await connection.fetchrow(
        "SELECT polcmd::text AS command,"
        " ARRAY(SELECT rolname FROM pg_roles WHERE oid = ANY(polroles)) AS roles"
        " FROM pg_policy WHERE polrelid = 'clinic.appointments'::regclass"
        " AND polname = 'appointments_own_doctor'"
    )
    ok &= report(
        policy is not None and policy["command"] == "r" and list(policy["roles"]) == ["cl_doctor"],
        "policy appointments_own_doctor is for SELECT and cl_doctor",
    )
    try:
        shown = await visible(connection, None)
        ok &= report(
            shown == (0, 0),
            f"without clinic.doctor_id cl_doctor sees no appointment (saw {shown[0]})",
        )
        for doctor, count in sorted(EXPECTED_COUNTS.items()):
            shown = await visible(connection, doctor)
            ok &= report(
                shown == (count, 0),
                f"as doctor {doctor} cl_doctor sees exactly the {count} appointments of that"
                f" doctor (saw {shown[0]}, {shown[1]} of others)",
            )
    except asyncpg.PostgresError as error:
        ok = report(False, "querying as cl_doctor failed: " + str(error).splitlines()[0])
    ok &= await unchanged(connection, UNCHANGED)
    return ok


def main(check: Callable[[asyncpg.Connection], Awaitable[bool]]) -> NoReturn:
    """Run ``check`` against the task's database and exit 0 when it passes."""
    sys.exit(asyncio.run(verify(check)))


if __name__ == "__main__":
    main(check)
