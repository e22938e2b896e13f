"""The verifiers' shared role checks and catalog helpers against a real (embedded) Postgres: what
each reports for roles and grants made to differ in exactly one respect."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest
import pytest_asyncio

from sandboxes.postgres.admin import connect
from sandboxes.postgres.embedded import EmbeddedPostgresCluster
from sandboxes.runs import SHARED_MEMORY
from suites.ds.tasks.postgres.checks import columns_of, constraint, same_rows, violation
from suites.ds.tasks.postgres.common import fingerprint
from suites.ds.tasks.postgres.roles import (
    any_column_privilege,
    cannot_log_in,
    column_grants,
    column_privilege,
    may_select,
    role_exists,
    schema_usage,
    table_privilege,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

SETUP = """
CREATE SCHEMA shop;
CREATE TABLE shop.items (id integer PRIMARY KEY, name text NOT NULL, price numeric(6,2),
                         CONSTRAINT items_price_positive CHECK (price > 0));
CREATE TABLE shop.secrets (id integer PRIMARY KEY, value text);
INSERT INTO shop.items VALUES (1, 'pen', 1.50), (2, 'ink', NULL);
CREATE ROLE t_reader NOLOGIN;
GRANT USAGE ON SCHEMA shop TO t_reader;
GRANT SELECT ON shop.items TO t_reader;
GRANT UPDATE (price) ON shop.items TO t_reader;
CREATE ROLE t_login LOGIN;
CREATE ROLE t_bypass NOLOGIN BYPASSRLS;
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def connection() -> AsyncIterator[asyncpg.Connection]:
    cluster = EmbeddedPostgresCluster(in_memory=SHARED_MEMORY.is_dir())
    await cluster.start()
    try:
        admin = await connect(cluster.admin)
        await admin.execute("CREATE DATABASE role_checks")
        await admin.close()
        made = await connect(cluster.admin.with_database("role_checks"))
        await made.execute(SETUP)
        yield made
        await made.close()
    finally:
        await cluster.stop()


async def test_role_existence_and_login(
    connection: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await role_exists(connection, "t_reader")
    assert not await role_exists(connection, "t_nobody")
    assert await cannot_log_in(connection, "t_reader")
    assert not await cannot_log_in(connection, "t_login")
    assert await cannot_log_in(connection, "t_bypass")
    assert not await cannot_log_in(connection, "t_bypass", nor_bypass_rls=True)
    assert capsys.readouterr().out.splitlines() == [
        "[ok] role t_reader exists",
        "[FAIL] role t_nobody exists",
        "[ok] t_reader cannot log in",
        "[FAIL] t_login cannot log in",
        "[ok] t_bypass cannot log in",
        "[FAIL] t_bypass cannot log in and does not bypass RLS",
    ]


async def test_privileges_as_postgres_grants_them(
    connection: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await schema_usage(connection, "t_reader", "shop")
    assert not await schema_usage(connection, "t_login", "shop")
    assert await may_select(connection, "t_reader", "shop.items", "items")
    assert not await may_select(connection, "t_reader", "shop.secrets")
    assert capsys.readouterr().out.splitlines() == [
        "[ok] t_reader has USAGE on schema shop",
        "[FAIL] t_login has USAGE on schema shop",
        "[ok] t_reader may SELECT from items",
        "[FAIL] t_reader may SELECT from shop.secrets",
    ]
    assert await table_privilege(connection, "t_reader", "shop.items", "DELETE, SELECT")
    assert not await table_privilege(connection, "t_reader", "shop.items", "UPDATE")
    assert await any_column_privilege(connection, "t_reader", "shop.items", "UPDATE")
    assert not await any_column_privilege(connection, "t_reader", "shop.secrets", "SELECT")
    assert await column_privilege(connection, "t_reader", "shop.items", "price", "UPDATE")
    assert not await column_privilege(connection, "t_reader", "shop.items", "name", "UPDATE")
    assert await column_grants(connection, "t_reader", "shop", ["SELECT", "UPDATE"]) == [
        ("items", "id", "SELECT"),
        ("items", "name", "SELECT"),
        ("items", "price", "SELECT"),
        ("items", "price", "UPDATE"),
    ]
    assert await column_grants(connection, "t_login", "shop", ["SELECT"]) == []


async def test_catalog_helpers_and_fingerprints(connection: asyncpg.Connection) -> None:
    assert await columns_of(connection, "shop", "items") == [
        ("id", "integer", True),
        ("name", "text", True),
        ("price", "numeric(6,2)", False),
    ]
    assert await constraint(connection, "shop", "items", "items_price_positive") == (
        "c",
        "CHECK ((price > (0)::numeric))",
    )
    assert await constraint(connection, "shop", "items", "no_such_constraint") is None
    broken = "INSERT INTO shop.items VALUES (3, 'cap', -1)"
    assert await violation(connection, broken) == "items_price_positive"
    assert await violation(connection, "INSERT INTO shop.items VALUES (3, 'cap', 2)") is None
    assert await connection.fetchval("SELECT count(*) FROM shop.items") == 2  # rolled back
    # the Python fingerprint of the seeded rows is the one the SQL side computes
    expected = fingerprint([(1, "pen", "1.50"), (2, "ink", None)])
    columns = ["id", "name", "price"]
    assert await same_rows(connection, "shop.items", columns, "id", expected)
    assert not await same_rows(connection, "shop.items", columns, "id", (2, "0" * 32))
