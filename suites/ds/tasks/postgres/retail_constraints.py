"""pg-retail-constraints (DDL): a foreign key, a check, a unique constraint and an index added to
the retail schema by name, without touching a row.
"""

from __future__ import annotations

import asyncpg

from suites.ds.spec import AgentPolicy, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.postgres.checks import constraint, index_definition, main, unchanged, violation
from suites.ds.tasks.postgres.common import (
    details,
    explain,
    list_objects,
    list_schemas,
    scripted,
    sql,
)
from suites.ds.tasks.postgres.retail import SHOP, UNCHANGED, make_task, seeder
from suites.ds.verify_script import verify_script

TASK_ID = "pg-retail-constraints"

A_SKU = SHOP.products[0].sku


async def check(connection: asyncpg.Connection) -> bool:
    """Checks the foreign key order_items_product_fk (definition, and that it rejects an unknown
    product), the check order_items_quantity_positive (rejects quantity 0, accepts 1), the
    unique constraint products_sku_key (definition, rejects a duplicate sku), the index
    orders_customer_date_idx (b-tree, columns in order), and that no table's rows changed."""
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

TASK = SuiteTask(
    task=make_task(
        TASK_ID,
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
    build_initial=seeder(SHOP),
    verifier=verify_script(TASK_ID, check, main),
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
