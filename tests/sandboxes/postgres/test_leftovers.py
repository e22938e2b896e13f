"""Collecting what killed runs left: embedded servers, databases and roles on a shared server."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any

import pytest

from sandboxes.postgres import admin
from sandboxes.postgres.embedded import IN_MEMORY_ENV, EmbeddedPostgresCluster, memory_parent
from sandboxes.postgres.leftovers import collect_embedded_leftovers, collect_postgres_leftovers
from sandboxes.postgres.provider import ClusterPostgresProvider
from sandboxes.runs import process_alive, workdir
from tests.sandboxes.postgres.helpers import SHOP_SEED, fetch, write_task

CHILD = Path(__file__).with_name("killed_run.py")


async def run_and_kill(
    *arguments: str, environment: dict[str, str] | None = None
) -> dict[str, Any]:
    """Start ``killed_run.py``, read what it made, and SIGKILL it."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(CHILD),
        *arguments,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(environment or {})},
    )
    try:
        line = await asyncio.wait_for(process.stdout.readline(), 120)  # type: ignore[union-attr]
        if not line:
            errors = await asyncio.wait_for(process.stderr.read(), 10)  # type: ignore[union-attr]
            pytest.fail(f"the child run failed: {errors.decode()}")
        report: dict[str, Any] = json.loads(line)
    finally:
        process.kill()
        await process.wait()
    return report


async def names_present(
    cluster: EmbeddedPostgresCluster, databases: list[str], roles: list[str]
) -> tuple[list[str], list[str]]:
    found_databases = await fetch(
        cluster.admin, "SELECT datname FROM pg_database WHERE datname = ANY($1)", databases
    )
    found_roles = await fetch(
        cluster.admin, "SELECT rolname FROM pg_roles WHERE rolname = ANY($1)", roles
    )
    return (
        sorted(row["datname"] for row in found_databases),
        sorted(row["rolname"] for row in found_roles),
    )


@pytest.mark.parametrize("in_memory", [False, True], ids=["disk", "memory"])
async def test_a_killed_runs_embedded_server_is_stopped_and_deleted(
    tmp_path: Path, in_memory: bool
) -> None:
    _, task_dir = write_task(tmp_path / "task", SHOP_SEED)
    report = await run_and_kill(
        "embedded",
        str(task_dir),
        f"victim_{secrets.token_hex(4)}",
        environment={IN_MEMORY_ENV: "1" if in_memory else "0"},
    )
    directory, postmaster = Path(report["data_directory"]), int(report["postmaster"])
    assert directory.parent == (memory_parent() if in_memory else workdir())
    assert process_alive(postmaster)  # a postmaster outlives the run that started it
    assert directory.is_dir()
    lines = await collect_embedded_leftovers()
    assert f"embedded postgres {directory} (dead run {report['run_id']}): removed" in lines
    assert any(f"stopped pid {postmaster}" in line for line in lines)
    assert not process_alive(postmaster)
    assert not directory.exists()
    assert await collect_embedded_leftovers() == []


async def test_a_killed_runs_databases_and_roles_are_dropped_from_a_shared_server(
    embedded_cluster: EmbeddedPostgresCluster, tmp_path: Path
) -> None:
    task, task_dir = write_task(tmp_path / "task", SHOP_SEED)
    role = f"victim_{secrets.token_hex(4)}"
    report = await run_and_kill("shared", str(task_dir), role, embedded_cluster.admin.dsn)
    databases, roles = report["databases"], report["roles"]
    everything = await fetch(embedded_cluster.admin, "SELECT datname FROM pg_database")
    template = [
        row["datname"]
        for row in everything
        if row["datname"].startswith(f"aj_{report['run_id']}_tpl_")
    ]
    assert len(template) == 1
    databases = sorted([*databases, *template])
    assert await names_present(embedded_cluster, databases, roles) == (databases, sorted(roles))
    async with ClusterPostgresProvider(embedded_cluster) as provider:
        mine = await provider.create(task, task_dir)  # a live run's sandbox stays
        lines = await collect_postgres_leftovers(embedded_cluster.admin)
        assert await names_present(embedded_cluster, databases, roles) == ([], [])
        for name in databases:
            assert f"postgres database {name} (dead run {report['run_id']}): dropped" in lines
        for name in roles:
            assert f"postgres role {name} (dead run {report['run_id']}): dropped" in lines
        async with mine.connect() as conn:
            assert await conn.fetchval("SELECT count(*) FROM customers") == 3
    assert await collect_postgres_leftovers(embedded_cluster.admin) == []


async def test_resources_marked_with_another_host_are_left_alone(
    embedded_cluster: EmbeddedPostgresCluster,
) -> None:
    dead = "zz" + secrets.token_hex(4)  # ten characters, and no run record: a dead run
    foreign, orphan = f"aj_{dead}_db_1", f"aj_{dead}_db_2"
    comment = admin.quote_literal(f"agentjudge run={dead} host=elsewhere.example")
    await fetch(embedded_cluster.admin, f"CREATE DATABASE {foreign}")
    await fetch(embedded_cluster.admin, f"CREATE DATABASE {orphan}")
    try:
        await fetch(embedded_cluster.admin, f"COMMENT ON DATABASE {foreign} IS {comment}")
        lines = await collect_postgres_leftovers(embedded_cluster.admin)
        assert f"postgres database {orphan} (dead run {dead}): dropped" in lines
        assert not any(foreign in line for line in lines)
        assert await names_present(embedded_cluster, [foreign, orphan], []) == ([foreign], [])
    finally:
        await fetch(embedded_cluster.admin, f"DROP DATABASE IF EXISTS {foreign}")
        await fetch(embedded_cluster.admin, f"DROP DATABASE IF EXISTS {orphan}")
