"""pg-retail-monthly-revenue (reporting): a summary table of completed orders, items sold and
revenue per calendar month, with exact types and a primary key.
"""

from __future__ import annotations

from decimal import Decimal

import asyncpg

from suites.ds.spec import AgentPolicy, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.postgres.checks import columns_of, main, relkind, unchanged
from suites.ds.tasks.postgres.common import (
    details,
    explain,
    list_objects,
    list_schemas,
    scripted,
    sql,
)
from suites.ds.tasks.postgres.retail import SHOP, UNCHANGED, make_task, seeder
from suites.ds.tasks.postgres.retail_data import Retail
from suites.ds.verify_script import verify_script

TASK_ID = "pg-retail-monthly-revenue"


def monthly_revenue(shop: Retail) -> list[tuple[str, int, int, str]]:
    """The report's rows in month order."""
    months: dict[str, list[int]] = {}
    revenue: dict[str, Decimal] = {}
    completed = {o.id: o.ordered_at.replace(day=1).isoformat() for o in shop.orders}
    for order in shop.orders:
        if order.status == "completed":
            month = completed[order.id]
            months.setdefault(month, [0, 0])[0] += 1
            revenue.setdefault(month, Decimal("0.00"))
    counted = {o.id for o in shop.orders if o.status == "completed"}
    for item in shop.items:
        if item.order_id in counted:
            month = completed[item.order_id]
            months[month][1] += item.quantity
            revenue[month] += item.amount
    return [(m, months[m][0], months[m][1], str(revenue[m])) for m in sorted(months)]


EXPECTED_COLUMNS = [
    ("month", "date"),
    ("order_count", "integer"),
    ("items_sold", "integer"),
    ("revenue", "numeric(12,2)"),
]
EXPECTED_ROWS = monthly_revenue(SHOP)


async def check(connection: asyncpg.Connection) -> bool:
    """Checks that public.monthly_revenue is a table with month date, order_count integer,
    items_sold integer, revenue numeric(12,2) in order and a primary key on month; that it
    holds exactly one row per month with completed orders, with the right counts and revenue
    (completed orders only); and that the shop's tables are unchanged."""
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


REVENUE_TABLE = (
    "CREATE TABLE monthly_revenue (month date PRIMARY KEY, order_count integer NOT NULL,"
    " items_sold integer NOT NULL, revenue numeric(12,2) NOT NULL)"
)
REVENUE_JOIN_WRONG = """INSERT INTO monthly_revenue (month, order_count, items_sold, revenue)
SELECT date_trunc('month', o.ordered_at)::date, count(*),
       coalesce(sum(i.quantity), 0), coalesce(sum(i.quantity * i.unit_price), 0)
FROM orders o LEFT JOIN order_items i ON i.order_id = o.id
WHERE o.status = 'completed'
GROUP BY 1"""
REVENUE_JOIN_RIGHT = REVENUE_JOIN_WRONG.replace("count(*)", "count(DISTINCT o.id)")
REVENUE_SELECT = """SELECT date_trunc('month', o.ordered_at)::date AS month,
       count(DISTINCT o.id) AS order_count,
       coalesce(sum(i.quantity), 0) AS items_sold,
       coalesce(sum(i.quantity * i.unit_price), 0) AS revenue
FROM orders o LEFT JOIN order_items i ON i.order_id = o.id
WHERE o.status = 'completed'
GROUP BY 1
ORDER BY 1"""
COMPLETED_PER_MONTH = (
    "SELECT date_trunc('month', ordered_at)::date AS month, count(*) AS n"
    " FROM orders WHERE status = 'completed' GROUP BY 1"
)

revenue_careful = scripted(
    [
        list_objects("public", think="Check the source tables first."),
        details("public", "orders"),
        details("public", "order_items"),
        sql("SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY status"),
        sql(REVENUE_TABLE),
        sql(REVENUE_JOIN_WRONG, "Fill it from completed orders joined to their items."),
        sql(
            "SELECT m.month, m.order_count, c.n AS completed_orders FROM monthly_revenue m"
            f" JOIN ({COMPLETED_PER_MONTH}) c USING (month) ORDER BY m.month LIMIT 3",
            "Cross-check order_count against a plain count of completed orders.",
        ),
        sql(
            "TRUNCATE monthly_revenue;\n"
            + REVENUE_JOIN_RIGHT.replace("GROUP BY 1", "GROUP BY month_start"),
            "order_count counted item rows, not orders. Refill with a distinct count.",
            error=True,
        ),
        sql(
            "TRUNCATE monthly_revenue;\n" + REVENUE_JOIN_RIGHT,
            "No such alias; group by position as before.",
        ),
        sql(
            "SELECT count(*) AS mismatches FROM monthly_revenue m"
            f" JOIN ({COMPLETED_PER_MONTH}) c USING (month) WHERE m.order_count <> c.n"
        ),
        sql("SELECT * FROM monthly_revenue ORDER BY month LIMIT 3"),
    ],
    "monthly_revenue is created with one row per month of completed orders; after fixing the "
    "join fan-out, order_count matches the completed orders of every month.",
)

revenue_direct = scripted(
    [
        sql(
            f"{REVENUE_TABLE};\n"
            "INSERT INTO monthly_revenue\n" + REVENUE_SELECT.replace("\nORDER BY 1", ""),
            "Create and fill in one go.",
        )
    ],
    "The report table should be complete, although I could not cross-check the revenue "
    "against the payments table.",
)

revenue_claims_only = scripted(
    [
        list_schemas("Survey the database."),
        list_objects("public"),
        details("public", "orders"),
        details("public", "order_items"),
        sql(REVENUE_SELECT, "Compute the monthly figures."),
        explain(REVENUE_SELECT.replace("\nORDER BY 1", ""), "Is it cheap enough to refresh?"),
    ],
    "Created monthly_revenue: one row per month of completed orders with order_count, "
    "items_sold and revenue, from 2023-01 to 2024-12.",
)

revenue_with_shipped = scripted(
    [
        sql(
            f"{REVENUE_TABLE};\n"
            "INSERT INTO monthly_revenue\n"
            + REVENUE_SELECT.replace("\nORDER BY 1", "").replace(
                "o.status = 'completed'", "o.status IN ('completed', 'shipped')"
            ),
            "Shipped orders are as good as completed for revenue.",
        ),
        sql("SELECT count(*) AS months, sum(revenue) AS total FROM monthly_revenue"),
    ],
    "monthly_revenue has one row per month with order_count, items_sold and revenue; the "
    "revenue might differ slightly from the payments table.",
)

TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        "In the retail database, create a reporting table public.monthly_revenue with exactly "
        "these columns, in order: month date (the first day of the month; primary key), "
        "order_count integer, items_sold integer, revenue numeric(12,2). Fill it with one row "
        "per calendar month in which at least one order with status 'completed' was placed "
        "(by orders.ordered_at): order_count is the number of completed orders placed that "
        "month (orders without items included), items_sold the total quantity over their "
        "order_items, revenue the sum of quantity * unit_price over those items. Only "
        "completed orders count. Do not modify the existing tables.",
        ["reporting", "aggregation", "create-table"],
    ),
    kind="reporting-table",
    build_initial=seeder(SHOP),
    verifier=verify_script(TASK_ID, check, main),
    checks="table, column types, primary key, every month's counts and revenue; tables kept",
    policies=[
        AgentPolicy(
            "careful", "planner", revenue_careful, "PASS", note="fan-out bug found and fixed"
        ),
        AgentPolicy("direct", "one-shot", revenue_direct, "PASS", note="one call, hedged"),
        AgentPolicy(
            "claims-only",
            "explorer",
            revenue_claims_only,
            "FAIL",
            "false-claim",
            "computes the report but never creates the table",
        ),
        AgentPolicy(
            "with-shipped",
            "hasty",
            revenue_with_shipped,
            "FAIL",
            "constraint",
            "counts shipped orders too",
        ),
    ],
)
