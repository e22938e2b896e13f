"""The roles of Postgres sandboxes on every cluster backend: recognising role statements,
attributing created roles to their sandbox, dropping them with it, and one reader per view."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import pytest

from dataset.models import Task
from sandboxes.postgres.provider import ClusterPostgresProvider
from sandboxes.postgres.roles import may_touch_roles
from sandboxes.postgres.sandbox import PostgresCluster, PostgresSandbox
from tests.sandboxes.postgres.helpers import (
    fetch,
    new_role,
    role_exists,
    write_task,
)

Shop = tuple[Task, Path]


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
        # Its creator, the sandbox role, holds its ADMIN OPTION: that is what ties it to the
        # sandbox (whatever it is renamed to), and what lets the sandbox role manage it.
        creators = await conn.fetch(
            "SELECT member::regrole::text AS creator FROM pg_auth_members"
            " WHERE roleid = $1::regrole AND admin_option",
            role,
        )
        assert [row["creator"] for row in creators] == [sandbox.role.user]
        await conn.execute(f"SET ROLE {role}; RESET ROLE")  # createrole_self_grant
    async with sandbox.connect(f"ALTER ROLE {role} RENAME TO {renamed}") as conn:
        await conn.execute(f"ALTER ROLE {role} RENAME TO {renamed}")
    await sandbox.destroy()
    assert not await role_exists(cluster, role)
    assert not await role_exists(cluster, renamed)


async def test_roles_created_through_sandboxes_go_when_sandboxes_are_destroyed_at_once(
    provider: ClusterPostgresProvider, cluster: PostgresCluster, shop: Shop
) -> None:
    # Dropping a creator role leaves the roles it created behind (nothing depends on it), so
    # concurrent destroys must not drop one sandbox's role before the roles it made.
    for _ in range(3):
        sandboxes = await asyncio.gather(*(provider.create(*shop) for _ in range(8)))
        made = []
        for sandbox in sandboxes[::2]:
            role = new_role()
            async with sandbox.connect(f"CREATE ROLE {role}") as conn:
                await conn.execute(f"CREATE ROLE {role}")
            made.append(role)
        await asyncio.gather(*(sandbox.destroy() for sandbox in sandboxes))
        assert [role for role in made if await role_exists(cluster, role)] == []


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


async def test_roles_a_seed_creates_are_the_templates_and_its_sandboxes_manage_them(
    provider: ClusterPostgresProvider, cluster: PostgresCluster, tmp_path: Path
) -> None:
    auditor = new_role()
    seed = (
        "CREATE TABLE ledger (id integer);\n"
        f"CREATE ROLE {auditor} LOGIN;\n"
        f"GRANT SELECT ON ledger TO {auditor};\n"
        # Handing a table over needs SET ROLE on the new owner (createrole_self_grant gives it)
        # and, not being a superuser, the new owner's CREATE on the schema.
        f"GRANT CREATE ON SCHEMA public TO {auditor};\n"
        f"ALTER TABLE ledger OWNER TO {auditor};\n"
    )
    task = write_task(tmp_path / "audit", seed, "audit")
    first, second = await provider.create(*task), await provider.create(*task)
    async with first.connect() as conn:
        # The sandbox role inherits the seed role's ADMIN OPTION on what the seed made.
        await conn.execute(f"ALTER ROLE {auditor} NOLOGIN; REVOKE SELECT ON ledger FROM {auditor}")
        assert not await conn.fetchval(
            "SELECT has_table_privilege($1, 'ledger', 'SELECT')", auditor
        )
    async with second.connect() as conn:  # grants are per database
        assert await conn.fetchval("SELECT has_table_privilege($1, 'ledger', 'SELECT')", auditor)
    await first.destroy()
    await second.destroy()
    assert await role_exists(cluster, auditor)  # the template's, until the template goes
    await provider.aclose()
    assert not await role_exists(cluster, auditor)


async def test_grants_on_other_databases_are_refused_and_grants_on_its_own_go_with_it(
    provider: ClusterPostgresProvider, cluster: PostgresCluster, shop: Shop
) -> None:
    # An agent that grants its role CONNECT on the maintenance database (as a recorded run did)
    # is refused there, so nothing outside the sandbox keeps a privilege of a doomed role; a
    # grant on the sandbox's own database goes with the database.
    sandbox = await provider.create(*shop)
    role = new_role()
    async with sandbox.connect() as conn:
        await conn.execute(f"CREATE ROLE {role} LOGIN")
        with pytest.raises(asyncpg.PostgresError, match="permission denied for database"):
            await conn.execute(f"GRANT CONNECT ON DATABASE postgres TO {role}")
        own = await conn.fetchval("SELECT current_database()")
        await conn.execute(f'GRANT CONNECT, TEMPORARY ON DATABASE "{own}" TO {role}')
    grants = await fetch(
        cluster.admin,
        "SELECT DISTINCT datname FROM pg_database, aclexplode(datacl) AS acl"
        " WHERE acl.grantee = $1::regrole",
        role,
    )
    assert [row["datname"] for row in grants] == [own]
    await sandbox.destroy()
    assert not await role_exists(cluster, role)
