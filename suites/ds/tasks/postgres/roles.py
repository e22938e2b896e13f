"""The verifiers' checks of a role and its privileges, for every task that asks for a role
(``rt_support``, ``cl_doctor``, ``cl_billing``): that it exists without login, and what it may do
on schemas, tables and columns.

Like ``checks``, these functions are copied into ``verify.py`` files: standard library, asyncpg
and ``report`` only. The privilege look-ups return what Postgres answers; the tasks report them
with their own wording where one sentence covers several look-ups.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from suites.ds.tasks.checks import report


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


async def schema_usage(connection: asyncpg.Connection, role: str, schema: str) -> bool:
    """Report that ``role`` has USAGE on ``schema``."""
    allowed = await connection.fetchval(
        "SELECT has_schema_privilege($1, $2, 'USAGE')", role, schema
    )
    return report(allowed, role + " has USAGE on schema " + schema)


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
