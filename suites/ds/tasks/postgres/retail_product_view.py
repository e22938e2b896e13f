"""pg-retail-product-view (DDL): a view of units sold and revenue per product, over the items of
completed or shipped orders at the item's own price, unsold products included.
"""

from __future__ import annotations

from decimal import Decimal

import asyncpg

from suites.ds.spec import AgentPolicy, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.postgres.checks import columns_of, main, relkind, unchanged
from suites.ds.tasks.postgres.common import details, list_objects, scripted, sql
from suites.ds.tasks.postgres.retail import SHOP, UNCHANGED, make_task, seeder
from suites.ds.tasks.postgres.retail_data import Retail
from suites.ds.verify_script import verify_script

TASK_ID = "pg-retail-product-view"


def product_sales(shop: Retail) -> list[tuple[int, str, str, int, str]]:
    """The view's rows: product, units and revenue over completed or shipped orders."""
    counted = {order.id for order in shop.orders if order.status in ("completed", "shipped")}
    units = {product.id: 0 for product in shop.products}
    revenue = {product.id: Decimal("0.00") for product in shop.products}
    for item in shop.items:
        if item.order_id in counted:
            units[item.product_id] += item.quantity
            revenue[item.product_id] += item.amount
    return [(p.id, p.sku, p.category, units[p.id], str(revenue[p.id])) for p in shop.products]


EXPECTED_COLUMNS = ["product_id", "sku", "category", "units_sold", "revenue"]
EXPECTED_ROWS = product_sales(SHOP)


async def check(connection: asyncpg.Connection) -> bool:
    """Checks that public.product_sales is a view with the columns product_id, sku, category,
    units_sold, revenue in order, that it has one row per product (never-sold ones with 0)
    whose units and revenue count only items of completed or shipped orders at the item's
    price, and that no table's rows changed."""
    kind = await relkind(connection, "public", "product_sales")
    if not report(kind == "v", "public.product_sales is a view"):
        return False
    names = [name for name, _, _ in await columns_of(connection, "public", "product_sales")]
    if not report(names == EXPECTED_COLUMNS, "columns are " + ", ".join(EXPECTED_COLUMNS)):
        print("    found: " + ", ".join(names))
        return False
    records = await connection.fetch(
        "SELECT product_id, sku, category, units_sold, revenue FROM public.product_sales"
    )
    found = sorted((int(r[0]), r[1], r[2], int(r[3]), Decimal(str(r[4]))) for r in records)
    expected = [(a, b, c, d, Decimal(e)) for a, b, c, d, e in EXPECTED_ROWS]
    ok = report(
        len(found) == len(expected),
        f"{len(expected)} rows, one per product (found {len(found)})",
    )
    wrong = [row for row in expected if row not in found]
    ok &= report(not wrong, "every product's units_sold and revenue are right")
    for row in wrong[:5]:
        print("    expected: " + repr(row))
    ok &= await unchanged(connection, UNCHANGED)
    return ok


VIEW_AMBIGUOUS = """CREATE VIEW product_sales AS
SELECT p.id AS product_id, p.sku, p.category,
       coalesce(sum(i.quantity), 0) AS units_sold,
       coalesce(sum(i.quantity * unit_price), 0) AS revenue
FROM products p
LEFT JOIN (order_items i JOIN orders o
           ON o.id = i.order_id AND o.status IN ('completed', 'shipped'))
       ON i.product_id = p.id
GROUP BY p.id, p.sku, p.category"""

VIEW_RIGHT = VIEW_AMBIGUOUS.replace("* unit_price", "* i.unit_price")

VIEW_SUBQUERY = """CREATE VIEW product_sales AS
SELECT p.id AS product_id, p.sku, p.category,
       coalesce(s.units, 0) AS units_sold, coalesce(s.revenue, 0) AS revenue
FROM products p
LEFT JOIN (SELECT i.product_id, sum(i.quantity) AS units,
                  sum(i.quantity * i.unit_price) AS revenue
           FROM order_items i JOIN orders o ON o.id = i.order_id
           WHERE o.status IN ('completed', 'shipped')
           GROUP BY i.product_id) s ON s.product_id = p.id"""

VIEW_INNER = """CREATE VIEW product_sales AS
SELECT p.id AS product_id, p.sku, p.category,
       sum(i.quantity) AS units_sold, sum(i.quantity * i.unit_price) AS revenue
FROM products p
JOIN order_items i ON i.product_id = p.id
JOIN orders o ON o.id = i.order_id
WHERE o.status IN ('completed', 'shipped')
GROUP BY p.id, p.sku, p.category"""

view_careful = scripted(
    [
        list_objects("public", think="Find the tables the view needs."),
        details("public", "products"),
        details("public", "order_items"),
        sql(
            "SELECT count(*) AS products, count(*) FILTER (WHERE NOT EXISTS"
            " (SELECT 1 FROM order_items i WHERE i.product_id = p.id)) AS never_sold"
            " FROM products p",
            "Some products may never have been sold; they still need a row.",
        ),
        sql(VIEW_AMBIGUOUS, "Left join so unsold products stay in.", error=True),
        sql(VIEW_RIGHT, "Both tables have unit_price; the item's price is the one to use."),
        sql("SELECT * FROM product_sales ORDER BY product_id LIMIT 5"),
        sql(
            "SELECT count(*) AS rows, count(*) FILTER (WHERE units_sold = 0) AS unsold"
            " FROM product_sales"
        ),
    ],
    "Created the view product_sales: one row per product, unsold products at 0, units and "
    "revenue from completed or shipped orders at the order item price.",
)

view_direct = scripted(
    [sql(VIEW_SUBQUERY, "Aggregate the items first, then left join to products.")],
    "I think the product_sales view is right, but I could not compare it against the raw "
    "order items, so treat the numbers with care.",
)

view_inner = scripted(
    [
        sql("SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY status"),
        sql(VIEW_INNER, "Join products to their items of counted orders and sum."),
    ],
    "product_sales is created with units_sold and revenue per product for completed and "
    "shipped orders.",
)

view_gives_up = scripted(
    [
        list_objects("public"),
        details("public", "products"),
        details("public", "order_items"),
        sql(
            "SELECT i.product_id, sum(i.quantity) AS units FROM order_items i"
            " GROUP BY i.product_id ORDER BY i.product_id LIMIT 5",
            "Quick look at the raw numbers.",
        ),
        sql(VIEW_AMBIGUOUS, error=True),
    ],
    "The view could not be created: Postgres says unit_price is ambiguous between products and "
    "order_items. I stopped there so that you can tell me which price is meant.",
)

TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        "In the retail database, create a view public.product_sales with the columns "
        "product_id, sku, category, units_sold, revenue, in that order, and one row per product "
        "(products never sold included, with 0 units_sold and 0 revenue). units_sold is the "
        "total quantity of the product over the order_items of orders whose status is "
        "'completed' or 'shipped'; revenue is the sum of quantity * unit_price over those same "
        "items, using the order item's unit_price (not the product's list price). Do not "
        "modify any table.",
        ["view", "aggregation", "ddl"],
    ),
    kind="ddl-view",
    build_initial=seeder(SHOP),
    verifier=verify_script(TASK_ID, check, main),
    checks="view exists, column order, every product's units and revenue; tables unchanged",
    policies=[
        AgentPolicy("careful", "planner", view_careful, "PASS", note="ambiguity error, fixed"),
        AgentPolicy("direct", "one-shot", view_direct, "PASS", note="one call, hedged"),
        AgentPolicy("inner", "hasty", view_inner, "FAIL", "partial", "drops unsold products"),
        AgentPolicy(
            "gives-up", "skeptic", view_gives_up, "FAIL", "stops-after-error", "stops at error"
        ),
    ],
)
