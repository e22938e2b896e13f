"""Building task templates from seeds on every cluster backend: psql's syntax (COPY data,
fences, dollar quotes), empty states, broken, hanging and missing seeds (a failure is said once
per task), one template per task, and what the seed role owns."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from dataset.models import DirectoryTreeState, Task
from sandboxes.base import SandboxError
from sandboxes.postgres.provider import ClusterPostgresProvider
from sandboxes.postgres.sandbox import PostgresCluster
from sandboxes.runs import current_run
from tests.sandboxes.postgres.helpers import SHOP_SEED, count, fetch, run_owned, write_task
from tests.shared_data import SHARED, needs_shared

Shop = tuple[Task, Path]


async def nothing_but_the_base(cluster: PostgresCluster) -> bool:
    """Whether this run left no database on the server but the providers' base templates, and
    no role."""
    databases, roles = await run_owned(cluster.admin)
    return not roles and all("_base_" in name for name in databases)


async def test_seeded_sandbox_holds_the_seed(cluster: PostgresCluster, shop: Shop) -> None:
    async with ClusterPostgresProvider(cluster) as provider:
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
        "SELECT pg_catalog.set_config('search_path', '', false);\n"
        "CREATE TABLE public.notes (id integer, body text);\n"
        "COPY public.notes (id, body) FROM stdin;\n1\tfirst \\\\ back\n2\t\\N\n\\.\n"
        "CREATE FUNCTION public.shout(t text) RETURNS text LANGUAGE plpgsql AS $body$\n"
        "BEGIN RETURN upper(t) || '!'; END;\n$body$;\n"
        "CREATE FUNCTION public.twice(x integer) RETURNS integer LANGUAGE sql\n"
        "BEGIN ATOMIC SELECT x * 2; END;\n"
        "COMMENT ON TABLE public.notes IS E'it\\'s -- not a comment; \\\\ nor a command';\n"
        "\\unrestrict 4kQz9\n"
    )
    sandbox = await provider.create(*write_task(tmp_path / "copy", seed, "copy-task"))
    async with sandbox.connect() as conn:
        rows = await conn.fetch("SELECT id, body FROM notes ORDER BY id")
        assert [tuple(row) for row in rows] == [(1, "first \\ back"), (2, None)]
        assert await conn.fetchval("SELECT shout('hi') || twice(21)") == "HI!42"
        assert await conn.fetchval("SELECT obj_description('notes'::regclass)") == (
            "it's -- not a comment; \\ nor a command"
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


async def test_a_broken_seed_fails_every_sandbox_of_its_task_with_one_message(
    cluster: PostgresCluster, tmp_path: Path
) -> None:
    seed = "CREATE TABLE fine (a integer);\n\nINSERT INTO fine\n  SELECT * FROM missing_table;\n"
    task, folder = write_task(tmp_path / "broken", seed, "broken-task")
    async with ClusterPostgresProvider(cluster) as provider:
        with pytest.raises(SandboxError) as caught:
            await provider.create(task, folder)
        message = str(caught.value)
        assert message.startswith("task broken-task: ")
        assert f"seed {folder / 'seed.sql'} failed at line 4" in message
        assert "missing_table" in message
        assert await nothing_but_the_base(cluster)
        # Every other sandbox of the task fails at once with the same message; the seed is not
        # run again (the table it would make again is not there to collide with).
        for _ in range(3):
            with pytest.raises(SandboxError) as again:
                await provider.create(task, folder)
            assert str(again.value) == message
        # A task whose seed changed is a different seed.
        (folder / "seed.sql").write_text("CREATE TABLE fine (a integer);\n")
        sandbox = await provider.create(task, folder)
        assert await count(sandbox, "fine") == 0


async def test_a_hanging_seed_times_out_once_for_all_its_sandboxes(
    cluster: PostgresCluster, tmp_path: Path
) -> None:
    seed = "CREATE TABLE t (a integer);\nSELECT pg_sleep(600);\n"
    task, folder = write_task(tmp_path / "slow", seed, "slow-task")
    async with ClusterPostgresProvider(cluster, seed_timeout=1.0) as provider:
        started = time.monotonic()
        outcomes = await asyncio.gather(
            *(provider.create(task, folder) for _ in range(4)), return_exceptions=True
        )
        elapsed = time.monotonic() - started
        messages = {str(outcome) for outcome in outcomes}
        assert all(isinstance(outcome, SandboxError) for outcome in outcomes)
        assert messages == {
            f"task slow-task: seed {folder / 'seed.sql'} did not finish within 1 s"
            " (at the statement of line 2)"
        }
        assert elapsed < 10, elapsed  # one timeout, not one per sandbox
        # The seed's session is gone with its template.
        sessions = await fetch(
            cluster.admin,
            "SELECT count(*) AS n FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600)%'"
            " AND pid <> pg_backend_pid()",
        )
        assert sessions[0]["n"] == 0
        assert await nothing_but_the_base(cluster)
    with pytest.raises(ValueError, match="seed_timeout"):
        ClusterPostgresProvider(cluster, seed_timeout=0)


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


CHINOOK = SHARED / "mcpmark-sample" / "environments"


@needs_shared(CHINOOK / "chinook.sql", "the MCPMark sample's Chinook dump")
async def test_the_mcpmark_chinook_dump_seeds_as_sql(
    embedded_cluster: PostgresCluster, tmp_path: Path
) -> None:
    """A real pg_dump (COPY blocks, ``set_config('search_path', '', false)``, constraints)."""
    dump = (CHINOOK / "chinook.sql").read_text(encoding="utf-8")
    task, folder = write_task(tmp_path / "chinook", dump, "chinook")
    async with ClusterPostgresProvider(embedded_cluster) as provider:
        sandbox = await provider.create(task, folder)
        async with sandbox.connect() as conn:
            counts = await conn.fetchrow(
                'SELECT (SELECT count(*) FROM "Track") AS tracks,'
                ' (SELECT count(*) FROM "Invoice") AS invoices,'
                " (SELECT count(*) FROM pg_constraint WHERE contype = 'f') AS foreign_keys"
            )
            assert counts is not None
            assert tuple(counts) == (3503, 412, 11)
            assert await conn.fetchval("SHOW search_path") == '"$user", public'
