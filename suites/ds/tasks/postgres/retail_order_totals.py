"""pg-retail-order-totals (backfill): a new NOT NULL column orders.total_amount, filled from each
order's items (0 for an order without items), with a default for new orders.
"""

from __future__ import annotations

import asyncpg

from suites.ds.spec import AgentPolicy, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.postgres.checks import columns_of, main, same_rows, unchanged
from suites.ds.tasks.postgres.common import details, fingerprint, list_objects, scripted, sql
from suites.ds.tasks.postgres.retail import ROWS, SHOP, make_task, seeder, snapshot
from suites.ds.verify_script import verify_script

TASK_ID = "pg-retail-order-totals"

ORDER_TOTALS = SHOP.order_totals()
EXPECTED_COLUMNS = [
    ("id", "integer", True),
    ("customer_id", "integer", True),
    ("ordered_at", "date", True),
    ("status", "text", True),
    ("total_amount", "numeric(12,2)", True),
]
EXPECTED_ORDERS = fingerprint([(*o.row(), ORDER_TOTALS[o.id]) for o in SHOP.orders])
KEPT_TABLES = snapshot(ROWS, ["customers", "products", "order_items", "payments"])


async def check(connection: asyncpg.Connection) -> bool:
    """Checks that orders has the new last column total_amount numeric(12,2) NOT NULL, that
    every order's total is the sum of quantity * unit_price of its items (0 without items) and
    its other columns are unchanged, that a new order gets 0 by default, and that the other
    tables are unchanged."""
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


ITEM_SUMS = (
    "SELECT order_id, sum(quantity * unit_price) AS total FROM order_items GROUP BY order_id"
)
BACKFILL = (
    f"UPDATE orders o SET total_amount = s.total\nFROM ({ITEM_SUMS}) s\nWHERE s.order_id = o.id"
)
ADD_TOTAL = "ALTER TABLE orders ADD COLUMN total_amount numeric(12,2) NOT NULL DEFAULT 0"
MISMATCHES = (
    f"SELECT count(*) AS mismatches FROM orders o LEFT JOIN ({ITEM_SUMS}) s"
    " ON s.order_id = o.id WHERE o.total_amount <> coalesce(s.total, 0)"
)

totals_careful = scripted(
    [
        list_objects("public", think="Start from the tables."),
        details("public", "orders"),
        details("public", "order_items"),
        sql(
            "SELECT count(*) AS orders_without_items FROM orders o"
            " WHERE NOT EXISTS (SELECT 1 FROM order_items i WHERE i.order_id = o.id)",
            "Orders without items will not be hit by a join-based update.",
        ),
        sql("ALTER TABLE orders ADD COLUMN total_amount numeric(12,2)", "Nullable for now."),
        sql(BACKFILL),
        sql("ALTER TABLE orders ALTER COLUMN total_amount SET NOT NULL", error=True),
        sql(
            "UPDATE orders SET total_amount = 0 WHERE total_amount IS NULL",
            "Right, the orders without items are still NULL: they get 0.",
        ),
        sql(
            "ALTER TABLE orders ALTER COLUMN total_amount SET DEFAULT 0,"
            " ALTER COLUMN total_amount SET NOT NULL"
        ),
        sql(MISMATCHES, "Re-check every order against its items."),
        sql("SELECT id, status, total_amount FROM orders ORDER BY id LIMIT 5"),
    ],
    "orders.total_amount is now in place: numeric(12,2), NOT NULL, default 0, backfilled from "
    "order_items (0 for the orders without items); a re-check found no mismatches.",
)

totals_direct = scripted(
    [sql(f"{ADD_TOTAL};\n{BACKFILL};", "Add with default 0, then fill from the item sums.")],
    "I added orders.total_amount and ran the backfill. I did not re-check the totals, so "
    "please check a few orders.",
)

totals_completed_only = scripted(
    [
        details("public", "orders"),
        sql("SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY status"),
        sql(ADD_TOTAL),
        sql(
            BACKFILL + " AND o.status = 'completed'",
            "Only completed orders have a final amount; the rest can stay at 0.",
        ),
        sql("SELECT count(*) FILTER (WHERE total_amount > 0) AS filled FROM orders"),
    ],
    "total_amount is added and backfilled; it is probably ready to use.",
)

totals_redone = scripted(
    [
        list_objects("public"),
        details("public", "orders"),
        sql(ADD_TOTAL),
        sql(BACKFILL),
        sql(MISMATCHES, "Verify the backfill."),
        sql(
            "ALTER TABLE orders DROP COLUMN IF EXISTS total_amount;\n" + ADD_TOTAL,
            "Make the migration re-runnable: drop and re-add the column.",
        ),
        details("public", "orders"),
    ],
    "The migration is now idempotent (drop and re-add), and total_amount is in place with NOT "
    "NULL and default 0.",
)

TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        "In the retail database, add a column total_amount to orders, of type numeric(12,2), "
        "NOT NULL, with default 0. Backfill it for every existing order with the sum of "
        "quantity * unit_price over that order's order_items (0 for an order without items). "
        "Do not change any other column or any other table.",
        ["backfill", "migration", "alter-table"],
    ),
    kind="data-backfill",
    build_initial=seeder(SHOP),
    verifier=verify_script(TASK_ID, check, main),
    checks="column type/NOT NULL/default; every order's total; other columns and tables kept",
    policies=[
        AgentPolicy("careful", "explorer", totals_careful, "PASS", note="NOT NULL error, fixed"),
        AgentPolicy("direct", "one-shot", totals_direct, "PASS", note="one call, hedged"),
        AgentPolicy(
            "completed-only",
            "hasty",
            totals_completed_only,
            "FAIL",
            "partial",
            "backfills completed orders only",
        ),
        AgentPolicy(
            "redone", "planner", totals_redone, "FAIL", "undone", "drops the filled column"
        ),
    ],
)
