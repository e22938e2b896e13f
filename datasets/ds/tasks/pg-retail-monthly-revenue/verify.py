"""Verifier of pg-retail-monthly-revenue (MCPMark contract: exit code 0 means PASS).

Checks that public.monthly_revenue is a table with month date, order_count integer, items_sold
integer, revenue numeric(12,2) in order and a primary key on month; that it holds exactly one
row per month with completed orders, with the right counts and revenue (completed orders only);
and that the shop's tables are unchanged.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from decimal import Decimal
from typing import NoReturn

import asyncpg

EXPECTED_COLUMNS = [('month', 'date'), ('order_count', 'integer'), ('items_sold', 'integer'), ('revenue', 'numeric(12,2)')]
EXPECTED_ROWS = [('2023-01-01', 144, 1112, '109943.83'), ('2023-02-01', 151, 1162, '111059.14'), ('2023-03-01', 166, 1211, '119694.22'), ('2023-04-01', 137, 1037, '97954.16'), ('2023-05-01', 134, 945, '93346.20'), ('2023-06-01', 152, 1045, '103579.98'), ('2023-07-01', 154, 1085, '106875.21'), ('2023-08-01', 145, 1069, '105234.15'), ('2023-09-01', 160, 1236, '115405.68'), ('2023-10-01', 150, 1111, '109084.73'), ('2023-11-01', 148, 1060, '98303.00'), ('2023-12-01', 164, 1107, '102133.27'), ('2024-01-01', 147, 1103, '106957.75'), ('2024-02-01', 138, 1002, '103798.31'), ('2024-03-01', 155, 1159, '112286.20'), ('2024-04-01', 138, 974, '92492.75'), ('2024-05-01', 162, 1245, '122467.77'), ('2024-06-01', 156, 1192, '108057.14'), ('2024-07-01', 161, 1193, '122469.83'), ('2024-08-01', 144, 1099, '108318.17'), ('2024-09-01', 150, 1031, '102608.17'), ('2024-10-01', 157, 1170, '106249.42'), ('2024-11-01', 163, 1119, '105617.43'), ('2024-12-01', 151, 1085, '104151.36')]
UNCHANGED = {'customers': (('id', 'full_name', 'email', 'city', 'signed_up'), (900, '53a140c00a9f328ef028b8623dbdc48a')), 'products': (('id', 'sku', 'name', 'category', 'unit_price'), (120, 'da9b10f314305abae670f12c04622148')), 'orders': (('id', 'customer_id', 'ordered_at', 'status'), (6000, 'a46df722692d0e93eeecb476416e57bb')), 'order_items': (('id', 'order_id', 'product_id', 'quantity', 'unit_price'), (14484, 'd08451ab1e0cda5c9314c94219581fa2')), 'payments': (('id', 'order_id', 'paid_on', 'amount', 'method'), (4410, 'aaec4b790dbf518d49516bfa528955cc'))}


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
    kind = await relkind(connection, "public", "monthly_revenue")
    if not report(kind == "r", "public.monthly_revenue is a table"):
        return False
    columns = [
        (name, type_)
        for name, type_, _ in await columns_of(connection, "public", "monthly_revenue")
    ]
    if not report(columns == EXPECTED_COLUMNS, "columns: " + repr(EXPECTED_COLUMNS)):
        print("    found: " + repr(columns))
        return False
    key = await connection.fetchval(
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE conrelid = 'public.monthly_revenue'::regclass AND contype = 'p'"
    )
    ok = report(key == "PRIMARY KEY (month)", "primary key on month")
    records = await connection.fetch(
        "SELECT month, order_count, items_sold, revenue FROM public.monthly_revenue ORDER BY month"
    )
    found = [(r[0].isoformat(), r[1], r[2], r[3]) for r in records]
    expected = [(m, c, i, Decimal(v)) for m, c, i, v in EXPECTED_ROWS]
    ok &= report(len(found) == len(expected), f"{len(expected)} monthly rows (found {len(found)})")
    wrong = [row for row in expected if row not in found]
    ok &= report(not wrong, "every month's order_count, items_sold and revenue are right")
    for row in wrong[:5]:
        print("    expected: " + repr(row))
    ok &= await unchanged(connection, UNCHANGED)
    return ok


def main(check: Callable[[asyncpg.Connection], Awaitable[bool]]) -> NoReturn:
    """Run ``check`` against the task's database and exit 0 when it passes."""
    sys.exit(asyncio.run(verify(check)))


if __name__ == "__main__":
    main(check)
