"""Verifier of pg-clinic-lab-results (MCPMark contract: exit code 0 means PASS).

Checks clinic.lab_results: columns, types and NOT NULL in order, the identity id and its primary
key, the cascading foreign key to clinic.appointments, the named check and unique constraints
(by definition and behaviour), the taken_on index, that the table is empty and that no table of
that name was made in public; and that the clinic's tables are unchanged.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import NoReturn

import asyncpg

EXPECTED_COLUMNS = [('id', 'bigint', True), ('appointment_id', 'integer', True), ('test_code', 'text', True), ('value', 'numeric(10,3)', True), ('unit', 'text', True), ('taken_on', 'date', True)]
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


async def constraint(
    connection: asyncpg.Connection, schema: str, table: str, name: str
) -> tuple[str, str] | None:
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


async def violation(connection: asyncpg.Connection, statement: str) -> str | None:
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
    ok = report(
        await relkind(connection, "public", "lab_results") is None,
        "no lab_results table outside the clinic schema",
    )
    columns = await columns_of(connection, "clinic", "lab_results")
    if not report(
        columns == EXPECTED_COLUMNS, "clinic.lab_results columns: " + repr(EXPECTED_COLUMNS)
    ):
        print("    found: " + repr(columns))
        return False
    identity = await connection.fetchval(
        "SELECT attidentity::text FROM pg_attribute"
        " WHERE attrelid = 'clinic.lab_results'::regclass AND attname = 'id'"
    )
    ok &= report(identity == "a", "id is GENERATED ALWAYS AS IDENTITY")
    keys = await connection.fetch(
        "SELECT contype::text AS kind, conname, pg_get_constraintdef(oid) AS definition"
        " FROM pg_constraint WHERE conrelid = 'clinic.lab_results'::regclass"
    )
    primary = [k["definition"] for k in keys if k["kind"] == "p"]
    ok &= report(primary == ["PRIMARY KEY (id)"], "primary key on id")
    foreign = [k["definition"] for k in keys if k["kind"] == "f"]
    ok &= report(
        foreign
        == ["FOREIGN KEY (appointment_id) REFERENCES clinic.appointments(id) ON DELETE CASCADE"],
        "appointment_id references clinic.appointments(id) ON DELETE CASCADE (found "
        + repr(foreign)
        + ")",
    )
    insert = (
        "INSERT INTO clinic.lab_results (appointment_id, test_code, value, unit, taken_on) VALUES "
    )
    broke = await violation(connection, insert + "(1, 'HB', -1, 'g/dL', '2024-01-01')")
    ok &= report(
        broke == "lab_results_value_nonnegative",
        "lab_results_value_nonnegative rejects a negative value",
    )
    broke = await violation(connection, insert + "(1, 'HB', 0, 'g/dL', '2024-01-01')")
    ok &= report(broke is None, "a zero value is accepted")
    unique = await constraint(
        connection, "clinic", "lab_results", "lab_results_appointment_test_key"
    )
    ok &= report(
        unique == ("u", "UNIQUE (appointment_id, test_code)"),
        "lab_results_appointment_test_key is unique on (appointment_id, test_code)",
    )
    broke = await violation(
        connection,
        insert + "(1, 'HB', 1, 'g/dL', '2024-01-01'), (1, 'HB', 2, 'g/dL', '2024-01-02')",
    )
    ok &= report(
        broke == "lab_results_appointment_test_key",
        "a second result of the same test for an appointment is rejected",
    )
    index = await index_definition(connection, "clinic", "lab_results_taken_on_idx")
    ok &= report(
        index == "CREATE INDEX lab_results_taken_on_idx ON clinic.lab_results"
        " USING btree (taken_on)",
        "index lab_results_taken_on_idx on (taken_on)",
    )
    count = await connection.fetchval("SELECT count(*) FROM clinic.lab_results")
    ok &= report(count == 0, "clinic.lab_results is empty")
    ok &= await unchanged(connection, UNCHANGED)
    return ok


def main(check: Callable[[asyncpg.Connection], Awaitable[bool]]) -> NoReturn:
    """Run ``check`` against the task's database and exit 0 when it passes."""
    sys.exit(asyncio.run(verify(check)))


if __name__ == "__main__":
    main(check)
