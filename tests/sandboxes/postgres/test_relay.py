"""The relay that lets boxed code reach one database through a Unix socket (every backend)."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import asyncpg
import pytest

from dataset.models import Task
from sandboxes.postgres import admin
from sandboxes.postgres.provider import ClusterPostgresProvider
from sandboxes.postgres.relay import postgres_relay
from sandboxes.postgres.sandbox import PostgresCluster


async def test_the_relay_admits_its_role_to_its_database_only(
    provider: ClusterPostgresProvider,
    cluster: PostgresCluster,
    shop: tuple[Task, Path],
    tmp_path: Path,
) -> None:
    sandbox = await provider.create(*shop)
    owner = await sandbox.owner_connection()
    folder = tmp_path / "relay"
    async with postgres_relay(owner, folder) as relayed:
        assert relayed.bind == [folder]
        assert relayed.info == owner.model_copy(update={"host": str(folder)})
        socket_file = folder / f".s.PGSQL.{owner.port}"
        assert stat.S_ISSOCK(socket_file.stat().st_mode)
        assert stat.S_IMODE(socket_file.stat().st_mode) == 0o777
        held = await admin.connect(relayed.info)
        row = await held.fetchrow(
            "SELECT current_user AS who, current_database() AS db,"
            " (SELECT count(*) FROM customers) AS n"
        )
        assert row is not None
        assert tuple(row) == (owner.user, owner.database, 3)
        # Another role, or another database, is turned away by the relay with a reason.
        for other in (
            relayed.info.model_copy(update={"user": cluster.admin.user}),
            relayed.info.with_database("postgres"),
        ):
            with pytest.raises(asyncpg.PostgresError, match="this relay admits role"):
                await admin.connect(other)
        # An encryption request is declined, then the startup packet is read as usual.
        reader, writer = await asyncio.open_unix_connection(str(socket_file))
        writer.write((8).to_bytes(4, "big") + (80877103).to_bytes(4, "big"))
        assert await reader.readexactly(1) == b"N"
        writer.close()
    # The block's end cuts live connections and removes the socket.
    assert not folder.exists()
    with pytest.raises((asyncpg.PostgresError, asyncpg.InterfaceError, OSError)):
        await held.fetchval("SELECT 1")
    held.terminate()
    await sandbox.destroy()


async def test_a_verifiers_relay_admits_the_roles_its_sandbox_made_and_no_other(
    provider: ClusterPostgresProvider,
    cluster: PostgresCluster,
    shop: tuple[Task, Path],
) -> None:
    from environments.postgres.kind import KIND
    from sandboxes.postgres.sandbox import PostgresConnectionInfo
    from tests.sandboxes.postgres.helpers import fetch, new_role

    sandbox = await provider.create(*shop)
    made, stranger = new_role(), new_role()
    await fetch(cluster.admin, f"CREATE ROLE {stranger} LOGIN PASSWORD 'pw'")
    try:
        async with KIND.verifier_inputs(sandbox) as inputs:
            variables = inputs.environment
            relayed = PostgresConnectionInfo(
                host=variables["POSTGRES_HOST"],
                port=int(variables["POSTGRES_PORT"]),
                user=variables["POSTGRES_USERNAME"],
                password=variables["POSTGRES_PASSWORD"],
                database=variables["POSTGRES_DATABASE"],
            )
            # As an MCPMark verifier does: make a role, then log in as it to test its rights.
            await fetch(relayed, f"CREATE ROLE {made} LOGIN PASSWORD 'pw'")
            as_made = relayed.model_copy(update={"user": made, "password": "pw"})
            assert (await fetch(as_made, "SELECT current_user AS who"))[0]["who"] == made
            with pytest.raises(asyncpg.PostgresError, match="permission denied for table"):
                await fetch(as_made, "SELECT * FROM customers")
            # A role the sandbox did not make, and the administrator, stay out.
            for other in (
                relayed.model_copy(update={"user": stranger, "password": "pw"}),
                relayed.model_copy(update={"user": cluster.admin.user}),
            ):
                with pytest.raises(asyncpg.PostgresError, match="and the roles it manages"):
                    await fetch(other, "SELECT 1")
            # Nor may a made role reach another database through the relay.
            with pytest.raises(asyncpg.PostgresError, match="this relay admits"):
                await fetch(as_made.with_database("postgres"), "SELECT 1")
    finally:
        await sandbox.destroy()
        await fetch(cluster.admin, f"DROP ROLE {stranger}")
    rows = await fetch(cluster.admin, "SELECT 1 FROM pg_roles WHERE rolname = $1", made)
    assert rows == []  # gone with the sandbox that made it
