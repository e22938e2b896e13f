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
