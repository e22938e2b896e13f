"""The Postgres sandbox lifecycle on every cluster backend: seeds, isolation, freeze, clones,
the read-only view, role ownership and cleanup."""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
from pathlib import Path

import asyncpg
import pytest

from dataset.models import DirectoryTreeState, Task
from sandboxes.base import SandboxError
from sandboxes.postgres import admin
from sandboxes.postgres.provider import ClusterPostgresProvider, find_psql, may_touch_roles
from sandboxes.postgres.sandbox import PostgresCluster, PostgresSandbox
from sandboxes.runs import current_run
from tests.sandboxes.postgres.helpers import SHOP_SEED, fetch, run_owned, write_task

Shop = tuple[Task, Path]


async def count(sandbox: PostgresSandbox, table: str) -> int:
    async with sandbox.connect() as conn:
        return int(await conn.fetchval(f"SELECT count(*) FROM {table}"))


async def role_exists(cluster: PostgresCluster, role: str) -> bool:
    rows = await fetch(cluster.admin, "SELECT 1 FROM pg_roles WHERE rolname = $1", role)
    return bool(rows)


async def database_exists(cluster: PostgresCluster, database: str) -> bool:
    rows = await fetch(cluster.admin, "SELECT 1 FROM pg_database WHERE datname = $1", database)
    return bool(rows)


def new_role() -> str:
    return f"analyst_{secrets.token_hex(4)}"


# --- creation -------------------------------------------------------------------------------


@pytest.mark.parametrize("runner", ["psql", "asyncpg"])
async def test_seeded_sandbox_holds_the_seed(
    cluster: PostgresCluster, shop: Shop, runner: str
) -> None:
    async with ClusterPostgresProvider(cluster, seed_runner=runner) as provider:  # type: ignore[arg-type]
        sandbox = await provider.create(*shop)
        assert provider.backend == cluster.backend
        assert sandbox.name.startswith(current_run().prefix)
        assert not sandbox.read_only
        async with sandbox.connect() as conn:
            names = [row["name"] for row in await conn.fetch("SELECT name FROM customer_names")]
            assert names == ["Ada", "Bilal", "Chen"]
            assert await conn.fetchval("SELECT nextval('ticket_seq')") == 1
            assert await conn.fetchval("SELECT current_database()") == sandbox.name
        # The connection info works on its own, as a verifier would use it.
        rows = await fetch(sandbox.connection, "SELECT count(*) AS n FROM orders")
        assert rows[0]["n"] == 2
    assert await run_owned(cluster.admin) == ([], [])


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


async def test_psql_seeds_may_use_copy_and_restrict_fences(
    provider: ClusterPostgresProvider, tmp_path: Path
) -> None:
    seed = (
        "\\restrict 4kQz9\n"
        "CREATE TABLE notes (id integer, body text);\n"
        "COPY notes (id, body) FROM stdin;\n1\tfirst\n2\tsecond\n\\.\n"
        "\\unrestrict 4kQz9\n"
    )
    sandbox = await provider.create(*write_task(tmp_path / "copy", seed, "copy-task"))
    async with sandbox.connect() as conn:
        assert await conn.fetchval("SELECT string_agg(body, ',' ORDER BY id) FROM notes") == (
            "first,second"
        )


async def test_empty_state_gives_an_empty_database(
    provider: ClusterPostgresProvider, tmp_path: Path
) -> None:
    sandbox = await provider.create(*write_task(tmp_path / "empty", None, "empty-task"))
    async with sandbox.connect() as conn:
        tables = await conn.fetchval(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')"
        )
        assert tables == 0
        await conn.execute("CREATE TABLE scratch (a integer)")
    other = await provider.create(*write_task(tmp_path / "empty", None, "empty-task"))
    assert await fetch(other.connection, "SELECT to_regclass('scratch') AS t") == [(None,)]


@pytest.mark.parametrize("runner", ["psql", "asyncpg"])
async def test_a_broken_seed_fails_naming_the_file(
    cluster: PostgresCluster, tmp_path: Path, runner: str
) -> None:
    seed = "CREATE TABLE fine (a integer);\nINSERT INTO missing_table VALUES (1);\n"
    task, folder = write_task(tmp_path / "broken", seed, "broken-task")
    async with ClusterPostgresProvider(cluster, seed_runner=runner) as provider:  # type: ignore[arg-type]
        for _ in range(2):  # a failure is not cached as a template
            with pytest.raises(SandboxError) as caught:
                await provider.create(task, folder)
            message = str(caught.value)
            assert str(folder / "seed.sql") in message
            assert "missing_table" in message
            assert "line 2" in message or "seed.sql:2" in message
            assert await run_owned(cluster.admin) == ([], [])


async def test_missing_seed_and_unsupported_states_are_refused(
    provider: ClusterPostgresProvider, tmp_path: Path
) -> None:
    task, folder = write_task(tmp_path / "no-seed", SHOP_SEED, "no-seed")
    (folder / "seed.sql").unlink()
    with pytest.raises(SandboxError, match=r"cannot read seed .*seed\.sql"):
        await provider.create(task, folder)
    tree = task.model_copy(update={"initial_state": DirectoryTreeState()})
    with pytest.raises(SandboxError, match="directory_tree"):
        await provider.create(tree, folder)


async def test_eight_concurrent_sandboxes_share_one_template(
    provider: ClusterPostgresProvider, cluster: PostgresCluster, shop: Shop
) -> None:
    sandboxes = await asyncio.gather(*(provider.create(*shop) for _ in range(8)))
    assert len({sandbox.name for sandbox in sandboxes}) == 8
    assert [await count(sandbox, "customers") for sandbox in sandboxes] == [3] * 8
    databases, _ = await run_owned(cluster.admin)
    assert len([name for name in databases if "_tpl_" in name]) == 1


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


# --- roles ----------------------------------------------------------------------------------


def test_role_statements_are_recognised() -> None:
    assert may_touch_roles("create role x")
    assert may_touch_roles("ALTER USER x RENAME TO y")
    assert may_touch_roles("DROP GROUP g")
    assert may_touch_roles("DO $$ BEGIN EXECUTE 'CREATE ROLE x'; END $$")
    assert may_touch_roles("CALL make_roles()")
    assert not may_touch_roles("SELECT status, count(*) FROM customers GROUP BY status")
    assert not may_touch_roles("SELECT current_user, user_id FROM users")


async def test_a_role_created_through_connect_goes_with_its_sandbox(
    provider: ClusterPostgresProvider, cluster: PostgresCluster, shop: Shop
) -> None:
    sandbox = await provider.create(*shop)
    role, renamed = new_role(), new_role()
    async with sandbox.connect(f"CREATE ROLE {role} LOGIN") as conn:
        await conn.execute(f"CREATE ROLE {role} LOGIN")
    rows = await fetch(
        cluster.admin,
        "SELECT shobj_description(oid, 'pg_authid') AS c FROM pg_roles WHERE rolname = $1",
        role,
    )
    assert rows[0]["c"] == f"agentjudge owner={sandbox.name} host={socket.gethostname()}"
    async with sandbox.connect(f"ALTER ROLE {role} RENAME TO {renamed}") as conn:
        await conn.execute(f"ALTER ROLE {role} RENAME TO {renamed}")
    await sandbox.destroy()
    assert not await role_exists(cluster, role)
    assert not await role_exists(cluster, renamed)


async def test_concurrent_role_creation_is_attributed_to_the_right_sandbox(
    provider: ClusterPostgresProvider, cluster: PostgresCluster, shop: Shop
) -> None:
    first, second = await provider.create(*shop), await provider.create(*shop)
    roles = {first.name: new_role(), second.name: new_role()}

    async def make(sandbox: PostgresSandbox) -> None:
        statement = f"CREATE ROLE {roles[sandbox.name]}"
        async with sandbox.connect(statement) as conn:
            await asyncio.sleep(0.05)
            await conn.execute(statement)

    await asyncio.gather(make(first), make(second))
    await first.destroy()
    assert not await role_exists(cluster, roles[first.name])
    assert await role_exists(cluster, roles[second.name])
    await second.destroy()
    assert not await role_exists(cluster, roles[second.name])


async def test_roles_a_snapshot_needs_live_until_the_snapshot_and_its_clones_are_gone(
    provider: ClusterPostgresProvider, cluster: PostgresCluster, shop: Shop
) -> None:
    sandbox = await provider.create(*shop)
    role = new_role()
    statement = f"CREATE ROLE {role}; GRANT SELECT ON customers TO {role}"
    async with sandbox.connect(statement) as conn:
        await conn.execute(statement)
    snapshot = await sandbox.freeze()
    assert await role_exists(cluster, role)
    clone = await snapshot.clone()
    async with clone.connect() as conn:
        assert await conn.fetchval("SELECT has_table_privilege($1, 'customers', 'SELECT')", role)
    await clone.destroy()
    assert await role_exists(cluster, role)
    survivor = await snapshot.clone()
    await snapshot.destroy()
    assert await role_exists(cluster, role)  # the surviving clone still grants to it
    await survivor.destroy()
    assert not await role_exists(cluster, role)


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
    assert len(seen) == 5  # template, snapshot, view, clone, second sandbox
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


async def test_each_view_has_its_own_reader_who_cannot_touch_other_views(
    provider: ClusterPostgresProvider, cluster: PostgresCluster, shop: Shop
) -> None:
    first = await (await provider.create(*shop)).freeze()
    second = await (await provider.create(*shop)).freeze()
    view_a = await first.clone(writable=False)
    view_b = await second.clone(writable=False)
    assert view_a.connection.user != view_b.connection.user
    # Another view's reader may neither connect here nor end or watch this view's sessions.
    with pytest.raises(asyncpg.PostgresError):
        await fetch(view_b.connection.with_database(view_a.name), "SELECT 1")
    async with view_a.connect() as watched:
        pid = await watched.fetchval("SELECT pg_backend_pid()")
        async with view_b.connect() as intruder:
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await intruder.fetchval("SELECT pg_terminate_backend($1)", pid)
            seen = await intruder.fetchval("SELECT query FROM pg_stat_activity WHERE pid = $1", pid)
            assert seen in (None, "<insufficient privilege>")
        assert await watched.fetchval("SELECT 1") == 1
    reader_a = view_a.connection.user
    await first.destroy()
    assert not await role_exists(cluster, reader_a)
    assert await role_exists(cluster, view_b.connection.user)
    await second.destroy()
    assert not await role_exists(cluster, view_b.connection.user)


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
