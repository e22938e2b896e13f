"""The OSWorld importer on files OSWorld's own code wrote: ``../shared/real-formats/osworld``.

Task JSONs from OSWorld's ``evaluation_examples`` and result folders as its ``run.py`` and
``lib_run_single.py`` write them, in both layouts (computer_13 objects with the model's
``response``; pyautogui code strings without one). Every expected value is read here from those
files, and set against what the import wrote, field by field. Skipped, saying why, when the
folder is not there (it is not part of the repository).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from dataset.actions import Computer13Action, PyAutoGuiAction
from dataset.importers.osworld import import_osworld
from dataset.models import ExternalState, Task, Trajectory
from dataset.store import load_dataset
from tests.shared_data import SHARED, needs_shared

REAL = SHARED / "real-formats" / "osworld"

pytestmark = needs_shared(REAL, "OSWorld's real files (test input only, not shipped)")

SUBDOMAIN = {
    "libreoffice_calc": "excel",
    "libreoffice_writer": "word",
    "libreoffice_impress": "ppt",
}


def _runs() -> list[Path]:
    return sorted(path.parent for path in (REAL / "results").rglob("traj.jsonl"))


def _lines(run: Path) -> list[dict[str, Any]]:
    text = (run / "traj.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    out = tmp_path_factory.mktemp("osworld") / "dataset"
    report = import_osworld([REAL / "results"], out, tasks_root=REAL / "evaluation_examples")
    return out, report


def _trajectory_for(run: Path, trajectories: dict[str, Trajectory]) -> Trajectory:
    relative = run.relative_to(REAL / "results").as_posix()
    (found,) = [
        t for t in trajectories.values() if t.provenance.details["relative_folder"] == relative
    ]
    return found


def test_every_run_and_task_imports_without_errors(imported: tuple[Path, Any]) -> None:
    out, report = imported
    assert [p for p in report.problems if p.severity == "error"] == []
    dataset = load_dataset(out, partial=True)
    assert dataset.errors == []
    assert len(dataset.trajectories) == len(_runs())
    task_files = sorted((REAL / "evaluation_examples/examples").glob("*/*.json"))
    assert sorted(dataset.tasks) == sorted(path.stem for path in task_files)


def test_tasks_field_by_field(imported: tuple[Path, Any]) -> None:
    out, report = imported
    tasks: dict[str, Task] = load_dataset(out, partial=True).tasks
    for path in sorted((REAL / "evaluation_examples/examples").glob("*/*.json")):
        source = json.loads(path.read_text("utf-8"))
        task = tasks[source["id"]]
        assert task.domain == "gui"
        assert task.subdomain == SUBDOMAIN[path.parent.name]
        assert task.instruction == source["instruction"].strip()
        assert task.metadata["osworld_example_id"] == source["id"]
        assert task.metadata["osworld_config"] == source["config"]
        assert task.metadata["osworld_evaluator"] == source["evaluator"]
        assert task.metadata["osworld_related_apps"] == source["related_apps"]
        downloads = [
            f
            for step in source["config"]
            if step["type"] == "download"
            for f in step["parameters"]["files"]
        ]
        # The downloads were not supplied: the task names each with the exact --file option.
        assert task.metadata["osworld_needed_files"] == [
            {"url": f["url"], "path": f["path"]} for f in downloads
        ]
        assert isinstance(task.initial_state, ExternalState)
        for item in downloads:
            assert f"--file '{item['url']}=LOCAL_PATH'" in task.initial_state.reference
        assert task.initial_state.reference.startswith("cannot replay: supply --file")
        # Every setup step of these tasks (download, open, sleep) is one a desktop carries out.
        assert "osworld_setup_not_replayed" not in task.metadata
    assert sorted(n.url for n in report.needed_files) == sorted(
        f["url"]
        for path in (REAL / "evaluation_examples/examples").glob("*/*.json")
        for step in json.loads(path.read_text("utf-8"))["config"]
        if step["type"] == "download"
        for f in step["parameters"]["files"]
    )


def test_runs_field_by_field(imported: tuple[Path, Any]) -> None:
    out, _ = imported
    dataset = load_dataset(out, partial=True)
    for run in _runs():
        trajectory = _trajectory_for(run, dataset.trajectories)
        space, observation, model, domain, example = run.relative_to(REAL / "results").parts
        lines = _lines(run)
        assert trajectory.task_id == example
        assert trajectory.model == model
        details = trajectory.provenance.details
        assert (details["action_space"], details["observation_type"], details["domain"]) == (
            space,
            observation,
            domain,
        )
        assert len(trajectory.steps) == len(lines)
        seen_responses: set[str] = set()
        for step, line in zip(trajectory.steps, lines, strict=True):
            action = line["action"]
            if space == "computer_13" and isinstance(action, dict):
                assert isinstance(step.action, Computer13Action)
                assert step.action.action_type == action["action_type"]
                assert step.action.parameters == action["parameters"]
            elif space == "computer_13":
                assert isinstance(step.action, Computer13Action)
                assert step.action.action_type == action
            else:
                assert isinstance(step.action, PyAutoGuiAction)
                assert step.action.code == action
            stamp = datetime.strptime(line["action_timestamp"], "%Y%m%d@%H%M%S")
            assert step.started_at == stamp
            response = line.get("response")
            if response is None:
                assert step.reasoning is None
            elif response in seen_responses:
                assert "same model answer" in str(step.reasoning)
            else:
                assert step.reasoning == response
                seen_responses.add(response)
            assert step.observation is not None
            assert step.observation.screenshot is not None
            copied = out / "trajectories" / step.observation.screenshot
            assert copied.read_bytes() == (run / line["screenshot_file"]).read_bytes()
        last = lines[-1]
        if last["action"] in ("DONE", "FAIL") or last.get("done"):
            assert trajectory.stop_reason == "completed"
        score = float((run / "result.txt").read_text("utf-8").strip())
        assert trajectory.label is not None
        assert trajectory.label.source == "verifier"
        assert trajectory.label.value == ("PASS" if score >= 1.0 else "FAIL")
        assert details["recorded_score"] == score


def test_importing_again_is_refused_then_merged(imported: tuple[Path, Any]) -> None:
    from dataset.importers.osworld.importer import ExistingDatasetError

    out, report = imported
    with pytest.raises(ExistingDatasetError):
        import_osworld([REAL / "results"], out, tasks_root=REAL / "evaluation_examples")
    again = import_osworld(
        [REAL / "results"], out, tasks_root=REAL / "evaluation_examples", merge=True
    )
    assert len(again.replaced) == len(report.trajectories) + len(report.tasks)
