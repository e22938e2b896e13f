"""The owner role of a writable Postgres sandbox: owns the sandbox's objects, reaches nothing
else, and goes away with the sandbox."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from dataset.models import Task
from sandboxes.base import SandboxError
from sandboxes.postgres import admin
from sandboxes.postgres.provider import ClusterPostgresProvider
from sandboxes.postgres.sandbox import PostgresCluster
from tests.sandboxes.postgres.helpers import SHOP_SEED, fetch, write_task

RICH_SEED = (
    SHOP_SEED
    + """
CREATE SCHEMA extra;
CREATE TABLE extra.events (
    id serial PRIMARY KEY, at timestamptz, n integer GENERATED ALWAYS AS IDENTITY
);
CREATE MATERIALIZED VIEW extra.event_counts AS SELECT count(*) AS n FROM extra.events;
CREATE FUNCTION extra.double(x integer) RETURNS integer LANGUAGE sql AS 'SELECT 2 * x';
CREATE PROCEDURE extra.noop() LANGUAGE sql AS 'SELECT 1';
CREATE TYPE extra.mood AS ENUM ('calm', 'angry');
CREATE DOMAIN extra.positive AS integer CHECK (VALUE > 0);
CREATE TYPE extra.pair AS (a integer, b integer);
"""
)


async def test_the_owner_role_owns_the_sandbox_and_nothing_else(
    provider: ClusterPostgresProvider, cluster: PostgresCluster, tmp_path: Path
) -> None:
    sandbox = await provider.create(*write_task(tmp_path / "rich", RICH_SEED, "rich"))
    other = await provider.create(*write_task(tmp_path / "shop", SHOP_SEED))
    snapshot = await (await provider.create(*write_task(tmp_path / "s", SHOP_SEED, "s"))).freeze()
    info = await sandbox.owner_connection()
    assert await sandbox.owner_connection() == info  # made once, with the sandbox
    assert info == sandbox.role
    assert info.database == sandbox.name
    assert info.user not in (cluster.admin.user, sandbox.connection.user)
    role = await fetch(
        cluster.admin,
        "SELECT rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls"
        " FROM pg_roles WHERE rolname = $1",
        info.user,
    )
    modern = provider.version >= 160000  # CREATEROLE is confined to its own roles from 16 on
    assert tuple(role[0]) == (False, False, modern, False, False)
    owners = await fetch(
        cluster.admin.with_database(sandbox.name),
        "SELECT DISTINCT pg_get_userbyid(owner) AS owner,"
        " pg_has_role($1, owner, 'USAGE') AS inherited FROM ("
        " SELECT relowner AS owner FROM pg_class c JOIN pg_namespace n ON n.oid = relnamespace"
        "  WHERE nspname IN ('public', 'extra')"
        " UNION ALL SELECT proowner FROM pg_proc p JOIN pg_namespace n ON n.oid = pronamespace"
        "  WHERE nspname IN ('public', 'extra')"
        " UNION ALL SELECT typowner FROM pg_type t JOIN pg_namespace n ON n.oid = typnamespace"
        "  WHERE nspname IN ('public', 'extra')"
        " UNION ALL SELECT nspowner FROM pg_namespace WHERE nspname IN ('public', 'extra')"
        " UNION ALL SELECT datdba FROM pg_database WHERE datname = current_database()) o"
        " ORDER BY 1",
        info.user,
    )
    # The seed role made everything; the sandbox role owns the database (and so the public
    # schema) and holds the seed role's privileges, which is all it holds.
    seed_role, own = list(sandbox.stand_ins())
    assert "_seed_" in seed_role
    assert own == info.user
    assert {row["owner"] for row in owners} == {seed_role, "pg_database_owner", info.user}
    assert all(row["inherited"] for row in owners)
    async with sandbox.connect_as_owner() as conn:
        assert await conn.fetchval("SELECT current_user") == info.user
        await conn.execute("INSERT INTO customers VALUES (4, 'Dana')")
        await conn.execute("INSERT INTO extra.events (at) VALUES (now())")
        await conn.execute("CREATE TABLE extra.scratch (a extra.positive, m extra.mood)")
        await conn.execute("REFRESH MATERIALIZED VIEW extra.event_counts")
        assert await conn.fetchval("SELECT extra.double(21)") == 42
        assert await conn.fetchval("SELECT nextval('ticket_seq')") == 1
        refusals = {
            f"DROP DATABASE {admin.quote_ident(other.name)}": "must be owner",
            f"ALTER DATABASE {admin.quote_ident(snapshot.name)} ALLOW_CONNECTIONS true": (
                "must be owner"
            ),
            f"ALTER DATABASE {admin.quote_ident(sandbox.name)} RENAME TO gone": (
                "permission denied to rename"
            ),
            f"DROP DATABASE {admin.quote_ident(sandbox.name)}": "currently open database",
            "CREATE DATABASE evil": "permission denied",
            "CREATE ROLE evil SUPERUSER": "permission denied|must be superuser",
            "CREATE ROLE evil CREATEDB": "permission denied",
            f"ALTER ROLE {admin.quote_ident(cluster.admin.user)} PASSWORD 'x'": (
                "permission denied|must be superuser"
            ),
            f"SET ROLE {admin.quote_ident(cluster.admin.user)}": "permission denied",
            "GRANT pg_execute_server_program TO CURRENT_USER": (
                "permission denied|must have admin option"
            ),
            "ALTER SYSTEM SET work_mem = '1GB'": "permission denied",
            "COPY customers TO PROGRAM 'true'": "permission denied|must be superuser",
            "SELECT pg_read_file('/etc/hostname')": "permission denied",
            "ALTER ROLE CURRENT_USER CREATEDB": "permission denied",
        }
        if modern:  # before 16, membership always allows SET ROLE (harmless: see roles.py)
            refusals[f"SET ROLE {admin.quote_ident(seed_role)}"] = "permission denied"
        for statement, message in refusals.items():
            with pytest.raises(asyncpg.PostgresError, match=message):
                await conn.execute(statement)
    # No other database of the runtime lets the role in (nor the reader: see test_provider).
    for database in (other.name, snapshot.name):
        with pytest.raises((asyncpg.PostgresError, OSError)):
            await fetch(info.with_database(database), "SELECT 1")
    assert await fetch(
        cluster.admin.with_database(other.name), "SELECT count(*) FROM customers"
    ) == [(3,)]
    # The role goes with the sandbox.
    await sandbox.destroy()
    assert not await fetch(cluster.admin, "SELECT 1 FROM pg_roles WHERE rolname = $1", info.user)
    with pytest.raises(SandboxError):
        await sandbox.owner_connection()


async def test_views_have_no_owner_role(
    provider: ClusterPostgresProvider, shop: tuple[Task, Path]
) -> None:
    view = await (await provider.create(*shop)).freeze()
    read_only = await view.clone(writable=False)
    with pytest.raises(SandboxError, match="read-only"):
        await read_only.owner_connection()


async def test_a_frozen_owner_sandbox_clones_and_cleans_up(
    provider: ClusterPostgresProvider, cluster: PostgresCluster, shop: tuple[Task, Path]
) -> None:
    sandbox = await provider.create(*shop)
    info = await sandbox.owner_connection()
    async with sandbox.connect_as_owner() as conn:
        await conn.execute("INSERT INTO customers VALUES (4, 'Dana')")
        await conn.execute("CREATE TABLE made_here (a integer)")
    snapshot = await sandbox.freeze()
    # A sealed snapshot belongs to the administrator, and its role logs in no more.
    sealed = await fetch(
        cluster.admin,
        "SELECT pg_get_userbyid(datdba) AS owner, (SELECT rolcanlogin FROM pg_roles"
        " WHERE rolname = $2) AS login FROM pg_database WHERE datname = $1",
        snapshot.name,
        info.user,
    )
    assert tuple(sealed[0]) == (cluster.admin.user, False)
    clone = await snapshot.clone()
    async with clone.connect() as conn:
        assert await conn.fetchval("SELECT count(*) FROM customers") == 4
    clone_owner = await clone.owner_connection()
    assert clone_owner.user != info.user
    assert list(clone.stand_ins())[-1] == clone_owner.user
    assert info.user in clone.stand_ins()
    async with clone.connect_as_owner() as conn:
        # What the seed made and what the frozen sandbox made are the clone role's to change.
        await conn.execute("DROP TABLE made_here; ALTER TABLE customers ADD COLUMN z integer")
    async with clone.connect_as_owner() as conn:
        await conn.execute("DELETE FROM orders")
    await clone.destroy()
    await snapshot.destroy()
    # (the provider fixture checks that no role or database of this run is left)
