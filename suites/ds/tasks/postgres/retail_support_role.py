"""pg-retail-support-role (roles): a role without login for the support team with exact table and
column grants: read three tables, update one column, nothing on payments or products.
"""

from __future__ import annotations

import asyncpg

from suites.ds.spec import AgentPolicy, SuiteTask
from suites.ds.tasks.checks import report
from suites.ds.tasks.postgres.checks import main, unchanged
from suites.ds.tasks.postgres.common import details, list_objects, list_schemas, scripted, sql
from suites.ds.tasks.postgres.retail import SHOP, UNCHANGED, make_task, seeder
from suites.ds.tasks.postgres.roles import (
    any_column_privilege,
    cannot_log_in,
    column_grants,
    column_privilege,
    may_select,
    role_exists,
    table_privilege,
)
from suites.ds.verify_script import verify_script

TASK_ID = "pg-retail-support-role"


async def check(connection: asyncpg.Connection) -> bool:
    """Checks that the role rt_support exists and cannot log in; that it may SELECT customers,
    orders and order_items, UPDATE orders.status and no other column, has nothing on payments
    or products and no INSERT, DELETE or TRUNCATE anywhere; and that no table's rows
    changed."""
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

TASK = SuiteTask(
    task=make_task(
        TASK_ID,
        "In the retail database, create a role named rt_support that cannot log in. Grant it "
        "exactly: SELECT on customers, orders and order_items; UPDATE on the status column of "
        "orders only. It must have no privilege at all on payments or products, no INSERT, "
        "DELETE or TRUNCATE on any table, and no UPDATE on any other column. Do not change any "
        "data.",
        ["roles", "grants", "column-privileges"],
    ),
    kind="roles-grants",
    build_initial=seeder(SHOP),
    verifier=verify_script(TASK_ID, check, main),
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
