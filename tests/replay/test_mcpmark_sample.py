"""Replaying the real MCPMark Chinook runs of each server implementation end to end.

Each run of ``../shared/mcpmark-sample`` is turned into a trajectory straight from its
``messages.json`` (the importer is not under test here) and replayed: every step must match its
recording, except reads of ranks stored under the recorded databases' ``en_US`` collation (the
embedded server sorts as ``C.UTF-8``), which replay must classify as differences of
presentation. Nothing may be reported as a divergence that could change the end state.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from environments.backends import ProviderSet
from replay.engine import replay_trajectory
from tests.mcp_servers.sql.mcpmark_sample import (
    COLLATION_DEPENDENT,
    as_trajectory,
    chinook_runs,
    chinook_task,
    needs_sample,
    recorded_calls,
    run_id,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), needs_sample]


@pytest.mark.parametrize("run", chinook_runs(), ids=run_id)
async def test_chinook_runs_replay_faithfully_or_differ_only_in_presentation(
    providers: ProviderSet, tmp_path_factory: pytest.TempPathFactory, run: Path
) -> None:
    task, folder = chinook_task(tmp_path_factory.getbasetemp() / "chinook")
    trajectory = as_trajectory(run, recorded_calls(run), task.id)
    result = await replay_trajectory(trajectory, task, folder, providers, verify=False)
    report = result.report
    assert len(report.steps) == len(trajectory.steps)
    differing = {step.index: step for step in report.steps if step.status != "match"}
    allowed = COLLATION_DEPENDENT.get((run.parent.parent.name, run.name), set())
    assert set(differing) <= allowed, {i: s.diff for i, s in differing.items() if i not in allowed}
    assert all(step.effect == "presentation" for step in differing.values())
    assert report.state_steps == []
    if differing:
        assert report.verdict == "diverged"
        assert report.divergence == "presentation"
    else:
        assert report.verdict == "faithful"
        assert report.divergence is None
