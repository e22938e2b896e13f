"""The Postgres sandbox lifecycle on every cluster backend: creation, isolation, freeze, clones,
the read-only view, connections and cleanup."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import asyncpg
import pytest

from dataset.models import Task
from sandboxes.base import SandboxError
from sandboxes.postgres import admin
from sandboxes.postgres.provider import ClusterPostgresProvider
from sandboxes.postgres.sandbox import PostgresCluster
from tests.sandboxes.postgres.helpers import (
    count,
    database_exists,
    fetch,
    find_psql,
    new_role,
    role_exists,
    run_owned,
    write_task,
)

Shop = tuple[Task, Path]


# --- creation -------------------------------------------------------------------------------


async def test_verifier_environment_reaches_the_sandbox(
    provider: ClusterPostgresProvider, shop: Shop
) -> None:
    sandbox = await provider.create(*shop)
    psql = find_psql()
    assert psql is not None
    environment = {**os.environ, **sandbox.connection.verifier_environment()}
    process = await asyncio.create_subprocess_exec(
        str(psql),
        "-X",
        "-At",
        environment["DATABASE_URL"],
        "-c",
        "SELECT count(*) FROM customers",
        env=environment,
        stdout=asyncio.subprocess.PIPE,
    )
    output, _ = await asyncio.wait_for(process.communicate(), 30)
    assert output.decode().strip() == "3"
    assert environment["POSTGRES_DATABASE"] == sandbox.name


# --- using a sandbox ------------------------------------------------------------------------


async def test_sandboxes_of_one_task_are_isolated(
    provider: ClusterPostgresProvider, shop: Shop
) -> None:
    first, second = await provider.create(*shop), await provider.create(*shop)
    async with first.connect() as conn:
        await conn.execute("DELETE FROM orders; DELETE FROM customers WHERE id = 2")
    assert await count(first, "customers") == 2
    assert await count(second, "customers") == 3
    third = await provider.create(*shop)
    assert (await count(third, "customers"), await count(third, "orders")) == (3, 2)


async def test_each_connect_is_a_fresh_autocommit_session(
    cluster: PostgresCluster, shop: Shop
) -> None:
    async with ClusterPostgresProvider(cluster, pool_size=1) as provider:
        sandbox = await provider.create(*shop)
        async with sandbox.connect() as conn:
            pid = await conn.fetchval("SELECT pg_backend_pid()")
            await conn.execute("INSERT INTO customers VALUES (4, 'Dara')")
            await conn.execute(
                "SET application_name = 'leaky'; CREATE TEMP TABLE scratch (a integer);"
                " PREPARE leaky AS SELECT 1; SET search_path = nowhere, public"
            )
            await conn.execute("BEGIN; INSERT INTO customers VALUES (5, 'Elif')")
        async with sandbox.connect() as conn:
            assert await conn.fetchval("SELECT pg_backend_pid()") == pid  # the same session
            assert await conn.fetchval("SHOW application_name") != "leaky"
            assert "nowhere" not in await conn.fetchval("SHOW search_path")
            assert await conn.fetchval("SELECT to_regclass('pg_temp.scratch')") is None
            assert await conn.fetchval("SELECT count(*) FROM pg_prepared_statements") == 0
            assert not conn.is_in_transaction()
            ids = [row["id"] for row in await conn.fetch("SELECT id FROM customers ORDER BY id")]
            assert ids == [1, 2, 3, 4]  # committed on its own; the open transaction rolled back


# --- freeze and clones ----------------------------------------------------------------------


async def test_freeze_gives_a_snapshot_whose_clones_are_isolated(
    provider: ClusterPostgresProvider, cluster: PostgresCluster, shop: Shop
) -> None:
    sandbox = await provider.create(*shop)
    async with sandbox.connect() as conn:
        await conn.execute("INSERT INTO customers VALUES (4, 'Dara')")
    snapshot = await sandbox.freeze()
    assert snapshot.name == sandbox.name
    with pytest.raises(SandboxError, match="frozen"):
        async with sandbox.connect():
            pass
    with pytest.raises(asyncpg.PostgresError, match="not currently accepting connections"):
        await fetch(cluster.admin.with_database(snapshot.name), "SELECT 1")
    first, second = await snapshot.clone(), await snapshot.clone()
    assert len({first.name, second.name, snapshot.name}) == 3
    async with first.connect() as conn:
        await conn.execute("DELETE FROM orders; DELETE FROM customers")
    assert await count(first, "customers") == 0
    assert await count(second, "customers") == 4
    third = await snapshot.clone()
    assert await count(third, "customers") == 4
    await first.destroy()
    await first.destroy()  # twice is fine
    assert not await database_exists(cluster, first.name)
    await snapshot.destroy()
    assert not await database_exists(cluster, snapshot.name)
    with pytest.raises(SandboxError, match="destroyed"):
        await snapshot.clone()
    assert await count(second, "customers") == 4  # clones outlive their snapshot


async def test_the_read_only_view_is_shared_and_refuses_writes(
    provider: ClusterPostgresProvider, cluster: PostgresCluster, shop: Shop
) -> None:
    sandbox = await provider.create(*shop)
    snapshot = await sandbox.freeze()
    view = await snapshot.clone(writable=False)
    assert await snapshot.clone(writable=False) is view
    assert view.read_only
    assert view.connection.user != cluster.admin.user
    assert view.connection.database != snapshot.name
    assert await count(view, "customers") == 3
    assert await count(view, "customer_names") == 3
    writes = [
        "INSERT INTO customers VALUES (9, 'Zed')",
        "UPDATE customers SET name = 'X'",
        "DELETE FROM orders",
        "TRUNCATE orders",
        "CREATE TABLE intruder (a integer)",
        "CREATE TEMP TABLE intruder (a integer)",
        "DROP TABLE orders",
        "SELECT nextval('ticket_seq')",
        "CREATE SCHEMA intruder",
    ]
    for statement in writes:
        async with view.connect(statement) as conn:
            with pytest.raises(asyncpg.PostgresError):
                await conn.execute(statement)
    # Turning read-only off does not help: the reader has no write privileges.
    async with view.connect() as conn:
        await conn.execute("SET default_transaction_read_only = off")
        for statement in writes:
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await conn.execute(statement)
        await conn.execute("BEGIN; SET TRANSACTION READ WRITE")
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute("DELETE FROM orders")
    assert (await count(view, "customers"), await count(view, "orders")) == (3, 2)
    # The reader cannot reach writable sandboxes or the snapshot.
    clone = await snapshot.clone()
    for database in (clone.name, sandbox.name):
        with pytest.raises(asyncpg.PostgresError):
            await fetch(view.connection.with_database(database), "SELECT 1")
    with pytest.raises(SandboxError, match="read-only"):
        await view.freeze()
    await view.destroy()  # a no-op: the snapshot owns the view
    assert await count(view, "orders") == 2
    await snapshot.destroy()
    assert not await database_exists(cluster, view.name)
    assert await count(clone, "orders") == 2


async def test_the_view_shows_rows_hidden_by_row_level_security(
    provider: ClusterPostgresProvider, cluster: PostgresCluster, tmp_path: Path
) -> None:
    seed = (
        "CREATE TABLE secrets (id integer, owner text);"
        "INSERT INTO secrets VALUES (1, 'a'), (2, 'b');"
        "ALTER TABLE secrets ENABLE ROW LEVEL SECURITY;"
        "CREATE POLICY only_a ON secrets USING (owner = 'a');"
    )
    sandbox = await provider.create(*write_task(tmp_path / "rls", seed, "rls"))
    view = await (await sandbox.freeze()).clone(writable=False)
    superuser = await fetch(
        cluster.admin, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
    )
    # Only a superuser may give the reader BYPASSRLS; otherwise the policy applies to it.
    assert await count(view, "secrets") == (2 if superuser[0]["rolsuper"] else 1)


# --- closing --------------------------------------------------------------------------------


async def test_closing_on_an_exception_removes_everything(
    cluster: PostgresCluster, shop: Shop
) -> None:
    role = new_role()
    seen: list[str] = []

    async def work_then_fail() -> None:
        async with ClusterPostgresProvider(cluster) as provider:
            sandbox = await provider.create(*shop)
            async with sandbox.connect(f"CREATE ROLE {role}") as conn:
                await conn.execute(f"CREATE ROLE {role}; GRANT SELECT ON orders TO {role}")
            snapshot = await sandbox.freeze()
            view = await snapshot.clone(writable=False)
            clone = await snapshot.clone()
            await provider.create(*shop)
            databases, roles = await run_owned(cluster.admin)
            assert {view.name, clone.name, snapshot.name} <= set(databases)
            assert role in roles
            seen.extend(databases)
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await work_then_fail()
    # template, snapshot, view, clone, second sandbox (and the base template, for a superuser)
    assert len([name for name in seen if "_base_" not in name]) == 5
    assert await run_owned(cluster.admin) == ([], [])
    assert not await role_exists(cluster, role)


async def test_aclose_is_idempotent_and_final(
    provider: ClusterPostgresProvider, shop: Shop
) -> None:
    sandbox = await provider.create(*shop)
    await provider.aclose()
    await provider.aclose()
    with pytest.raises(SandboxError, match="closed"):
        await provider.create(*shop)
    with pytest.raises(SandboxError, match="destroyed"):
        async with sandbox.connect():
            pass


async def test_a_connected_user_does_not_block_destroy(
    provider: ClusterPostgresProvider, cluster: PostgresCluster, shop: Shop
) -> None:
    sandbox = await provider.create(*shop)
    outsider = await admin.connect(sandbox.connection)
    try:
        await sandbox.destroy()
        assert not await database_exists(cluster, sandbox.name)
    finally:
        outsider.terminate()


async def test_runtime_roles_cannot_reach_the_maintenance_databases(
    embedded_cluster: PostgresCluster, shop: Shop
) -> None:
    """On a cluster of our own; an external server's privileges are its operator's to set."""
    async with ClusterPostgresProvider(embedded_cluster) as provider:
        sandbox = await provider.create(*shop)
        view = await (await sandbox.freeze()).clone(writable=False)
        for database in ("postgres", "template1"):
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await fetch(view.connection.with_database(database), "SELECT 1 AS one")
