"""Roles a recording's server had (Supabase's ``anon``, ``authenticated``, ``service_role``) exist
in a sandbox started from a state that names them, on every cluster backend."""

from __future__ import annotations

import secrets
from pathlib import Path

import asyncpg
import pytest

from dataset.models import SqlSeedState
from sandboxes.postgres import admin
from sandboxes.postgres.provider import ClusterPostgresProvider
from sandboxes.postgres.sandbox import PostgresCluster
from tests.sandboxes.postgres.helpers import SHOP_SEED, fetch, write_task


async def test_named_server_roles_exist_and_take_grants_and_policies(
    cluster: PostgresCluster, provider: ClusterPostgresProvider, tmp_path: Path
) -> None:
    # Names of the test's own (no run prefix: the roles are the server's, and stay).
    names = [f"anon_{secrets.token_hex(4)}", f"authenticated_{secrets.token_hex(4)}"]
    task, folder = write_task(tmp_path / "shop", SHOP_SEED)
    bare = await provider.create(task, folder)
    try:
        async with bare.connect() as conn:
            await conn.execute("CREATE TABLE notes (body text)")
            with pytest.raises(asyncpg.UndefinedObjectError):
                await conn.execute(f"GRANT SELECT ON notes TO {names[0]}")
    finally:
        await bare.destroy()

    recorded = task.model_copy(update={"initial_state": SqlSeedState(server_roles=names)})
    try:
        sandbox = await provider.create(recorded, folder)
        again = await provider.create(recorded, folder)  # the roles exist now: made once
        try:
            async with sandbox.connect() as conn:
                await conn.execute("CREATE TABLE notes (body text)")
                await conn.execute(f"GRANT SELECT ON notes TO {names[0]}")
                await conn.execute("ALTER TABLE notes ENABLE ROW LEVEL SECURITY")
                await conn.execute(f"CREATE POLICY own ON notes FOR ALL TO {names[1]} USING (true)")
                granted = await conn.fetchval(
                    "SELECT has_table_privilege($1, 'notes', 'SELECT')", names[0]
                )
            assert granted
        finally:
            await sandbox.destroy()
            await again.destroy()
        rows = await fetch(
            cluster.admin,
            "SELECT rolname, rolcanlogin, rolsuper, rolcreaterole, rolcreatedb, rolbypassrls"
            " FROM pg_roles WHERE rolname = ANY($1::text[]) ORDER BY rolname",
            names,
        )
        assert [tuple(row) for row in rows] == [
            (name, False, False, False, False, False) for name in sorted(names)
        ]
    finally:
        for name in names:
            await fetch(cluster.admin, f"DROP ROLE IF EXISTS {admin.quote_ident(name)}")
