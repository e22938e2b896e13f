"""Replay once, judge many: one replay per trajectory, shared views, private writable clones."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import replay.engine
import replay.frozen
from dataset.store import load_dataset
from environments.backends import ProviderSet
from replay.frozen import FrozenReplays
from sandboxes.filesystem.sandbox import FilesystemSandbox
from sandboxes.postgres.sandbox import PostgresSandbox
from tests.replay.builders import MINI

REPOSITORY = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.asyncio(loop_scope="module")

FS_PASS = "fs-meeting-notes-index--sonnet-pass"
PG_PASS = "pg-active-customers-view--sonnet-pass"


@pytest.fixture
def replay_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts the replays ``FrozenReplays`` starts (the real replay still runs)."""
    calls: list[str] = []
    real = replay.engine.replay_trajectory

    async def counting(trajectory: Any, *arguments: Any, **options: Any) -> Any:
        calls.append(trajectory.id)
        return await real(trajectory, *arguments, **options)

    monkeypatch.setattr(replay.frozen, "replay_trajectory", counting)
    return calls


async def test_many_concurrent_judges_share_one_replay(
    providers: ProviderSet, replay_calls: list[str]
) -> None:
    async with FrozenReplays(load_dataset(MINI), providers) as frozen:
        views = await asyncio.gather(
            *(frozen.environment(FS_PASS, writable=False) for _ in range(8))
        )
        assert replay_calls == [FS_PASS]
        assert all(view is views[0] for view in views)
        first = await frozen.get(FS_PASS)
        assert first.report.verdict == "faithful"
        assert first.report.verifier is not None
        assert first.report.verifier.agrees


async def test_a_judges_writes_reach_neither_the_frozen_state_nor_other_judges(
    providers: ProviderSet,
) -> None:
    async with FrozenReplays(load_dataset(MINI), providers) as frozen:
        one = await frozen.environment(FS_PASS, writable=True)
        two = await frozen.environment(FS_PASS, writable=True)
        view = await frozen.environment(FS_PASS, writable=False)
        assert isinstance(one, FilesystemSandbox)
        assert isinstance(two, FilesystemSandbox)
        assert isinstance(view, FilesystemSandbox)
        replayed = await view.tree.read_bytes("index.md")
        await one.tree.write_bytes("index.md", b"tampered by judge one")
        assert await two.tree.read_bytes("index.md") == replayed
        assert await view.tree.read_bytes("index.md") == replayed
        later = await frozen.environment(FS_PASS, writable=True)
        assert isinstance(later, FilesystemSandbox)
        assert await later.tree.read_bytes("index.md") == replayed

        db_one = await frozen.environment(PG_PASS, writable=True)
        db_view = await frozen.environment(PG_PASS, writable=False)
        assert isinstance(db_one, PostgresSandbox)
        assert isinstance(db_view, PostgresSandbox)
        async with db_one.connect() as connection:
            await connection.execute("DROP VIEW active_customers")
        async with db_view.connect() as connection:
            count = await connection.fetchval("SELECT count(*) FROM active_customers")
        assert count == 7
        await frozen.release_clone(FS_PASS, one)
        await frozen.release_clone(FS_PASS, one)  # a second release is harmless


async def test_domains_without_replay_get_no_environment(providers: ProviderSet) -> None:
    async with FrozenReplays(load_dataset(MINI), providers) as frozen:
        android = "android-markor-shopping-note--pass"
        assert await frozen.environment(android, writable=False) is None
        assert (await frozen.get(android)).report.verdict == ("unsupported")


async def test_role_managing_trajectories_of_one_task_are_frozen_one_at_a_time(
    providers: ProviderSet, replay_calls: list[str]
) -> None:
    # The DS suite's support-role task: every trajectory creates the same cluster-global role.
    # A frozen state keeps the roles it created, so frozen side by side they would collide.
    dataset = load_dataset(REPOSITORY / "datasets" / "ds")
    ids = sorted(t for t in dataset.trajectories if t.startswith("pg-retail-support-role--"))
    assert len(ids) >= 3
    async with FrozenReplays(dataset, providers) as frozen:
        assert {frozen.exclusive_group(t) for t in ids} == {"pg-retail-support-role"}

        async def judge(trajectory_id: str) -> str:
            async with frozen.lease(trajectory_id, writable=False) as view:
                assert isinstance(view, PostgresSandbox)
                return (await frozen.get(trajectory_id)).report.verdict

        verdicts = await asyncio.gather(*(judge(t) for t in [*ids, *ids]))
        assert verdicts == ["faithful"] * len(verdicts)
        # Coming back to a trajectory whose state was destroyed replays it again.
        assert sorted(set(replay_calls)) == ids
        assert len(replay_calls) >= len(ids)
