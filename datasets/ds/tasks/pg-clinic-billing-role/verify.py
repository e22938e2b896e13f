"""Verifier of pg-clinic-billing-role (MCPMark contract: exit code 0 means PASS).

Checks that the role cl_billing exists without login, has USAGE on clinic, SELECT on all of
clinic.appointments, SELECT on patients.id and patients.full_name only, UPDATE on
appointments.fee only and no other privilege on any clinic table; and that no data changed."""

from __future__ import annotations

import asyncio
import os
import sys

import asyncpg

EXPECTED_COLUMN_PRIVILEGES = [('appointments', 'doctor_id', 'SELECT'), ('appointments', 'fee', 'SELECT'), ('appointments', 'fee', 'UPDATE'), ('appointments', 'id', 'SELECT'), ('appointments', 'patient_id', 'SELECT'), ('appointments', 'scheduled_on', 'SELECT'), ('appointments', 'status', 'SELECT'), ('patients', 'full_name', 'SELECT'), ('patients', 'id', 'SELECT')]
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


async def check(connection):
    role = await connection.fetchrow(
        "SELECT rolcanlogin, rolsuper FROM pg_roles WHERE rolname = 'cl_billing'"
    )
    if not report(role is not None, "role cl_billing exists"):
        return False
    ok = report(not role["rolcanlogin"] and not role["rolsuper"], "cl_billing cannot log in")
    ok &= report(
        await connection.fetchval("SELECT has_schema_privilege('cl_billing', 'clinic', 'USAGE')"),
        "cl_billing has USAGE on schema clinic",
    )
    ok &= report(
        await connection.fetchval(
            "SELECT has_table_privilege('cl_billing', 'clinic.appointments', 'SELECT')"
        ),
        "cl_billing may SELECT every column of clinic.appointments",
    )
    granted = await connection.fetch(
        "SELECT c.relname AS tbl, a.attname AS col, p.privilege"
        " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped"
        " CROSS JOIN unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'REFERENCES']) AS p(privilege)"
        " WHERE n.nspname = 'clinic' AND c.relkind = 'r'"
        " AND has_column_privilege('cl_billing', c.oid, a.attnum, p.privilege)"
        " ORDER BY 1, 2, 3"
    )
    found = sorted((r["tbl"], r["col"], r["privilege"]) for r in granted)
    expected = sorted(tuple(item) for item in EXPECTED_COLUMN_PRIVILEGES)
    ok &= report(found == expected,
                 "column privileges are exactly: SELECT on appointments, SELECT on patients.id"
                 " and patients.full_name, UPDATE on appointments.fee")
    for item in sorted(set(expected) - set(found)):
        print("    missing: " + repr(item))
    for item in sorted(set(found) - set(expected)):
        print("    unexpected: " + repr(item))
    for table in ("departments", "doctors", "patients", "appointments"):
        whole = await connection.fetchval(
            "SELECT has_table_privilege('cl_billing', $1, 'DELETE, TRUNCATE, TRIGGER')",
            "clinic." + table,
        )
        ok &= report(not whole, "no DELETE, TRUNCATE or TRIGGER on clinic." + table)
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
