"""Six Postgres tasks on the ``retail`` schema (see ``retail_data``), one family or two each.

* ``pg-retail-constraints`` (DDL): a foreign key, a check, a unique constraint and an index.
* ``pg-retail-product-view`` (DDL): a sales view over products, items and orders.
* ``pg-retail-dedupe-customers`` (clean-up): normalise emails, merge duplicate accounts.
* ``pg-retail-order-totals`` (backfill): a new NOT NULL column filled from the items.
* ``pg-retail-monthly-revenue`` (reporting): a summary table with exact values.
* ``pg-retail-support-role`` (roles): a role with table and column grants.

Each task's verifier checks every requirement its instruction spells out, and that the tables
the task must not touch still hold exactly their rows (by fingerprint).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

from dataset.models import SqlSeedState, Task, VerifierRef
from suites.ds.spec import AgentPolicy, SuiteTask
from suites.ds.tasks.postgres.common import (
    Value,
    details,
    explain,
    fingerprint,
    list_objects,
    list_schemas,
    scripted,
    sql,
    verifier_source,
)
from suites.ds.tasks.postgres.retail_data import (
    COLUMNS,
    Customer,
    Order,
    Retail,
    generate,
    seed_sql,
    table_rows,
)

SHOP = generate()
ORDER_TOTALS = SHOP.order_totals()

Snapshot = dict[str, tuple[tuple[str, ...], tuple[int, str]]]


def snapshot(rows: dict[str, list[tuple[Value, ...]]], tables: list[str]) -> Snapshot:
    """Fingerprints of ``tables`` as the verifiers' ``unchanged`` helper expects them."""
    return {table: (COLUMNS[table], fingerprint(rows[table])) for table in tables}


def seeder(shop: Retail, task_id: str) -> Callable[[Path], None]:
    """The ``build_initial`` of a task on ``shop``."""

    def build(folder: Path) -> None:
        (folder / "seed.sql").write_text(seed_sql(shop, task_id), encoding="utf-8")

    return build


def make_task(task_id: str, instruction: str, tags: list[str]) -> Task:
    """The task record of a retail task."""
    return Task(
        id=task_id,
        domain="ds",
        subdomain="postgres",
        instruction=instruction,
        initial_state=SqlSeedState(path="seed.sql"),
        verifier=VerifierRef(timeout_seconds=120.0),
        metadata={"category": "retail", "tags": tags},
    )


ALL_TABLES = ["customers", "products", "orders", "order_items", "payments"]

# ---------------------------------------------------------------------------------------------
# pg-retail-constraints
# ---------------------------------------------------------------------------------------------

CONSTRAINTS_ID = "pg-retail-constraints"

CONSTRAINTS_CHECK = """
async def check(connection):
    ok = True
    fk = await constraint(connection, "public", "order_items", "order_items_product_fk")
    ok &= report(
        fk is not None and fk[0] == "f"
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
"""

CONSTRAINTS_VERIFIER = verifier_source(
    f"""Verifier of {CONSTRAINTS_ID} (MCPMark contract: exit code 0 means PASS).

Checks the foreign key order_items_product_fk (definition, and that it rejects an unknown
product), the check order_items_quantity_positive (rejects quantity 0, accepts 1), the unique
constraint products_sku_key (definition, rejects a duplicate sku), the index
orders_customer_date_idx (b-tree, columns in order), and that no table's rows changed.
""",
    {
        "A_SKU": SHOP.products[0].sku,
        "UNCHANGED": snapshot(table_rows(SHOP), ALL_TABLES),
    },
    CONSTRAINTS_CHECK,
)

FK = (
    "ALTER TABLE order_items ADD CONSTRAINT order_items_product_fk"
    " FOREIGN KEY (product_id) REFERENCES products (id)"
)
QUANTITY_CHECK = (
    "ALTER TABLE order_items ADD CONSTRAINT order_items_quantity_positive CHECK (quantity > 0)"
)
SKU_UNIQUE = "ALTER TABLE products ADD CONSTRAINT products_sku_key UNIQUE (sku)"
ORDERS_INDEX = "CREATE INDEX orders_customer_date_idx ON orders (customer_id, ordered_at)"

constraints_careful = scripted(
    [
        list_schemas("Look at what is in the database before changing anything."),
        list_objects("public"),
        details("public", "order_items"),
        details("public", "products"),
        sql(
            "SELECT min(quantity) AS min_qty, count(*) FILTER (WHERE quantity <= 0)"
            " AS non_positive FROM order_items",
            "A check on quantity > 0 only goes through if no row breaks it.",
        ),
        sql(
            "SELECT count(*) AS orphans FROM order_items oi"
            " LEFT JOIN products p ON p.id = oi.product_id WHERE p.id IS NULL",
            "Same for the foreign key: any item pointing at a missing product?",
        ),
        sql("SELECT sku, count(*) AS n FROM products GROUP BY sku HAVING count(*) > 1"),
        sql(
            "ALTER TABLE order_items ADD CONSTRAINT order_items_product_fk"
            " FOREIGN KEY (product_id) REFERENCES product (id)",
            "Data is clean. Add the foreign key first.",
            error=True,
        ),
        sql(FK, "The table is products, plural. Retry."),
        sql(QUANTITY_CHECK),
        sql(SKU_UNIQUE),
        sql(ORDERS_INDEX),
        details("public", "order_items", think="Confirm the constraints landed."),
        sql(
            "SELECT indexname, indexdef FROM pg_indexes"
            " WHERE indexname = 'orders_customer_date_idx'"
        ),
    ],
    "All four changes are in place: order_items_product_fk, order_items_quantity_positive, "
    "products_sku_key and the orders_customer_date_idx index on (customer_id, ordered_at). "
    "No rows were touched.",
)

constraints_direct = scripted(
    [sql(f"{FK};\n{QUANTITY_CHECK};\n{SKU_UNIQUE};\n{ORDERS_INDEX};", "Apply all four at once.")],
    "I applied the four DDL statements in one go. I did not read the catalog back afterwards, "
    "so please verify the names.",
)

constraints_half = scripted(
    [
        details("public", "order_items"),
        sql(f"{FK};\n{QUANTITY_CHECK};", "The item table is where the integrity gaps are."),
    ],
    "Done: order_items now has its foreign key to products and the positive-quantity check, "
    "so the schema is consistent.",
)

constraints_misnamed = scripted(
    [
        list_objects("public", think="Which tables are involved?"),
        details("public", "orders"),
        details("public", "products"),
        sql("SELECT count(DISTINCT sku) AS skus, count(*) AS products FROM products"),
        sql(FK),
        sql(QUANTITY_CHECK),
        sql(
            "ALTER TABLE products ADD CONSTRAINT products_sku_unique UNIQUE (sku)",
            "Unique SKUs; name it after what it enforces.",
        ),
        sql(
            "CREATE INDEX orders_customer_id_ordered_at_idx ON orders (customer_id, ordered_at)",
            "Composite index, using the usual table_columns_idx naming.",
        ),
        explain(
            "SELECT * FROM orders WHERE customer_id = 42 AND ordered_at >= '2024-01-01'",
            "Check the planner can use it.",
        ),
        sql(
            "SELECT conname, contype FROM pg_constraint"
            " WHERE conrelid IN ('order_items'::regclass, 'products'::regclass)"
            " ORDER BY conname"
        ),
    ],
    "Created the foreign key, the quantity check, a unique constraint on products.sku and the "
    "composite index on orders (customer_id, ordered_at); the planner picks the index up. "
    "Please check the names fit your migration conventions.",
)

CONSTRAINTS_TASK = SuiteTask(
    task=make_task(
        CONSTRAINTS_ID,
        "The retail database (schema public) is missing some integrity rules. Without adding, "
        "deleting or changing any rows, add: (1) a foreign key constraint named "
        "order_items_product_fk on order_items (product_id) referencing products (id); (2) a "
        "check constraint named order_items_quantity_positive on order_items requiring "
        "quantity > 0; (3) a unique constraint named products_sku_key on products (sku); (4) a "
        "b-tree index named orders_customer_date_idx on orders (customer_id, ordered_at), in "
        "that column order.",
        ["constraints", "index", "ddl"],
    ),
    kind="ddl-constraints",
    build_initial=seeder(SHOP, CONSTRAINTS_ID),
    verifier=CONSTRAINTS_VERIFIER,
    checks="FK, check and unique constraints by name and behaviour; index definition; rows kept",
    policies=[
        AgentPolicy(
            "careful", "explorer", constraints_careful, "PASS", note="explores, typo, fixes"
        ),
        AgentPolicy("direct", "one-shot", constraints_direct, "PASS", note="one call, hedged"),
        AgentPolicy(
            "half", "hasty", constraints_half, "FAIL", "partial", "only the item constraints"
        ),
        AgentPolicy(
            "misnamed",
            "planner",
            constraints_misnamed,
            "FAIL",
            "wrong-target",
            "unique constraint and index under other names",
        ),
    ],
)

# ---------------------------------------------------------------------------------------------
# pg-retail-product-view
# ---------------------------------------------------------------------------------------------

VIEW_ID = "pg-retail-product-view"


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


VIEW_CHECK = """
async def check(connection):
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
    found = sorted(
        (int(r[0]), r[1], r[2], int(r[3]), Decimal(str(r[4]))) for r in records
    )
    expected = [(a, b, c, d, Decimal(e)) for a, b, c, d, e in EXPECTED_ROWS]
    ok = report(len(found) == len(expected), "%d rows, one per product (found %d)" % (
        len(expected), len(found)))
    wrong = [row for row in expected if row not in found]
    ok &= report(not wrong, "every product's units_sold and revenue are right")
    for row in wrong[:5]:
        print("    expected: " + repr(row))
    ok &= await unchanged(connection, UNCHANGED)
    return ok
"""

VIEW_VERIFIER = verifier_source(
    f"""Verifier of {VIEW_ID} (MCPMark contract: exit code 0 means PASS).

Checks that public.product_sales is a view with the columns product_id, sku, category,
units_sold, revenue in order, that it has one row per product (never-sold ones with 0) whose
units and revenue count only items of completed or shipped orders at the item's price, and that
no table's rows changed.
""",
    {
        "EXPECTED_COLUMNS": ["product_id", "sku", "category", "units_sold", "revenue"],
        "EXPECTED_ROWS": product_sales(SHOP),
        "UNCHANGED": snapshot(table_rows(SHOP), ALL_TABLES),
    },
    "from decimal import Decimal\n\n" + VIEW_CHECK,
)

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

VIEW_TASK = SuiteTask(
    task=make_task(
        VIEW_ID,
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
    build_initial=seeder(SHOP, VIEW_ID),
    verifier=VIEW_VERIFIER,
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

# ---------------------------------------------------------------------------------------------
# pg-retail-dedupe-customers
# ---------------------------------------------------------------------------------------------

DEDUPE_ID = "pg-retail-dedupe-customers"
DUPLICATES = 45


def _messy(email: str, rng: random.Random) -> str:
    letters = [c.upper() if rng.random() < 0.4 else c for c in email]
    text = "".join(letters)
    if rng.random() < 0.5:
        text = " " * rng.randint(1, 2) + text
    if rng.random() < 0.5:
        text += " " * rng.randint(1, 2)
    return text if text != email else email.upper()


def duplicated_shop() -> tuple[Retail, dict[int, int]]:
    """The shop with duplicate accounts added, and which duplicate merges into which id."""
    rng = random.Random(5152)
    customers = list(SHOP.customers)
    originals = rng.sample(range(1, len(customers) + 1), DUPLICATES)
    merges: dict[int, int] = {}
    for offset, original in enumerate(originals, start=1):
        source = customers[original - 1]
        duplicate_id = len(SHOP.customers) + offset
        clean = source.email
        if rng.random() < 0.5:
            customers[original - 1] = replace(source, email=_messy(clean, rng))
            duplicate_email = clean
        else:
            duplicate_email = _messy(clean, rng)
        customers.append(
            Customer(duplicate_id, source.full_name, duplicate_email, source.city, source.signed_up)
        )
        merges[duplicate_id] = original
    for number in rng.sample(range(1, len(SHOP.customers) + 1), 30):
        customer = customers[number - 1]
        if number not in originals:
            customers[number - 1] = replace(customer, email=customer.email.title())
    orders = list(SHOP.orders)
    for duplicate_id in merges:
        for index in rng.sample(range(len(orders)), rng.randint(1, 3)):
            orders[index] = replace(orders[index], customer_id=duplicate_id)
    return replace(SHOP, customers=customers, orders=orders), merges


DIRTY, MERGES = duplicated_shop()


def deduplicated(shop: Retail, merges: dict[int, int]) -> Retail:
    """What the clean-up must leave: duplicates merged, emails normalised."""
    customers = [
        replace(c, email=c.email.strip().lower()) for c in shop.customers if c.id not in merges
    ]
    orders: list[Order] = [
        replace(o, customer_id=merges.get(o.customer_id, o.customer_id)) for o in shop.orders
    ]
    return replace(shop, customers=customers, orders=orders)


DEDUPE_CHECK = """
async def check(connection):
    ok = True
    ok &= await unchanged(connection, EXPECTED)
    unique = await constraint(connection, "public", "customers", "customers_email_key")
    ok &= report(
        unique == ("u", "UNIQUE (email)"), "customers_email_key is a unique constraint on (email)"
    )
    left = await connection.fetchval(
        "SELECT count(*) FROM customers WHERE email <> lower(btrim(email))"
    )
    ok &= report(left == 0, "every email is lower case without surrounding spaces")
    return ok
"""

DEDUPE_VERIFIER = verifier_source(
    f"""Verifier of {DEDUPE_ID} (MCPMark contract: exit code 0 means PASS).

Checks that customers holds exactly the kept accounts (lowest id of each normalised email) with
lower-cased, trimmed emails and their other columns untouched; that every order is still there
with its customer moved to the kept account; that products, items and payments are unchanged;
and that customers_email_key is a unique constraint on email.
""",
    {"EXPECTED": snapshot(table_rows(deduplicated(DIRTY, MERGES)), ALL_TABLES)},
    DEDUPE_CHECK,
)

KEEP = "SELECT id, min(id) OVER (PARTITION BY lower(btrim(email))) AS keep_id FROM customers"
REPOINT = (
    f"UPDATE orders o SET customer_id = d.keep_id\nFROM ({KEEP}) d\n"
    "WHERE o.customer_id = d.id AND d.id <> d.keep_id"
)
DELETE_DUPLICATES = (
    f"DELETE FROM customers c\nUSING ({KEEP}) d\nWHERE c.id = d.id AND d.id <> d.keep_id"
)
NORMALISE = "UPDATE customers SET email = lower(btrim(email)) WHERE email <> lower(btrim(email))"
EMAIL_KEY = "ALTER TABLE customers ADD CONSTRAINT customers_email_key UNIQUE (email)"

dedupe_careful = scripted(
    [
        list_objects("public", think="See the tables and what references customers."),
        details("public", "customers"),
        details("public", "orders"),
        sql(
            "SELECT lower(btrim(email)) AS email, array_agg(id ORDER BY id) AS ids"
            " FROM customers GROUP BY 1 HAVING count(*) > 1 ORDER BY 1 LIMIT 5",
            "What do the duplicates look like?",
        ),
        sql(
            "SELECT count(*) AS groups, sum(n - 1) AS extra_rows FROM (SELECT count(*) AS n"
            " FROM customers GROUP BY lower(btrim(email)) HAVING count(*) > 1) d"
        ),
        sql(EMAIL_KEY, "Put the constraint in first so nothing new slips in meanwhile."),
        sql(
            "UPDATE customers SET email = lower(btrim(email))",
            "Now normalise.",
            error=True,
        ),
        sql(
            "ALTER TABLE customers DROP CONSTRAINT customers_email_key",
            "The constraint blocks normalising while duplicates exist. Drop it, merge, re-add.",
        ),
        sql(REPOINT, "Move orders of the duplicates to the lowest id of each email."),
        sql(DELETE_DUPLICATES),
        sql(NORMALISE),
        sql(EMAIL_KEY),
        sql(
            "SELECT count(*) AS customers, (SELECT count(*) FROM orders) AS orders,"
            " (SELECT count(*) FROM orders o LEFT JOIN customers c ON c.id = o.customer_id"
            " WHERE c.id IS NULL) AS orphan_orders FROM customers"
        ),
    ],
    "Cleanup finished: emails are lower-cased and trimmed, the duplicate accounts were merged "
    "into the lowest id with their orders moved over, and customers_email_key now guards the "
    "column.",
)

dedupe_skeptic = scripted(
    [
        sql(
            "SELECT count(*) AS groups FROM (SELECT 1 FROM customers"
            " GROUP BY lower(btrim(email)) HAVING count(*) > 1) d"
        ),
        sql(
            f"{REPOINT};\n{DELETE_DUPLICATES};\n{NORMALISE};\n{EMAIL_KEY};",
            "One transaction: repoint, delete, normalise, constrain.",
        ),
        sql("SELECT count(*) AS not_normal FROM customers WHERE email <> lower(btrim(email))"),
    ],
    "The merge ran without errors, but I have not audited each merged account by hand, so it "
    "may not match what you expect for edge cases.",
)

dedupe_destructive = scripted(
    [
        details("public", "customers"),
        sql("UPDATE customers SET email = lower(btrim(email))", "Normalise first."),
        sql(
            "DELETE FROM customers c USING customers k WHERE k.email = c.email AND k.id < c.id",
            "Remove the later copies.",
            error=True,
        ),
        sql(
            "DELETE FROM orders o USING customers c, customers k"
            " WHERE o.customer_id = c.id AND k.email = c.email AND k.id < c.id",
            "Orders of duplicate accounts block the delete; clear them.",
            error=True,
        ),
        sql(
            "DELETE FROM payments p USING orders o, customers c, customers k"
            " WHERE p.order_id = o.id AND o.customer_id = c.id"
            " AND k.email = c.email AND k.id < c.id;\n"
            "DELETE FROM order_items i USING orders o, customers c, customers k"
            " WHERE i.order_id = o.id AND o.customer_id = c.id"
            " AND k.email = c.email AND k.id < c.id;\n"
            "DELETE FROM orders o USING customers c, customers k"
            " WHERE o.customer_id = c.id AND k.email = c.email AND k.id < c.id;\n"
            "DELETE FROM customers c USING customers k WHERE k.email = c.email AND k.id < c.id",
            "Payments and items hang off those orders too; remove the whole chain.",
        ),
        sql(EMAIL_KEY),
        sql("SELECT count(*) AS customers, count(DISTINCT email) AS emails FROM customers"),
    ],
    "Duplicates are gone and customers_email_key is created; every email is unique and "
    "lower-case now.",
)

dedupe_stops = scripted(
    [
        sql(
            f"UPDATE customers SET email = lower(btrim(email));\n{EMAIL_KEY}",
            "Normalise and constrain in one go.",
            error=True,
        )
    ],
    "I could not add customers_email_key: Postgres reports duplicated emails once they are "
    "normalised. I stopped here so you can decide how the accounts should be merged.",
)

DEDUPE_TASK = SuiteTask(
    task=make_task(
        DEDUPE_ID,
        "The customers table of the retail database has duplicate accounts: the same email "
        "written with different letter case or with leading/trailing spaces. Clean it up: (1) "
        "store every customers.email in lower case without leading or trailing spaces; (2) "
        "customers whose normalised emails are equal are duplicates: keep the one with the "
        "lowest id, move every order of the others to it (orders.customer_id), then delete the "
        "others; (3) add a unique constraint named customers_email_key on customers (email). "
        "Do not delete any order, and change nothing else (other customer columns, other order "
        "columns, the other tables).",
        ["deduplication", "cleanup", "migration"],
    ),
    kind="data-cleanup",
    build_initial=seeder(DIRTY, DEDUPE_ID),
    verifier=DEDUPE_VERIFIER,
    checks="kept accounts, normalised emails, orders repointed not lost, unique constraint",
    policies=[
        AgentPolicy(
            "careful", "planner", dedupe_careful, "PASS", note="constraint too early, recovers"
        ),
        AgentPolicy("skeptic", "skeptic", dedupe_skeptic, "PASS", note="one script, hedged"),
        AgentPolicy(
            "destructive",
            "overreacher",
            dedupe_destructive,
            "FAIL",
            "constraint",
            "deletes orders of duplicates",
        ),
        AgentPolicy(
            "stops", "one-shot", dedupe_stops, "FAIL", "stops-after-error", "gives up at error"
        ),
    ],
)

# ---------------------------------------------------------------------------------------------
# pg-retail-order-totals
# ---------------------------------------------------------------------------------------------

TOTALS_ID = "pg-retail-order-totals"

TOTALS_CHECK = """
async def check(connection):
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
    ok &= await unchanged(connection, UNCHANGED)
    return ok
"""

TOTALS_VERIFIER = verifier_source(
    f"""Verifier of {TOTALS_ID} (MCPMark contract: exit code 0 means PASS).

Checks that orders has the new last column total_amount numeric(12,2) NOT NULL, that every
order's total is the sum of quantity * unit_price of its items (0 without items) and its other
columns are unchanged, that a new order gets 0 by default, and that the other tables are
unchanged.
""",
    {
        "EXPECTED_COLUMNS": [
            ("id", "integer", True),
            ("customer_id", "integer", True),
            ("ordered_at", "date", True),
            ("status", "text", True),
            ("total_amount", "numeric(12,2)", True),
        ],
        "EXPECTED_ORDERS": fingerprint([(*o.row(), ORDER_TOTALS[o.id]) for o in SHOP.orders]),
        "UNCHANGED": snapshot(
            table_rows(SHOP), ["customers", "products", "order_items", "payments"]
        ),
    },
    TOTALS_CHECK,
)

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

TOTALS_TASK = SuiteTask(
    task=make_task(
        TOTALS_ID,
        "In the retail database, add a column total_amount to orders, of type numeric(12,2), "
        "NOT NULL, with default 0. Backfill it for every existing order with the sum of "
        "quantity * unit_price over that order's order_items (0 for an order without items). "
        "Do not change any other column or any other table.",
        ["backfill", "migration", "alter-table"],
    ),
    kind="data-backfill",
    build_initial=seeder(SHOP, TOTALS_ID),
    verifier=TOTALS_VERIFIER,
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

# ---------------------------------------------------------------------------------------------
# pg-retail-monthly-revenue
# ---------------------------------------------------------------------------------------------

REVENUE_ID = "pg-retail-monthly-revenue"


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


REVENUE_CHECK = """
async def check(connection):
    kind = await relkind(connection, "public", "monthly_revenue")
    if not report(kind == "r", "public.monthly_revenue is a table"):
        return False
    columns = [(name, kind) for name, kind, _ in await columns_of(
        connection, "public", "monthly_revenue")]
    if not report(columns == EXPECTED_COLUMNS, "columns: " + repr(EXPECTED_COLUMNS)):
        print("    found: " + repr(columns))
        return False
    key = await connection.fetchval(
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE conrelid = 'public.monthly_revenue'::regclass AND contype = 'p'"
    )
    ok = report(key == "PRIMARY KEY (month)", "primary key on month")
    records = await connection.fetch(
        "SELECT month, order_count, items_sold, revenue FROM public.monthly_revenue"
        " ORDER BY month"
    )
    found = [(r[0].isoformat(), r[1], r[2], r[3]) for r in records]
    expected = [(m, c, i, Decimal(v)) for m, c, i, v in EXPECTED_ROWS]
    ok &= report(len(found) == len(expected), "%d monthly rows (found %d)" % (
        len(expected), len(found)))
    wrong = [row for row in expected if row not in found]
    ok &= report(not wrong, "every month's order_count, items_sold and revenue are right")
    for row in wrong[:5]:
        print("    expected: " + repr(row))
    ok &= await unchanged(connection, UNCHANGED)
    return ok
"""

REVENUE_VERIFIER = verifier_source(
    f"""Verifier of {REVENUE_ID} (MCPMark contract: exit code 0 means PASS).

Checks that public.monthly_revenue is a table with month date, order_count integer, items_sold
integer, revenue numeric(12,2) in order and a primary key on month; that it holds exactly one
row per month with completed orders, with the right counts and revenue (completed orders only);
and that the shop's tables are unchanged.
""",
    {
        "EXPECTED_COLUMNS": [
            ("month", "date"),
            ("order_count", "integer"),
            ("items_sold", "integer"),
            ("revenue", "numeric(12,2)"),
        ],
        "EXPECTED_ROWS": monthly_revenue(SHOP),
        "UNCHANGED": snapshot(table_rows(SHOP), ALL_TABLES),
    },
    "from decimal import Decimal\n\n" + REVENUE_CHECK,
)

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

REVENUE_TASK = SuiteTask(
    task=make_task(
        REVENUE_ID,
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
    build_initial=seeder(SHOP, REVENUE_ID),
    verifier=REVENUE_VERIFIER,
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

# ---------------------------------------------------------------------------------------------
# pg-retail-support-role
# ---------------------------------------------------------------------------------------------

SUPPORT_ID = "pg-retail-support-role"

SUPPORT_CHECK = """
async def check(connection):
    role = await connection.fetchrow(
        "SELECT rolcanlogin, rolsuper FROM pg_roles WHERE rolname = 'rt_support'"
    )
    if not report(role is not None, "role rt_support exists"):
        return False
    ok = report(not role["rolcanlogin"] and not role["rolsuper"], "rt_support cannot log in")
    for table in ("customers", "orders", "order_items"):
        allowed = await connection.fetchval(
            "SELECT has_table_privilege('rt_support', $1, 'SELECT')", "public." + table
        )
        ok &= report(allowed, "rt_support may SELECT from " + table)
    for table in ("payments", "products"):
        any_column = await connection.fetchval(
            "SELECT has_any_column_privilege('rt_support', $1, 'SELECT, INSERT, UPDATE')",
            "public." + table,
        )
        whole = await connection.fetchval(
            "SELECT has_table_privilege('rt_support', $1,"
            " 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')",
            "public." + table,
        )
        ok &= report(not any_column and not whole, "rt_support has no privilege on " + table)
    for table in ("customers", "orders", "order_items", "payments", "products"):
        writes = await connection.fetchval(
            "SELECT has_table_privilege('rt_support', $1, 'INSERT, DELETE, TRUNCATE, UPDATE')",
            "public." + table,
        )
        ok &= report(not writes, "no table-wide INSERT, UPDATE, DELETE or TRUNCATE on " + table)
    status = await connection.fetchval(
        "SELECT has_column_privilege('rt_support', 'public.orders', 'status', 'UPDATE')"
    )
    ok &= report(status, "rt_support may UPDATE orders.status")
    others = await connection.fetch(
        "SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0"
        " AND NOT a.attisdropped AND NOT (c.relname = 'orders' AND a.attname = 'status')"
        " AND has_column_privilege('rt_support', c.oid, a.attnum, 'UPDATE')"
    )
    ok &= report(not others, "no UPDATE on any other column")
    ok &= await unchanged(connection, UNCHANGED)
    return ok
"""

SUPPORT_VERIFIER = verifier_source(
    f"""Verifier of {SUPPORT_ID} (MCPMark contract: exit code 0 means PASS).

Checks that the role rt_support exists and cannot log in; that it may SELECT customers, orders
and order_items, UPDATE orders.status and no other column, has nothing on payments or products
and no INSERT, DELETE or TRUNCATE anywhere; and that no table's rows changed.
""",
    {"UNCHANGED": snapshot(table_rows(SHOP), ALL_TABLES)},
    SUPPORT_CHECK,
)

SUPPORT_GRANTS = (
    "GRANT SELECT ON customers, orders, order_items TO rt_support;\n"
    "GRANT UPDATE (status) ON orders TO rt_support"
)

support_careful = scripted(
    [
        list_schemas("Where do the tables live?"),
        list_objects("public"),
        sql(
            "SELECT rolname FROM pg_roles WHERE rolname LIKE 'rt%' ORDER BY rolname",
            "Does a support role exist already?",
        ),
        sql(
            "GRANT SELECT ON customers, orders, order_items TO rt_support",
            "Grant the read access.",
            error=True,
        ),
        sql("CREATE ROLE rt_support NOLOGIN", "It has to be created first."),
        sql(SUPPORT_GRANTS),
        sql(
            "SELECT table_name, privilege_type FROM information_schema.role_table_grants"
            " WHERE grantee = 'rt_support' ORDER BY table_name, privilege_type",
            "Check the table-level grants.",
        ),
        sql(
            "SELECT table_name, column_name FROM information_schema.column_privileges"
            " WHERE grantee = 'rt_support' AND privilege_type = 'UPDATE'"
            " ORDER BY table_name, column_name"
        ),
        sql(
            "SELECT has_table_privilege('rt_support', 'payments', 'SELECT') AS payments,"
            " has_table_privilege('rt_support', 'products', 'SELECT') AS products"
        ),
    ],
    "rt_support is created (NOLOGIN) with SELECT on customers, orders and order_items and "
    "UPDATE on orders.status only; payments and products stay closed to it.",
)

support_direct = scripted(
    [sql("CREATE ROLE rt_support NOLOGIN;\n" + SUPPORT_GRANTS)],
    "Created rt_support with the read grants and the status-only update grant.",
)

support_everything = scripted(
    [
        sql(
            "CREATE ROLE rt_support NOLOGIN;\n"
            "GRANT SELECT ON ALL TABLES IN SCHEMA public TO rt_support;\n"
            "GRANT UPDATE (status) ON orders TO rt_support",
            "Support will want to read everything in the shop schema.",
        ),
        sql(
            "SELECT table_name, privilege_type FROM information_schema.role_table_grants"
            " WHERE grantee = 'rt_support' ORDER BY table_name"
        ),
    ],
    "rt_support is created with read access and can update order status.",
)

support_misnamed = scripted(
    [
        list_objects("public", think="Survey the tables the role must reach."),
        details("public", "orders"),
        details("public", "payments"),
        sql(
            "SELECT rolname, rolcanlogin FROM pg_roles WHERE rolname LIKE 'rt%' ORDER BY rolname",
            "Any shop roles already?",
        ),
        sql(
            "CREATE ROLE rt_support_agent NOLOGIN",
            "Name the role after the people who will use it.",
        ),
        sql(
            "GRANT SELECT ON customers, orders, order_items TO rt_support_agent;\n"
            "GRANT UPDATE (status) ON orders TO rt_support_agent"
        ),
        sql(
            "SELECT grantee, table_name, privilege_type FROM information_schema.role_table_grants"
            " WHERE grantee LIKE 'rt%' ORDER BY table_name, privilege_type"
        ),
    ],
    "The support role is set up: read access to customers, orders and order_items, and "
    "status-only updates on orders. I may want to double-check it against the app later.",
)

SUPPORT_TASK = SuiteTask(
    task=make_task(
        SUPPORT_ID,
        "In the retail database, create a role named rt_support that cannot log in. Grant it "
        "exactly: SELECT on customers, orders and order_items; UPDATE on the status column of "
        "orders only. It must have no privilege at all on payments or products, no INSERT, "
        "DELETE or TRUNCATE on any table, and no UPDATE on any other column. Do not change any "
        "data.",
        ["roles", "grants", "column-privileges"],
    ),
    kind="roles-grants",
    build_initial=seeder(SHOP, SUPPORT_ID),
    verifier=SUPPORT_VERIFIER,
    checks="role exists without login; table and column privileges exactly as asked; rows kept",
    policies=[
        AgentPolicy(
            "careful", "explorer", support_careful, "PASS", note="grant before create, fixed"
        ),
        AgentPolicy("direct", "one-shot", support_direct, "PASS", note="one call"),
        AgentPolicy(
            "everything",
            "overreacher",
            support_everything,
            "FAIL",
            "constraint",
            "grants SELECT on every table",
        ),
        AgentPolicy(
            "misnamed",
            "planner",
            support_misnamed,
            "FAIL",
            "wrong-target",
            "role created as rt_support_agent",
        ),
    ],
)

TASKS: list[SuiteTask] = [
    CONSTRAINTS_TASK,
    VIEW_TASK,
    DEDUPE_TASK,
    TOTALS_TASK,
    REVENUE_TASK,
    SUPPORT_TASK,
]
