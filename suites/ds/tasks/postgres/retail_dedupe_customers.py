"""pg-retail-dedupe-customers (clean-up): customer emails normalised and the duplicate accounts
they reveal merged into the lowest id, orders moved over and none lost.
"""

from __future__ import annotations

import random
from dataclasses import replace

import asyncpg

from suites.ds.spec import AgentPolicy, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.postgres.checks import constraint, main, unchanged
from suites.ds.tasks.postgres.common import details, list_objects, scripted, sql
from suites.ds.tasks.postgres.retail import ALL_TABLES, SHOP, make_task, seeder, snapshot
from suites.ds.tasks.postgres.retail_data import Customer, Order, Retail, table_rows
from suites.ds.verify_script import verify_script

TASK_ID = "pg-retail-dedupe-customers"

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


EXPECTED = snapshot(table_rows(deduplicated(DIRTY, MERGES)), ALL_TABLES)


async def check(connection: asyncpg.Connection) -> bool:
    """Checks that customers holds exactly the kept accounts (lowest id of each normalised
    email) with lower-cased, trimmed emails and their other columns untouched; that every order
    is still there with its customer moved to the kept account; that products, items and
    payments are unchanged; and that customers_email_key is a unique constraint on email."""
    ok = await unchanged(connection, EXPECTED)
    unique = await constraint(connection, "public", "customers", "customers_email_key")
    ok &= report(
        unique == ("u", "UNIQUE (email)"), "customers_email_key is a unique constraint on (email)"
    )
    left = await connection.fetchval(
        "SELECT count(*) FROM customers WHERE email <> lower(btrim(email))"
    )
    ok &= report(left == 0, "every email is lower case without surrounding spaces")
    return ok


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

TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        "The customers table of the retail database has duplicate accounts: the same email "
        "written with different letter case or with leading/trailing spaces. Clean it up: (1) "
        "store every customers.email in lower case without leading or trailing spaces; (2) "
        "customers whose normalised emails are equal are duplicates: keep the one with the "
        "lowest id, move every order of the others to it (orders.customer_id), then delete the "
        "others; (3) add a unique constraint named customers_email_key on customers (email). "
        "Do not delete any order, and change nothing else (other customer columns, other order "
        "columns, the other tables).",
        ["deduplication", "cleanup", "migration"],
        seed="seed.sql",  # the duplicated shop: this task's own seed
    ),
    kind="data-cleanup",
    build_initial=seeder(DIRTY, "seed.sql", TASK_ID),
    verifier=verify_script(TASK_ID, check, main),
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
