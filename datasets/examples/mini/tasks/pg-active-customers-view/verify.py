"""Verifier of pg-active-customers-view (MCPMark contract: exit code 0 means PASS).

Connects with POSTGRES_HOST, POSTGRES_PORT, POSTGRES_USERNAME, POSTGRES_PASSWORD and
POSTGRES_DATABASE (the database may also be given as the first argument) and checks that the view
public.active_customers exists, has the asked-for columns in order, and returns exactly the active
customers with their order counts, customers without orders included. Every check is printed.
"""

from __future__ import annotations

import asyncio
import os
import sys

import asyncpg

EXPECTED_COLUMNS = ["customer_id", "full_name", "email", "order_count"]
EXPECTED_ROWS = [
    (1, "Ada Moreno", "ada.moreno@example.com", 3),
    (2, "Bilal Haddad", "bilal.haddad@example.com", 2),
    (4, "Dara Okafor", "dara.okafor@example.com", 1),
    (5, "Elif Demir", "elif.demir@example.com", 0),
    (7, "Gustavo Lima", "gustavo.lima@example.com", 4),
    (9, "Ivan Petrov", "ivan.petrov@example.com", 0),
    (11, "Kofi Mensah", "kofi.mensah@example.com", 1),
]
BASE_TABLE_ROWS = {"customers": 12, "orders": 16}


def report(ok: bool, what: str) -> bool:
    print(f"[{'ok' if ok else 'FAIL'}] {what}")
    return ok


async def check(connection: asyncpg.Connection) -> bool:
    exists = await connection.fetchval(
        "SELECT count(*) FROM information_schema.views"
        " WHERE table_schema = 'public' AND table_name = 'active_customers'"
    )
    if not report(exists == 1, "view public.active_customers exists"):
        return False
    columns = [
        record["column_name"]
        for record in await connection.fetch(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_schema = 'public' AND table_name = 'active_customers'"
            " ORDER BY ordinal_position"
        )
    ]
    if not report(columns == EXPECTED_COLUMNS, f"columns are {', '.join(EXPECTED_COLUMNS)}"):
        print(f"    found: {', '.join(columns)}")
        return False
    records = await connection.fetch(
        "SELECT customer_id, full_name, email, order_count FROM public.active_customers"
    )
    rows = sorted((int(r[0]), str(r[1]), str(r[2]), int(r[3])) for r in records)
    expected = sorted(EXPECTED_ROWS)
    rows_ok = report(
        rows == expected, f"rows are the {len(expected)} active customers with their order counts"
    )
    for row in expected:
        if row not in rows:
            print(f"    missing: {row}")
    for row in rows:
        if row not in expected:
            print(f"    unexpected: {row}")
    counts = {
        table: await connection.fetchval(f"SELECT count(*) FROM public.{table}")
        for table in BASE_TABLE_ROWS
    }
    tables_ok = report(
        counts == BASE_TABLE_ROWS,
        ", ".join(f"{table} still has {count} rows" for table, count in BASE_TABLE_ROWS.items()),
    )
    return rows_ok and tables_ok


async def main() -> int:
    database = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("POSTGRES_DATABASE")
    try:
        connection = await asyncpg.connect(
            host=os.environ.get("POSTGRES_HOST", "localhost"),
            port=int(os.environ.get("POSTGRES_PORT", "5432")),
            user=os.environ.get("POSTGRES_USERNAME", "postgres"),
            password=os.environ.get("POSTGRES_PASSWORD"),
            database=database,
        )
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
        print(f"cannot connect to the database: {error}")
        return 1
    try:
        passed = await check(connection)
    except asyncpg.PostgresError as error:
        report(False, f"query failed: {error}")
        passed = False
    finally:
        await connection.close()
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
