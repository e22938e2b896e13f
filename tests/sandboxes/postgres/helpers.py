"""Helpers shared by the Postgres sandbox tests: the shop seed, tasks, and server queries."""

from __future__ import annotations

import secrets
import shutil
from pathlib import Path
from typing import Any

from dataset.models import EmptyState, SqlSeedState, Task
from sandboxes.postgres import admin
from sandboxes.postgres.embedded import wheel_binaries
from sandboxes.postgres.sandbox import PostgresCluster, PostgresConnectionInfo, PostgresSandbox
from sandboxes.runs import current_run

SHOP_SEED = """
-- a small shop: 3 customers, 2 orders
CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL);
CREATE TABLE orders (id integer PRIMARY KEY, customer_id integer REFERENCES customers (id));
CREATE SEQUENCE ticket_seq;
CREATE VIEW customer_names AS SELECT name FROM customers;
INSERT INTO customers VALUES (1, 'Ada'), (2, 'Bilal'), (3, 'Chen');
INSERT INTO orders VALUES (10, 1), (11, 3);
"""
"""The seed most tests use (several statements, a view and a sequence)."""


async def fetch(info: PostgresConnectionInfo, sql: str, *args: Any) -> list[Any]:
    """Rows of one query on a fresh administrative connection."""
    conn = await admin.connect(info)
    try:
        return list(await conn.fetch(sql, *args))
    finally:
        await conn.close()


async def run_owned(info: PostgresConnectionInfo) -> tuple[list[str], list[str]]:
    """The databases and roles on the server of this test run: named ``aj_<id>_...``, marked
    with a comment naming such a database, or created by such a role."""
    prefix = current_run().prefix.replace("_", r"\_") + "%"
    databases = await fetch(info, "SELECT datname FROM pg_database WHERE datname LIKE $1", prefix)
    roles = await fetch(
        info,
        "WITH RECURSIVE mine(oid) AS ("
        " SELECT oid FROM pg_roles WHERE (rolname LIKE $1 AND rolname NOT LIKE '%extadmin%')"
        "  OR shobj_description(oid, 'pg_authid') LIKE 'agentjudge owner=' || $1"
        " UNION SELECT m.roleid FROM pg_auth_members m JOIN mine ON m.member = mine.oid"
        "  WHERE m.admin_option)"
        " SELECT rolname FROM pg_roles JOIN mine USING (oid) ORDER BY rolname",
        prefix,
    )
    return [row["datname"] for row in databases], [row["rolname"] for row in roles]


def write_task(folder: Path, seed: str | None, task_id: str = "shop") -> tuple[Task, Path]:
    """A postgres task in ``folder``: seeded from ``seed``, or empty when it is None."""
    folder.mkdir(parents=True, exist_ok=True)
    if seed is not None:
        (folder / "seed.sql").write_text(seed)
    return (
        Task(
            id=task_id,
            domain="ds",
            subdomain="postgres",
            instruction="Look at the shop.",
            initial_state=SqlSeedState() if seed is not None else EmptyState(),
        ),
        folder,
    )


async def count(sandbox: PostgresSandbox, table: str) -> int:
    """Rows of ``table`` in the sandbox."""
    async with sandbox.connect() as conn:
        return int(await conn.fetchval(f"SELECT count(*) FROM {table}"))


async def role_exists(cluster: PostgresCluster, role: str) -> bool:
    """Whether the server has a role named ``role``."""
    rows = await fetch(cluster.admin, "SELECT 1 FROM pg_roles WHERE rolname = $1", role)
    return bool(rows)


async def database_exists(cluster: PostgresCluster, database: str) -> bool:
    """Whether the server has a database named ``database``."""
    rows = await fetch(cluster.admin, "SELECT 1 FROM pg_database WHERE datname = $1", database)
    return bool(rows)


def new_role() -> str:
    """A fresh role name, for roles a test creates through a sandbox."""
    return f"analyst_{secrets.token_hex(4)}"


def find_psql() -> Path | None:
    """The psql of the pgserver wheel, else the first one on ``PATH`` (a client as a verifier
    would use one)."""
    binaries = wheel_binaries()
    if binaries is not None and (binaries / "psql").is_file():
        return binaries / "psql"
    found = shutil.which("psql")
    return Path(found) if found else None
