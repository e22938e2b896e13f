"""The administrative pool's defences against a server session whose idea of the
administrator's role memberships is stale: a held connection for making a role and then acting
through it, and a privilege failure retried once on a session of its own (not a superuser's)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import asyncpg
import pytest

from sandboxes.postgres import admin
from sandboxes.postgres.embedded import EmbeddedPostgresCluster
from sandboxes.postgres.sandbox import PostgresCluster
from tests.sandboxes.postgres.helpers import fetch, new_role, role_exists

PID = "SELECT pg_backend_pid()"


@pytest.fixture
async def weak_role(
    embedded_cluster: EmbeddedPostgresCluster, external_cluster: PostgresCluster
) -> AsyncIterator[str]:
    """A role without CREATEROLE that both administrators may switch to."""
    role = new_role()
    external_admin = admin.quote_ident(external_cluster.admin.user)
    await fetch(embedded_cluster.admin, f"CREATE ROLE {role}")
    await fetch(embedded_cluster.admin, f"GRANT {role} TO {external_admin}")
    yield role
    await fetch(embedded_cluster.admin, f"DROP ROLE {role}")


async def test_a_held_connection_serves_every_use_of_its_task_and_no_other_task(
    external_cluster: PostgresCluster,
) -> None:
    pool = admin.AdminPool(external_cluster, 4)
    entered = asyncio.Event()

    async def pid_of_another_task() -> int:
        await entered.wait()
        async with pool.connection() as conn:
            pid: int = await conn.fetchval(PID)
            return pid

    try:
        other = asyncio.create_task(pid_of_another_task())  # started before the block
        async with pool.held() as held:
            async with pool.connection() as conn, pool.connection() as again:
                assert conn is held
                assert again is held
            entered.set()
            assert await other != await held.fetchval(PID)
    finally:
        await pool.close()


Action = Callable[[asyncpg.Connection], Awaitable[None]]


def privilege_failure_once(weak: str, made: str, sessions: list[int]) -> Action:
    """An action that creates role ``made``; its first session lacks the privilege (acting as
    ``weak``, as a session with a stale membership cache would), later ones have it. Appends
    each session's server process id to ``sessions``."""

    async def action(conn: asyncpg.Connection) -> None:
        sessions.append(await conn.fetchval(PID))
        if len(sessions) == 1:
            async with conn.transaction():
                await conn.execute(f"SET LOCAL ROLE {weak}")
                await conn.execute(f"CREATE ROLE {made}")
        else:
            await conn.execute(f"CREATE ROLE {made}")

    return action


async def session_alive(cluster: PostgresCluster, pid: int) -> bool:
    """Whether the server process ``pid`` still serves a session (waits up to 5 s for it to go)."""
    for _ in range(50):
        rows = await fetch(cluster.admin, "SELECT 1 FROM pg_stat_activity WHERE pid = $1", pid)
        if not rows:
            return False
        await asyncio.sleep(0.1)
    return True


async def test_a_privilege_failure_is_tried_again_on_a_new_session_and_that_session_dropped(
    external_cluster: PostgresCluster, weak_role: str
) -> None:
    pool = admin.AdminPool(external_cluster, 2)
    made, sessions = new_role(), list[int]()
    try:
        await pool.run(privilege_failure_once(weak_role, made, sessions))
        assert await role_exists(external_cluster, made)
        first, second = sessions
        assert second != first
        assert not await session_alive(external_cluster, first)  # not left for the next user
    finally:
        async with pool.connection() as conn:
            await conn.execute(f"DROP ROLE IF EXISTS {made}")
        await pool.close()


async def run_holding(pool: admin.AdminPool, action: Action) -> None:
    """``pool.run(action)`` inside a block that holds a connection."""
    async with pool.held():
        await pool.run(action)


async def test_a_superuser_or_a_held_connection_gets_no_second_try(
    embedded_cluster: EmbeddedPostgresCluster, external_cluster: PostgresCluster, weak_role: str
) -> None:
    for cluster, holding in ((embedded_cluster, False), (external_cluster, True)):
        pool = admin.AdminPool(cluster, 2)
        made, sessions = new_role(), list[int]()
        action = privilege_failure_once(weak_role, made, sessions)
        try:
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await (run_holding(pool, action) if holding else pool.run(action))
            assert len(sessions) == 1
            assert not await role_exists(cluster, made)
            # A superuser's session keeps its place in the pool.
            assert await session_alive(cluster, sessions[0]) == pool.superuser
        finally:
            await pool.close()
