"""Verifier of pg-clinic-doctor-rls (MCPMark contract: exit code 0 means PASS).

Checks the role cl_doctor (no login, no RLS bypass; USAGE on clinic; SELECT and nothing else on
appointments and doctors), that row-level security is enabled on clinic.appointments with the
SELECT policy appointments_own_doctor for cl_doctor, and, acting as cl_doctor, that a session
without clinic.doctor_id sees no appointment and one with it sees exactly that doctor's; and that
no data changed."""

from __future__ import annotations

import asyncio
import os
import sys

import asyncpg

EXPECTED_COUNTS = {3: 220, 17: 228, 35: 207, 36: 0}
UNCHANGED = {'clinic.departments': (('id', 'name'), (7, '5976a622f7105c5d9be1eb8b8da53473')), 'clinic.doctors': (('id', 'full_name', 'department_id', 'login_name'), (36, '480d5e960b24702d6d8b276012cd1ac1')), 'clinic.patients': (('id', 'full_name', 'birth_date', 'phone', 'email', 'street', 'city', 'postcode'), (1800, '7df407722181a45ff9c875556e82fd47')), 'clinic.appointments': (('id', 'patient_id', 'doctor_id', 'scheduled_on', 'status', 'fee'), (8000, '4d767935e076dfaa79191173e379b073'))}


def report(ok, what):
    print(("[ok] " if ok else "[FAIL] ") + what)
    return bool(ok)


async def fingerprint(connection, table, columns, key):
    """Row count and md5 of a table's rows in key order (values as text, NULL as ~)."""
    values = ", ".join("coalesce((%s)::text, '~')" % column for column in columns)
    row = await connection.fetchrow(
        "SELECT count(*) AS n, md5(coalesce(string_agg(concat_ws('|', " + values + "), E'\\n'"
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
        "%s holds exactly the expected rows (%d expected, %d found)"
        % (table, expected[0], found[0]),
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


async def visible(connection, doctor):
    """(rows, rows of other doctors) clinic.appointments shows cl_doctor for a doctor id
    (None: the setting is not made)."""
    transaction = connection.transaction()
    await transaction.start()
    try:
        await connection.execute("SET LOCAL ROLE cl_doctor")
        if doctor is not None:
            await connection.execute(
                "SELECT set_config('clinic.doctor_id', $1, true)", str(doctor)
            )
        row = await connection.fetchrow(
            "SELECT count(*) AS n, count(*) FILTER (WHERE doctor_id IS DISTINCT FROM $1::int)"
            " AS others FROM clinic.appointments",
            doctor,
        )
        return int(row["n"]), int(row["others"])
    finally:
        await transaction.rollback()


async def check(connection):
    role = await connection.fetchrow(
        "SELECT rolcanlogin, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = 'cl_doctor'"
    )
    if not report(role is not None, "role cl_doctor exists"):
        return False
    ok = report(not role["rolcanlogin"] and not role["rolsuper"] and not role["rolbypassrls"],
                "cl_doctor cannot log in and does not bypass RLS")
    ok &= report(
        await connection.fetchval("SELECT has_schema_privilege('cl_doctor', 'clinic', 'USAGE')"),
        "cl_doctor has USAGE on schema clinic",
    )
    for table in ("clinic.appointments", "clinic.doctors"):
        ok &= report(
            await connection.fetchval(
                "SELECT has_table_privilege('cl_doctor', $1, 'SELECT')", table
            ),
            "cl_doctor may SELECT from " + table,
        )
        ok &= report(
            not await connection.fetchval(
                "SELECT has_any_column_privilege('cl_doctor', $1, 'INSERT, UPDATE, REFERENCES')"
                " OR has_table_privilege('cl_doctor', $1, 'DELETE, TRUNCATE, TRIGGER')",
                table,
            ),
            "cl_doctor has no other privilege on " + table,
        )
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
        ok &= report(shown == (0, 0), "without clinic.doctor_id cl_doctor sees no appointment"
                     " (saw %d)" % shown[0])
        for doctor, count in sorted(EXPECTED_COUNTS.items()):
            shown = await visible(connection, doctor)
            ok &= report(shown == (count, 0), "as doctor %d cl_doctor sees exactly the %d"
                         " appointments of that doctor (saw %d, %d of others)"
                         % (doctor, count, shown[0], shown[1]))
    except asyncpg.PostgresError as error:
        ok = report(False, "querying as cl_doctor failed: " + str(error).splitlines()[0])
    ok &= await unchanged(connection, UNCHANGED)
    return ok


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
