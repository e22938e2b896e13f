"""Verifier of pg-retail-order-totals (MCPMark contract: exit code 0 means PASS).

Checks that orders has the new last column total_amount numeric(12,2) NOT NULL, that every
order's total is the sum of quantity * unit_price of its items (0 without items) and its other
columns are unchanged, that a new order gets 0 by default, and that the other tables are
unchanged.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import NoReturn

import asyncpg

EXPECTED_COLUMNS = [('id', 'integer', True), ('customer_id', 'integer', True), ('ordered_at', 'date', True), ('status', 'text', True), ('total_amount', 'numeric(12,2)', True)]
EXPECTED_ORDERS = (6000, '3a4fa1b4e4e8c03b4dcb5a0a2133dc5f')
KEPT_TABLES = {'customers': (('id', 'full_name', 'email', 'city', 'signed_up'), (900, '53a140c00a9f328ef028b8623dbdc48a')), 'products': (('id', 'sku', 'name', 'category', 'unit_price'), (120, 'da9b10f314305abae670f12c04622148')), 'order_items': (('id', 'order_id', 'product_id', 'quantity', 'unit_price'), (14484, 'd08451ab1e0cda5c9314c94219581fa2')), 'payments': (('id', 'order_id', 'paid_on', 'amount', 'method'), (4410, 'aaec4b790dbf518d49516bfa528955cc'))}


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
    columns = await columns_of(connection, "public", "orders")
    if not report(columns == EXPECTED_COLUMNS, "orders columns: " + repr(EXPECTED_COLUMNS)):
        print("    found: " + repr(columns))
        return False
    ok = await same_rows(
        connection,
        "orders",
        ["id", "customer_id", "ordered_at", "status", "total_amount"],
        "id",
        EXPECTED_ORDERS,
    )
    transaction = connection.transaction()
    await transaction.start()
    try:
        default = await connection.fetchval(
            "INSERT INTO orders (id, customer_id, ordered_at, status)"
            " VALUES (999999, 1, '2024-06-01', 'pending') RETURNING total_amount"
        )
    finally:
        await transaction.rollback()
    ok &= report(default is not None and default == 0, "total_amount defaults to 0")
    ok &= await unchanged(connection, KEPT_TABLES)
    return ok


def main(check: Callable[[asyncpg.Connection], Awaitable[bool]]) -> NoReturn:
    """Run ``check`` against the task's database and exit 0 when it passes."""
    sys.exit(asyncio.run(verify(check)))


if __name__ == "__main__":
    main(check)
