"""Verifier of pg-retail-constraints (MCPMark contract: exit code 0 means PASS).

Checks the foreign key order_items_product_fk (definition, and that it rejects an unknown
product), the check order_items_quantity_positive (rejects quantity 0, accepts 1), the unique
constraint products_sku_key (definition, rejects a duplicate sku), the index
orders_customer_date_idx (b-tree, columns in order), and that no table's rows changed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import NoReturn

import asyncpg

A_SKU = 'GAR-1001'
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
    ok = True
    fk = await constraint(connection, "public", "order_items", "order_items_product_fk")
    ok &= report(
        fk is not None
        and fk[0] == "f"
        and fk[1] == "FOREIGN KEY (product_id) REFERENCES products(id)",
        "order_items_product_fk: validated foreign key order_items(product_id) -> products(id)"
        + ("" if fk is None else " (found " + fk[1] + ")"),
    )
    broke = await violation(
        connection, "INSERT INTO order_items VALUES (999999, 1, 999999, 1, 1.00)"
    )
    ok &= report(broke == "order_items_product_fk", "an unknown product_id is rejected by it")
    broke = await violation(connection, "INSERT INTO order_items VALUES (999999, 1, 1, 0, 1.00)")
    ok &= report(
        broke == "order_items_quantity_positive",
        "order_items_quantity_positive rejects quantity 0",
    )
    broke = await violation(connection, "INSERT INTO order_items VALUES (999999, 1, 1, 1, 1.00)")
    ok &= report(broke is None, "quantity 1 with a known product is accepted")
    unique = await constraint(connection, "public", "products", "products_sku_key")
    ok &= report(
        unique == ("u", "UNIQUE (sku)"), "products_sku_key is a unique constraint on (sku)"
    )
    broke = await violation(
        connection,
        "INSERT INTO products VALUES (999999, " + repr(A_SKU) + ", 'x', 'toys', 1.00)",
    )
    ok &= report(broke == "products_sku_key", "a duplicate sku is rejected by it")
    index = await index_definition(connection, "public", "orders_customer_date_idx")
    ok &= report(
        index == "CREATE INDEX orders_customer_date_idx ON public.orders"
        " USING btree (customer_id, ordered_at)",
        "orders_customer_date_idx is a b-tree index on orders (customer_id, ordered_at)"
        + ("" if index is None else " (found " + index + ")"),
    )
    ok &= await unchanged(connection, UNCHANGED)
    return ok


def main(check: Callable[[asyncpg.Connection], Awaitable[bool]]) -> NoReturn:
    """Run ``check`` against the task's database and exit 0 when it passes."""
    sys.exit(asyncio.run(verify(check)))


if __name__ == "__main__":
    main(check)
