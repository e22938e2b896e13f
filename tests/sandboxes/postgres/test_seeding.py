"""Building task templates from seeds on every cluster backend: both seed runners, psql-only
syntax, empty states, broken and missing seeds, one template per task."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dataset.models import DirectoryTreeState, Task
from sandboxes.base import SandboxError
from sandboxes.postgres.provider import ClusterPostgresProvider
from sandboxes.postgres.sandbox import PostgresCluster
from sandboxes.runs import current_run
from tests.sandboxes.postgres.helpers import SHOP_SEED, count, fetch, run_owned, write_task

Shop = tuple[Task, Path]


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
