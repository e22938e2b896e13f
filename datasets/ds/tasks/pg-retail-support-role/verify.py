"""Verifier of pg-retail-support-role (MCPMark contract: exit code 0 means PASS).

Checks that the role rt_support exists and cannot log in; that it may SELECT customers, orders
and order_items, UPDATE orders.status and no other column, has nothing on payments or products
and no INSERT, DELETE or TRUNCATE anywhere; and that no table's rows changed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import NoReturn

import asyncpg

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


async def column_privilege(
    connection: asyncpg.Connection, role: str, table: str, column: str, privilege: str
) -> bool:
    """Whether ``role`` holds ``privilege`` on ``table``'s ``column``."""
    return bool(
        await connection.fetchval(
            "SELECT has_column_privilege($1, $2, $3, $4)", role, table, column, privilege
        )
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
    if not await role_exists(connection, "rt_support"):
        return False
    ok = await cannot_log_in(connection, "rt_support")
    for table in ("customers", "orders", "order_items"):
        ok &= await may_select(connection, "rt_support", "public." + table, table)
    for table in ("payments", "products"):
        any_column = await any_column_privilege(
            connection, "rt_support", "public." + table, "SELECT, INSERT, UPDATE"
        )
        whole = await table_privilege(
            connection,
            "rt_support",
            "public." + table,
            "SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER",
        )
        ok &= report(not any_column and not whole, "rt_support has no privilege on " + table)
    for table in ("customers", "orders", "order_items", "payments", "products"):
        writes = await table_privilege(
            connection, "rt_support", "public." + table, "INSERT, DELETE, TRUNCATE, UPDATE"
        )
        ok &= report(not writes, "no table-wide INSERT, UPDATE, DELETE or TRUNCATE on " + table)
    status = await column_privilege(connection, "rt_support", "public.orders", "status", "UPDATE")
    ok &= report(status, "rt_support may UPDATE orders.status")
    updates = await column_grants(connection, "rt_support", "public", ["UPDATE"])
    others = [grant for grant in updates if grant[:2] != ("orders", "status")]
    ok &= report(not others, "no UPDATE on any other column")
    ok &= await unchanged(connection, UNCHANGED)
    return ok


def main(check: Callable[[asyncpg.Connection], Awaitable[bool]]) -> NoReturn:
    """Run ``check`` against the task's database and exit 0 when it passes."""
    sys.exit(asyncio.run(verify(check)))


if __name__ == "__main__":
    main(check)
