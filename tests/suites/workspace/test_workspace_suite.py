"""The bundled workspace suite: its shape and labels, each task's author tests against full,
partial and untouched solutions, a faithful replay, and a byte-identical rebuild."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from dataset.store import load_dataset
from environments.registry import kind_for_task
from replay.runner import replay_dataset
from sandboxes.confinement import run_python_script
from suites.workspace.build import build_suite
from suites.workspace.spec import CodingTask
from suites.workspace.tasks import all_tasks

WORKSPACE = Path(__file__).resolve().parents[3] / "datasets" / "workspace"


def test_the_bundled_suite_has_its_shape_and_labels() -> None:
    dataset = load_dataset(WORKSPACE)
    assert not dataset.errors
    assert len(dataset.tasks) >= 8
    assert len(dataset.trajectories) >= 32
    labels = Counter(t.label.value for t in dataset.trajectories.values() if t.label)
    assert labels["PASS"] == labels["FAIL"] == len(dataset.trajectories) // 2
    for task in dataset.tasks.values():
        kind = kind_for_task(task)
        assert kind is not None
        assert kind.name == "workspace"
        per_task = Counter(
            t.label.value
            for t in dataset.trajectories.values()
            if t.task_id == task.id and t.label is not None
        )
        assert per_task["PASS"] >= 2, task.id
        assert per_task["FAIL"] >= 2, task.id
    assert all(
        t.label is not None and t.label.source == "verifier" for t in dataset.trajectories.values()
    )
    failures = {t.metadata.get("failure_kind") for t in dataset.trajectories.values()}
    assert {"partial", "constraint", "false-claim", "undone", "stops-after-error"} <= failures
    tools = {
        step.action.name
        for t in dataset.trajectories.values()
        for step in t.steps
        if step.action.type == "tool_call"
    }
    assert tools == {"run_command", "read_file", "write_file", "edit_file"}


@pytest.mark.parametrize("task", all_tasks(), ids=lambda task: task.id)
async def test_the_author_tests_pass_the_full_fix_only(task: CodingTask, tmp_path: Path) -> None:
    verify = WORKSPACE / "tasks" / task.id / "verify.py"
    tmp_path.chmod(0o755)
    outcomes = {}
    for name, edits in (("original", []), ("partial", task.partial), ("fix", task.fix)):
        project = tmp_path / name
        task.write_project(project)
        for relative, text in task.after(edits).items():
            (project / relative).write_text(text, encoding="utf-8")
        run = await run_python_script(
            verify,
            [],
            {"WORKSPACE_DIR": str(project)},
            60,
            read_only=[project],
            task_dir=verify.parent,
        )
        outcomes[name] = run.exit_code
        if name != "fix":
            assert "FAIL " in run.text(4000), (name, run.text(4000))
    assert outcomes == {"original": 1, "partial": 1, "fix": 0}


@pytest.mark.slow
async def test_the_bundled_suite_replays_faithfully_with_verifiers_agreeing(
    tmp_path: Path,
) -> None:
    summary = await replay_dataset(WORKSPACE, tmp_path / "replay", jobs=2)
    total = summary.total
    assert total.trajectories == len(load_dataset(WORKSPACE).trajectories)
    assert total.faithful == total.trajectories
    assert total.verifier_checked == total.verifier_agrees == total.trajectories
    assert not summary.problems


@pytest.mark.slow
async def test_a_rebuild_is_byte_identical(tmp_path: Path) -> None:
    chosen = all_tasks()[:1]  # the first: its runs' synthetic times are those of a full build
    report = await build_suite(tmp_path / "suite", chosen, jobs=1)
    assert not report.problems
    built = tmp_path / "suite"
    for path in sorted((built / "tasks").rglob("*")):
        if path.is_file():
            bundled = WORKSPACE / path.relative_to(built)
            assert bundled.read_bytes() == path.read_bytes(), path
    for path in sorted((built / "trajectories").iterdir()):
        assert (WORKSPACE / "trajectories" / path.name).read_bytes() == path.read_bytes()
    shutil.rmtree(built)
