"""A folder of suites combined into one dataset: every task and trajectory kept with its domain,
files linked rather than copied, clashing ids refused; and ``evaluate`` on such a folder reports
each domain."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dataset.actions import ToolCallAction
from dataset.combine import combine_datasets, suite_folders
from dataset.models import EmptyState, Label, Step, Task, Trajectory
from dataset.problems import DatasetError
from dataset.store import Manifest, load_dataset, write_manifest, write_task, write_trajectory


def _suite(root: Path, name: str, domain: str, subdomain: str, label: str) -> Path:
    folder = root / name
    write_manifest(folder, Manifest(name=name))
    task = Task(
        id=f"{name}-task",
        domain=domain,
        subdomain=subdomain,
        instruction="Say hello.",
        initial_state=EmptyState(),
    )
    task_folder = write_task(folder, task)
    (task_folder / "notes.txt").write_text(f"{name} notes\n", encoding="utf-8")
    write_trajectory(
        folder,
        Trajectory(
            id=f"{name}-run",
            task_id=task.id,
            agent="scripted",
            steps=[Step(index=1, action=ToolCallAction(name="say", arguments={"text": "hello"}))],
            final_response="Done.",
            label=Label(value=label, source="verifier"),
        ),
    )
    return folder


def test_only_datasets_inside_a_folder_are_suites(tmp_path: Path) -> None:
    first = _suite(tmp_path, "alpha", "search", "deep", "PASS")
    second = _suite(tmp_path, "beta", "gui", "word", "FAIL")
    (tmp_path / "notes").mkdir()  # not a dataset
    assert suite_folders(tmp_path) == [first, second]
    assert suite_folders(first) == []  # a dataset is not a folder of suites
    assert suite_folders(tmp_path / "missing") == []


def test_combined_suites_load_as_one_dataset_with_their_domains(tmp_path: Path) -> None:
    sources = [
        _suite(tmp_path / "in", "alpha", "search", "deep", "PASS"),
        _suite(tmp_path / "in", "beta", "gui", "word", "FAIL"),
    ]
    combined = load_dataset(combine_datasets(sources, tmp_path / "out"))
    assert sorted(combined.tasks) == ["alpha-task", "beta-task"]
    assert {t.domain for t in combined.tasks.values()} == {"search", "gui"}
    assert sorted(combined.trajectories) == ["alpha-run", "beta-run"]
    notes = tmp_path / "out" / "tasks" / "beta-task" / "notes.txt"
    assert notes.read_text(encoding="utf-8") == "beta notes\n"
    # A hard link of the source file, not a copy and not a symbolic link.
    assert not notes.is_symlink()
    assert os.stat(notes).st_ino == os.stat(sources[1] / "tasks" / "beta-task" / "notes.txt").st_ino
    # Combining again replaces the folder.
    combine_datasets(sources[:1], tmp_path / "out")
    assert sorted(load_dataset(tmp_path / "out").tasks) == ["alpha-task"]


def test_two_suites_with_one_id_are_refused_with_both_named(tmp_path: Path) -> None:
    first = _suite(tmp_path / "a", "alpha", "search", "deep", "PASS")
    again = _suite(tmp_path / "b", "alpha", "search", "deep", "FAIL")
    with pytest.raises(DatasetError) as caught:
        combine_datasets([first, again], tmp_path / "out")
    message = str(caught.value)
    assert "tasks/alpha-task" in message
    assert "trajectories/alpha-run.json" in message
    assert str(first) in message
    assert str(again) in message
    assert not (tmp_path / "out").exists()


def test_evaluating_a_folder_of_suites_reports_every_domain(tmp_path: Path) -> None:
    from bench.evaluate import EvaluationOptions, evaluate

    suites = tmp_path / "datasets"
    _suite(suites, "alpha", "search", "deep", "PASS")
    _suite(suites, "beta", "gui", "word", "FAIL")
    result = evaluate(
        suites,
        EvaluationOptions(output=tmp_path / "judged", replay_output=tmp_path / "replayed"),
    )
    assert {"search", "gui", "overall"} <= set(result.report.groups)
    assert result.report.label_counts["search"] == {"PASS": 1, "FAIL": 0}
    assert result.report.label_counts["gui"] == {"PASS": 0, "FAIL": 1}
    assert (tmp_path / "judged" / "combined-dataset" / "dataset.json").is_file()
