"""The suite builder on one task: recording through the real server, verifier labels, and the
refusal of a run that does not do what it was written to do."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from dataset.models import SANDBOX_ROOT_PLACEHOLDER
from suites.ds.build import build_suite
from suites.ds.spec import AgentPolicy, AgentSession
from suites.ds.tasks.filesystem.invoice_totals import TASK


async def does_nothing(session: AgentSession) -> str:
    await session.call("list_directory", path=session.root)
    await session.call("read_text_file", path=f"{session.root}/missing.txt")
    return "All done."


async def test_one_task_builds_with_verifier_labels(tmp_path: Path) -> None:
    report = await build_suite(tmp_path / "suite", [TASK])
    assert report.problems == []
    assert len(report.runs) == 4
    for run in report.runs:
        trajectory = run.trajectory
        assert trajectory.label is not None
        assert trajectory.label.value == run.policy.intent
        assert trajectory.label.source == "verifier"
        assert "[ok]" in (trajectory.label.verifier_output or "")
    text = (tmp_path / "suite" / "trajectories" / "fs-invoice-totals--careful.json").read_text()
    written = json.loads(text)
    # Paths are recorded with the placeholder, never the recording sandbox's real root.
    assert written["steps"][1]["action"]["arguments"]["path"] == SANDBOX_ROOT_PLACEHOLDER
    assert "[DIR] invoices" in written["steps"][1]["observation"]["text"]
    assert "aj_" not in text
    assert (tmp_path / "suite" / "README.md").read_text().count("| `fs-invoice-totals` |") == 1


async def test_a_run_that_misses_its_intent_stops_the_build(tmp_path: Path) -> None:
    liar = AgentPolicy("liar", "hasty", does_nothing, "PASS", note="claims without working")
    task = dataclasses.replace(TASK, policies=[liar])
    report = await build_suite(tmp_path / "suite", [task])
    assert len(report.problems) == 1
    assert "written to PASS" in report.problems[0]
    assert "the verifier says FAIL" in report.problems[0]
    assert not (tmp_path / "suite" / "trajectories" / "fs-invoice-totals--liar.json").exists()
