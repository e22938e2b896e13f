"""Judges' desktops made ahead of need (``FrozenReplays.expect``), on real local desktops from
the GUI suite: the next run's desktop is replayed while the current judge works, handed over in
its replayed state, never more at once than the pool's size, and stopped when the grid ends,
fails or is cancelled."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal

import pytest

from dataset.store import load_dataset
from environments.backends import BackendChoice, ProviderSet
from replay.frozen import FrozenReplays, UpcomingRun
from sandboxes.base import Sandbox
from tests.sandboxes.desktop.helpers import desktop_folders

pytestmark = [pytest.mark.desktop, pytest.mark.slow]

GUI = Path(__file__).resolve().parents[2] / "datasets" / "gui"
RUNS = (
    "gui-writer-center-closing--careful",
    "gui-writer-center-closing--unsaved",
    "gui-impress-budget-last--careful",
)
"""Three recorded runs of five steps."""


async def test_the_next_judges_desktop_is_replayed_ahead_and_handed_over() -> None:
    dataset = load_dataset(GUI, partial=True)
    before = desktop_folders()
    async with ProviderSet(BackendChoice.for_backend("local")) as providers:
        async with FrozenReplays(dataset, providers, verify=False, ahead=1) as frozen:
            frozen.expect(UpcomingRun(f"run{n}", run, True) for n, run in enumerate(RUNS))
            assert (len(frozen.ahead), "run0" in frozen.ahead) == (1, True)  # one at a time
            async with frozen.lease(RUNS[0], writable=True, ticket="run0") as first:
                assert first is not None
                assert frozen.ahead.counts.ready + frozen.ahead.counts.waited == 1
                # The replayed desktop itself: every recorded action performed on it.
                steps = dataset.trajectories[RUNS[0]].steps
                assert len(first.performed) == len(steps)  # type: ignore[attr-defined]
                assert await first.client.is_up()  # type: ignore[attr-defined]
                # While this judge works, the next run's desktop is made: the pool's one place.
                assert _tickets(frozen) == ["run1"]
                async with frozen.lease(RUNS[1], writable=True, ticket="run1") as second:
                    assert second is not None
                    assert second is not first
                    assert frozen.ahead.counts.ready + frozen.ahead.counts.waited == 2
                    replayed = dataset.trajectories[RUNS[1]].steps
                    assert len(second.performed) == len(replayed)  # type: ignore[attr-defined]
                    assert _tickets(frozen) == ["run2"]
            assert frozen.ahead.peak == 1
        # The grid's end stopped the third run's desktop, made or being made, and every other.
        provider = await providers.get("desktop")
        assert provider._live == set()  # type: ignore[attr-defined]
        assert desktop_folders() == before


def _tickets(frozen: FrozenReplays) -> list[str]:
    return [ticket for ticket in ("run0", "run1", "run2") if ticket in frozen.ahead]


@pytest.mark.parametrize("outcome", ["fails", "cancelled"])
async def test_desktops_made_ahead_are_stopped_when_the_grid_fails_or_is_cancelled(
    outcome: Literal["fails", "cancelled"],
) -> None:
    dataset = load_dataset(GUI, partial=True)
    before = desktop_folders()
    async with ProviderSet(BackendChoice.for_backend("local")) as providers:
        leased: list[Sandbox | None] = []

        async def grid() -> None:
            async with FrozenReplays(dataset, providers, verify=False, ahead=2) as frozen:
                frozen.expect(UpcomingRun(f"run{n}", run, True) for n, run in enumerate(RUNS))
                async with frozen.lease(RUNS[0], writable=True, ticket="run0") as sandbox:
                    leased.append(sandbox)
                    if outcome == "fails":
                        raise RuntimeError("the judge failed")
                    await asyncio.sleep(3600)

        task = asyncio.create_task(grid())
        if outcome == "cancelled":
            while not leased:  # cancelled while the next runs' desktops replay
                assert not task.done()
                await asyncio.sleep(0.1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        else:
            with pytest.raises(RuntimeError, match="the judge failed"):
                await task
        assert leased
        assert leased[0] is not None
        provider = await providers.get("desktop")
        assert provider._live == set()  # type: ignore[attr-defined]
        assert desktop_folders() == before
