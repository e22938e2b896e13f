"""Replaying the real MCPMark Chinook runs of each server implementation end to end.

Each run of ``../shared/mcpmark-sample`` is turned into a trajectory straight from its
``messages.json`` (the importer is not under test here) and replayed from Chinook under the
collation its server's database had: every step must match its recording. Under another
collation the ranks a run stores differ; replay must then say where, and classify each such
read as a difference of presentation, never one that could change the end state.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from environments.backends import ProviderSet
from replay.engine import replay_trajectory
from tests.mcp_servers.sql.mcpmark_sample import (
    RECORDED_COLLATIONS,
    as_trajectory,
    chinook_runs,
    chinook_task,
    needs_sample,
    recorded_calls,
    run_id,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), needs_sample]


@pytest.mark.parametrize("run", chinook_runs(), ids=run_id)
async def test_chinook_runs_replay_faithfully_under_their_servers_collation(
    providers: ProviderSet, tmp_path_factory: pytest.TempPathFactory, run: Path
) -> None:
    server = run.parent.parent.name
    task, folder = chinook_task(
        tmp_path_factory.getbasetemp() / server, RECORDED_COLLATIONS[server]
    )
    trajectory = as_trajectory(run, recorded_calls(run), task.id)
    result = await replay_trajectory(trajectory, task, folder, providers, verify=False)
    report = result.report
    assert len(report.steps) == len(trajectory.steps)
    assert [step.index for step in report.steps if step.status != "match"] == []
    assert report.verdict == "faithful"


RANKING_RUN = ("crystaldba", "chinook__sales_and_music_charts")


async def test_under_the_wrong_collation_the_reads_of_stored_ranks_differ(
    providers: ProviderSet, tmp_path_factory: pytest.TempPathFactory
) -> None:
    run = next(r for r in chinook_runs() if (r.parent.parent.name, r.name) == RANKING_RUN)
    task, folder = chinook_task(tmp_path_factory.getbasetemp() / "byte-order", "C")
    trajectory = as_trajectory(run, recorded_calls(run), task.id)
    report = (await replay_trajectory(trajectory, task, folder, providers, verify=False)).report
    differing = [step for step in report.steps if step.status != "match"]
    assert differing, "ranks stored under C should read differently from en_US ones"
    assert all(step.effect == "presentation" for step in differing)
    assert "A Cor Do Sol" in (differing[0].diff or "")
    assert report.verdict == "diverged"
    assert report.divergence == "presentation"
