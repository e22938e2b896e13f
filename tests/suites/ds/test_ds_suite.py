"""The bundled DS suite (``datasets/ds``): valid, faithful on replay, labelled by its verifiers,
balanced, hard to read from its surface, and identical to what its builder writes."""

from __future__ import annotations

import filecmp
import os
import typing
from collections import Counter
from pathlib import Path

import pytest

from dataset.claims import claims_success
from dataset.store import Dataset, load_dataset
from replay.runner import replay_dataset
from suites.ds.build import readme_text, write_task_folder
from suites.ds.spec import FailureKind
from suites.ds.statistics import suite_statistics
from suites.ds.tasks import all_tasks

SUITE = Path(__file__).resolve().parents[3] / "datasets" / "ds"


@pytest.fixture(scope="module")
def suite() -> Dataset:
    return load_dataset(SUITE)


def test_the_suite_validates_and_has_the_promised_size(suite: Dataset) -> None:
    assert suite.errors == []
    tasks = all_tasks()
    assert {task.task.id for task in tasks} == set(suite.tasks)
    filesystem = [task for task in tasks if task.task.subdomain == "filesystem"]
    postgres = [task for task in tasks if task.task.subdomain == "postgres"]
    assert len(filesystem) >= 16
    assert len({task.kind for task in filesystem}) >= 5
    assert len(postgres) >= 12
    assert len({task.kind for task in postgres}) >= 4
    for task_id in suite.tasks:
        runs = [t for t in suite.trajectories.values() if t.task_id == task_id]
        labels = Counter(t.label.value for t in runs if t.label is not None)
        assert len(runs) >= 4, task_id
        assert labels["PASS"] >= 2, task_id
        assert labels["FAIL"] >= 2, task_id


def test_initial_trees_stay_small(suite: Dataset) -> None:
    for task_id, task in suite.tasks.items():
        if task.subdomain != "filesystem":
            continue
        files = [
            path for path in (suite.task_dir(task_id) / "initial").rglob("*") if path.is_file()
        ]
        assert len(files) <= 300, task_id
        assert sum(path.stat().st_size for path in files) <= 5 * 2**20, task_id
        # git keeps no empty directory: a clone must hold the state the runs started from
        directories = [p for p in (suite.task_dir(task_id) / "initial").rglob("*") if p.is_dir()]
        assert all(any(directory.iterdir()) for directory in directories), task_id


def test_every_label_comes_from_the_verifier(suite: Dataset) -> None:
    for trajectory in suite.trajectories.values():
        assert trajectory.label is not None, trajectory.id
        assert trajectory.label.source == "verifier", trajectory.id
        assert trajectory.label.verifier_output, trajectory.id
        assert trajectory.metadata["intended"] == trajectory.label.value, trajectory.id


def test_failure_kinds_and_styles_are_all_there(suite: Dataset) -> None:
    failures = {t.metadata.get("failure_kind") for t in suite.trajectories.values() if t.label} - {
        None
    }
    assert failures >= set(typing.get_args(FailureKind))
    passing = [t for t in suite.trajectories.values() if t.label and t.label.value == "PASS"]
    failing = [t for t in suite.trajectories.values() if t.label and t.label.value == "FAIL"]
    # successes with mistakes corrected along the way, and failures that claim success
    assert any(any(step.is_error for step in t.steps) for t in passing)
    assert sum(claims_success(t.final_response) for t in failing) >= 5
    assert sum(not claims_success(t.final_response) for t in passing) >= 5
    assert len({t.agent for t in suite.trajectories.values()}) >= 4


def test_labels_are_balanced_and_the_surface_does_not_predict_them(suite: Dataset) -> None:
    statistics = suite_statistics(suite.trajectories.values(), suite.tasks)
    print(
        f"\nDS suite: {statistics.runs} runs, PASS {statistics.pass_rate:.1%} "
        f"{statistics.pass_rate_by_subdomain}; point-biserial r: step count "
        f"{statistics.steps_r:+.3f}, success claims {statistics.claims_r:+.3f}"
    )
    assert 0.45 <= statistics.pass_rate <= 0.55
    for subdomain, rate in statistics.pass_rate_by_subdomain.items():
        assert 0.45 <= rate <= 0.55, subdomain
    assert abs(statistics.steps_r) <= 0.2
    assert abs(statistics.claims_r) <= 0.5


def test_the_task_folders_are_what_the_builder_writes(suite: Dataset, tmp_path: Path) -> None:
    """Initial states (shared seeds too), verifiers and task records are regenerated and compared
    byte for byte (the runs are checked by replay below); the README table matches the labels."""
    for suite_task in all_tasks():
        write_task_folder(tmp_path, suite_task)
    problems: list[str] = []

    def walk(node: filecmp.dircmp[str], prefix: str) -> None:
        problems.extend(f"{prefix}{name}: differs" for name in node.diff_files)
        problems.extend(f"{prefix}{name}: only in the rebuild" for name in node.left_only)
        problems.extend(f"{prefix}{name}: only in the bundled copy" for name in node.right_only)
        for name, child in node.subdirs.items():
            walk(child, f"{prefix}{name}/")

    for folder in ("tasks", "assets"):  # the task folders and the seeds they share
        walk(filecmp.dircmp(tmp_path / folder, SUITE / folder), f"{folder}/")
        for left in (tmp_path / folder).rglob("*"):
            if left.is_file():
                right = SUITE / left.relative_to(tmp_path)
                if right.is_file() and left.read_bytes() != right.read_bytes():
                    problems.append(f"{left.relative_to(tmp_path)}: differs")
    assert sorted(set(problems)) == []
    readme = (SUITE / "README.md").read_text(encoding="utf-8")
    assert readme == readme_text(all_tasks(), suite.trajectories.values())


@pytest.mark.slow
async def test_the_whole_suite_replays_faithfully_and_agrees_with_its_verifiers(
    tmp_path: Path,
) -> None:
    summary = await replay_dataset(SUITE, tmp_path, jobs=min(4, os.cpu_count() or 1))
    total = summary.total
    assert summary.problems == []
    assert total.trajectories == total.faithful
    assert total.verifier_checked == total.trajectories
    assert total.verifier_agrees == total.trajectories
