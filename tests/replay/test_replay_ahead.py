"""``agentjudge replay`` makes the next trajectories' fresh desktops ahead of need, on real local
desktops from the GUI suite: a replay finds its desktop ready, the reports are those of a replay
without the pool, and nothing made ahead is left when the replay ends or is cancelled."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from environments.backends import BackendChoice
from replay import runner
from replay.report import FidelityReport
from replay.runner import REPORT_FILE, read_reports, replay_dataset
from sandboxes.ahead import AheadPool
from tests.sandboxes.desktop.helpers import desktop_folders

pytestmark = [pytest.mark.desktop, pytest.mark.slow]

GUI = Path(__file__).resolve().parents[2] / "datasets" / "gui"
RUNS = (
    "gui-impress-budget-last--careful",
    "gui-writer-center-closing--careful",
    "gui-writer-center-closing--unsaved",
)
"""Three recorded runs of five steps, replayed in this (id) order."""
LOCAL = BackendChoice.for_backend("local")


def _outcome(report: FidelityReport) -> tuple[object, ...]:
    """What a replay found, without its timings."""
    verifier = report.verifier
    return (
        report.verdict,
        report.divergence,
        report.not_ready,
        report.infrastructure,
        [(step.index, step.tool, step.status, step.writes, step.effect) for step in report.steps],
        None if verifier is None else (verifier.replayed.passed, verifier.agrees),
    )


async def test_the_next_desktops_are_made_ahead_and_the_reports_do_not_change(
    tmp_path: Path,
) -> None:
    before = desktop_folders()
    ahead = await replay_dataset(
        GUI, tmp_path / "ahead", choice=LOCAL, jobs=1, ahead=1, only=set(RUNS)
    )
    # One at a time: the first desktop is waited for, each next one is made while the
    # previous trajectory replays, and every one made is taken.
    assert ahead.ahead.size == 1
    assert ahead.ahead.prepared == 3
    assert ahead.ahead.ready >= 1
    assert ahead.ahead.ready + ahead.ahead.waited == 3
    assert (ahead.ahead.failed, ahead.ahead.destroyed) == (0, 0)
    assert desktop_folders() == before
    plain = await replay_dataset(
        GUI, tmp_path / "plain", choice=LOCAL, jobs=1, ahead=0, only=set(RUNS)
    )
    assert (plain.ahead.size, plain.ahead.prepared) == (0, 0)
    made_ahead = read_reports(tmp_path / "ahead" / REPORT_FILE)
    made_plain = read_reports(tmp_path / "plain" / REPORT_FILE)
    assert sorted(made_ahead) == sorted(made_plain) == sorted(RUNS)
    for run in RUNS:
        assert _outcome(made_ahead[run]) == _outcome(made_plain[run]), run
        assert made_ahead[run].verdict == "faithful"
    assert desktop_folders() == before


async def test_desktops_made_ahead_are_stopped_when_the_replay_is_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pools: list[AheadPool] = []

    class Recorded(AheadPool):
        def __init__(self, size: int) -> None:
            super().__init__(size)
            pools.append(self)

    monkeypatch.setattr(runner, "AheadPool", Recorded)
    before = desktop_folders()
    reports: list[FidelityReport] = []
    replaying = asyncio.create_task(
        replay_dataset(
            GUI,
            tmp_path / "out",
            choice=LOCAL,
            jobs=1,
            ahead=2,
            only=set(RUNS),
            on_report=reports.append,
        )
    )
    # Cancelled while the second trajectory replays and the third one's desktop is ready.
    deadline = asyncio.get_running_loop().time() + 300
    while not (reports and pools and _ready(pools[-1], RUNS[2])):
        assert not replaying.done()
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)
    replaying.cancel()
    with pytest.raises(asyncio.CancelledError):
        await replaying
    pool = pools[-1]
    assert [report.trajectory_id for report in reports] == [RUNS[0]]
    assert pool.counts.prepared == 3
    assert pool.counts.destroyed == 1  # the third desktop, made and never taken
    assert len(pool) == 0
    assert desktop_folders() == before


def _ready(pool: AheadPool, ticket: str) -> bool:
    """Whether ``pool`` holds a made sandbox for ``ticket``."""
    task = pool._entries.get(ticket)
    return task is not None and task.done() and not task.cancelled() and task.result() is not None
