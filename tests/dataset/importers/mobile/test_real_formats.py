"""The mobile importers on files the projects' own writers produced (``../shared/real-formats``).

Each test imports a format with the command the README documents, then checks field by field
what went in against what came out: goal, every action and its arguments, reasoning, UI tree,
screenshots, final answer, label and its source. The expected values are read from the source
files here, independently of the importer: AndroidWorld's pickles with the standard unpickler
and stand-in ``android_world`` modules (these files are trusted test data), the others as JSON
and CSV.
"""

from __future__ import annotations

import ast
import csv
import gzip
import io
import json
import pickle
import re
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from agentjudge.cli import app
from dataset.actions import AndroidAction, ToolCallAction
from dataset.frames import INITIAL_OBSERVATION_KEY
from dataset.models import Observation, Trajectory
from dataset.store import Dataset, load_dataset

RealFormat = Callable[[str], Path]


def import_command(*arguments: str) -> None:
    result = CliRunner().invoke(app, ["datasets", *arguments])
    assert result.exit_code == 0, result.output


def imported(source_format: str, source: Path, destination: Path) -> Dataset:
    """``source`` imported by the README's command, loaded without errors."""
    import_command("import-mobile", "--format", source_format, str(source), str(destination))
    dataset = load_dataset(destination)
    assert not dataset.errors
    return dataset


def run_from(dataset: Dataset, source_path: Path) -> Trajectory:
    """The one trajectory imported from ``source_path``."""
    (trajectory,) = [
        t for t in dataset.trajectories.values() if t.provenance.source_path == str(source_path)
    ]
    return trajectory


def frames(dataset: Dataset, trajectory: Trajectory) -> list[Observation | None]:
    """The screen before each action, then the one after the last (when recorded)."""
    initial = trajectory.metadata.get(INITIAL_OBSERVATION_KEY)
    first = Observation.model_validate(initial) if isinstance(initial, dict) else None
    return [first, *(step.observation for step in trajectory.steps)]


def pixels(dataset: Dataset, observation: Observation | None) -> np.ndarray:
    assert observation is not None
    assert observation.screenshot is not None
    return np.asarray(Image.open(dataset.trajectory_dir() / observation.screenshot).convert("RGB"))


def shot_bytes(dataset: Dataset, observation: Observation | None) -> bytes:
    assert observation is not None
    assert observation.screenshot is not None
    return (dataset.trajectory_dir() / observation.screenshot).read_bytes()


# --- AndroidWorld ---------------------------------------------------------------------------


class _Recorded:
    """A trusted stand-in for android_world's classes: BUILD fills its __dict__."""


@pytest.fixture
def android_world_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stand-in ``android_world`` modules so the standard unpickler can read the test files."""
    names = {
        "android_world.env.json_action": ["JSONAction"],
        "android_world.env.representation_utils": ["UIElement", "BoundingBox"],
    }
    for parent in ("android_world", "android_world.env"):
        monkeypatch.setitem(sys.modules, parent, types.ModuleType(parent))
    for module_name, classes in names.items():
        module = types.ModuleType(module_name)
        for name in classes:
            setattr(module, name, type(name, (_Recorded,), {"__module__": module_name}))
        monkeypatch.setitem(sys.modules, module_name, module)


def trusted_episodes(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rb") as stream:
        episodes: list[dict[str, Any]] = pickle.load(stream)
    return episodes


def _fields(value: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(value).items() if v is not None}


def _reason(step: dict[str, Any]) -> str:
    if step.get("action_reason"):
        return str(step["action_reason"])
    output = str(step["action_output"])
    return output.split("Reason:", 1)[1].split("Action:", 1)[0].strip()


def test_androidworld_pickles_field_by_field(
    real_format: RealFormat, android_world_modules: None, tmp_path: Path
) -> None:
    source = real_format("androidworld")
    dataset = imported("androidworld", source, tmp_path / "aw")
    files = sorted(source.rglob("*.pkl.gz"))
    assert len(dataset.trajectories) == sum(len(trusted_episodes(f)) for f in files)
    for path in files:
        (episode,) = trusted_episodes(path)
        key = path.relative_to(source).as_posix().removesuffix(".pkl.gz")
        (trajectory,) = [
            t for t in dataset.trajectories.values() if t.provenance.details["source_key"] == key
        ]
        task = dataset.tasks[trajectory.task_id]
        assert task.instruction == episode["goal"]
        assert (
            task.metadata["source_task"] == f"{episode['task_template']}_{episode['instance_id']}"
        )
        assert trajectory.agent == episode["agent_name"]
        assert trajectory.label is not None
        assert trajectory.label.value == ("PASS" if episode["is_successful"] > 0.5 else "FAIL")
        assert trajectory.label.source == "verifier"
        data = episode["episode_data"]
        count = len(data["step_number"])
        assert len(trajectory.steps) == count
        shown = frames(dataset, trajectory)
        answers = []
        for position in range(count):
            step = {k: v[position] for k, v in data.items()}
            action = trajectory.steps[position].action
            assert isinstance(action, AndroidAction)
            if "action_output_json" in step:
                expected = _fields(step["action_output_json"])
            else:
                expected = json.loads(str(step["action_output"]).split("Action:", 1)[1])
            assert action.model_dump(exclude_none=True, exclude={"type", "extra"}) == expected
            assert trajectory.steps[position].reasoning == _reason(step)
            screen = step["raw_screenshot" if "raw_screenshot" in step else "before_screenshot"]
            assert np.array_equal(pixels(dataset, shown[position]), screen)
            tree = shown[position].accessibility_tree  # type: ignore[union-attr]
            assert tree is not None
            if "before_ui_elements" in step:
                for index, element in enumerate(step["before_ui_elements"]):
                    line = tree.splitlines()[index]
                    assert line.startswith(f"UI element {index}: ")
                    fields = json.loads(line.split(": ", 1)[1])
                    if element.text:
                        assert fields["text"] == element.text
                    assert fields["bbox_pixels"] == vars(element.bbox_pixels)
            else:
                assert tree == step["before_element_list"]
            if expected["action_type"] == "answer":
                answers.append(expected["text"])
        assert trajectory.final_response == (answers[-1] if answers else None)


def _episode_file(path: Path, episodes: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(pickle.dumps(episodes)))


class _System:
    """Pickles as a call of ``os.system``: what a hostile checkpoint would hold."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Any, ...]:
        import os

        return (os.system, (self.command,))


def test_androidworld_bad_inputs_are_named_and_the_others_still_import(
    real_format: RealFormat, android_world_modules: None, tmp_path: Path
) -> None:
    source = real_format("androidworld")
    good = next(iter(sorted(source.rglob("*.pkl.gz"))))
    runs = tmp_path / "run"
    runs.mkdir()
    (runs / "Good_0.pkl.gz").write_bytes(good.read_bytes())
    (runs / "Truncated_0.pkl.gz").write_bytes(good.read_bytes()[:300])
    marker = tmp_path / "pwned"
    _episode_file(runs / "Hostile_0.pkl.gz", [{"goal": _System(f"touch {marker}")}])
    (episode,) = trusted_episodes(good)
    episode["episode_data"]["action_output_json"][0].action_type = "teleport"
    _episode_file(runs / "Unknown_0.pkl.gz", [episode])
    crashed = {
        "goal": "Crash please",
        "task_template": "Crashing",
        "instance_id": 0,
        "episode_data": float("nan"),
        "is_successful": float("nan"),
        "exception_info": "Traceback ...\nRuntimeError: the emulator went away",
        "agent_name": "m3a_gpt4v",
    }
    _episode_file(runs / "Crashing_0.pkl.gz", [crashed])

    result = CliRunner().invoke(
        app,
        ["datasets", "import-mobile", "--format", "androidworld", str(runs), str(tmp_path / "o")],
    )
    assert result.exit_code == 1, result.output
    assert not marker.exists()
    output = " ".join(result.output.split())
    assert "Hostile_0.pkl.gz: refused: the pickle names posix.system" in output or (
        "Hostile_0.pkl.gz: refused: the pickle names os.system" in output
    )
    assert re.search(r"Truncated_0\.pkl\.gz: refused: not a readable", output)
    assert "Unknown_0.pkl.gz: episode_data[0].action_output_json" in output
    assert "teleport" in output
    dataset = load_dataset(tmp_path / "o")
    stops = {t.provenance.details["source_key"]: t for t in dataset.trajectories.values()}
    assert sorted(str(key) for key in stops) == ["Crashing_0", "Good_0"]
    assert stops["Crashing_0"].stop_reason == "error"
    assert stops["Crashing_0"].steps == []
    assert stops["Crashing_0"].label is None
    assert "emulator went away" in str(stops["Crashing_0"].metadata["error"])


def test_androidworld_instances_with_other_goals_are_their_own_tasks(
    real_format: RealFormat, android_world_modules: None, tmp_path: Path
) -> None:
    source = real_format("androidworld")
    path = next(p for p in sorted(source.rglob("*.pkl.gz")) if "t3a" not in str(p))
    (episode,) = trusted_episodes(path)
    other = dict(episode, goal=episode["goal"] + " (second run, another goal)")
    _episode_file(tmp_path / "a" / path.name, [episode])
    _episode_file(tmp_path / "b" / path.name, [other])
    import_command(
        "import-mobile", "--format", "androidworld", str(tmp_path / "a"), str(tmp_path / "o")
    )
    import_command(
        "import-mobile", "--format", "androidworld", str(tmp_path / "b"), str(tmp_path / "o")
    )
    dataset = load_dataset(tmp_path / "o")
    goals = {dataset.tasks[t.task_id].instruction for t in dataset.trajectories.values()}
    assert goals == {episode["goal"], other["goal"]}
    assert len(dataset.tasks) == 2


# --- SPA-Bench --------------------------------------------------------------------------------


def _spa_runs(source: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    for log in sorted(source.rglob("log.json")):
        session = log.parent.parent.parent
        with (session / "results.csv").open(encoding="utf-8", newline="") as stream:
            rows = {row["task_identifier"]: row for row in csv.DictReader(stream)}
        yield log, rows[log.parent.parent.name]


def test_spa_bench_sessions_field_by_field(real_format: RealFormat, tmp_path: Path) -> None:
    source = real_format("spa-bench")
    dataset = imported("spa-bench", source, tmp_path / "spa")
    runs = list(_spa_runs(source))
    assert len(dataset.trajectories) == len(runs)
    for log, row in runs:
        agent, task_name = log.parent.name, log.parent.parent.name
        (trajectory,) = [
            t
            for t in dataset.trajectories.values()
            if t.agent == agent and dataset.tasks[t.task_id].metadata["source_task"] == task_name
        ]
        assert dataset.tasks[trajectory.task_id].instruction == row["task_description"]
        verdict = row[f"direct_with_action_{agent}_evaluation"]
        assert trajectory.label is not None
        assert trajectory.label.value == {"S": "PASS", "F": "FAIL"}[verdict]
        assert trajectory.label.source == "evaluator"
        records = [r for r in json.loads(log.read_text(encoding="utf-8")) if "action" in r]
        assert len(trajectory.steps) == len(records)
        shown = frames(dataset, trajectory)
        for position, record in enumerate(records):
            step = trajectory.steps[position]
            action = step.action
            assert isinstance(action, AndroidAction)
            kind, info = record["action"]
            assert action.action_type == kind  # M3A logs AndroidWorld's own type names
            if info["detail_type"] == "coordinates":
                assert [action.x, action.y] == [round(n) for n in info["detail"]]
            else:
                assert action.extra["detail"] == info["detail"]
            if kind == "open_app":
                assert action.app_name == info["detail"]
            if kind == "input_text":
                assert f'"{action.text}"' in info["detail"]
            reason = record["action_output"].split("Reason:", 1)[1].split("Action:", 1)[0]
            assert step.reasoning == reason.strip()
            screenshot = log.parent / f"{record['step'] - 1}.png"
            assert shot_bytes(dataset, shown[position]) == screenshot.read_bytes()


def test_spa_bench_bad_inputs_are_named(real_format: RealFormat, tmp_path: Path) -> None:
    source = real_format("spa-bench")
    session = next(source.glob("session-*"))
    (log,) = session.rglob("log.json")
    records = json.loads(log.read_text(encoding="utf-8"))
    copy = tmp_path / session.name
    good, truncated, missing, unknown = (copy / "t" / name for name in ("A", "B", "C", "D"))
    for folder in (good, truncated, missing, unknown):
        folder.mkdir(parents=True)
        for png in log.parent.glob("*.png"):
            (folder / png.name).write_bytes(png.read_bytes())
    (copy / "results.csv").write_text(
        "task_identifier,task_description\nt,Set an alarm\n", encoding="utf-8"
    )
    (good / "log.json").write_text(json.dumps(records), encoding="utf-8")
    (truncated / "log.json").write_text(json.dumps(records)[:200], encoding="utf-8")
    (missing / "log.json").write_text(json.dumps(records), encoding="utf-8")
    (missing / "2.png").unlink()
    (unknown / "log.json").write_text(
        json.dumps(
            [{**records[0], "action": ["teleport", {"detail_type": "string", "detail": ""}]}]
        ),
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        app, ["datasets", "import-mobile", "--format", "spa-bench", str(copy), str(tmp_path / "o")]
    )
    assert result.exit_code == 1
    output = " ".join(result.output.split())
    assert "t/B/log.json: invalid JSON at line" in output
    assert "t/C/log.json: [2].screenshot: screenshot 2.png is missing" in output
    assert "t/D/log.json: [0].action[0]: unknown action type 'teleport'" in output
    assert [t.agent for t in load_dataset(tmp_path / "o").trajectories.values()] == ["A"]


# --- A3 and AITK ------------------------------------------------------------------------------

_A3_TYPES = {
    "open": "open_app",
    "tap": "click",
    "long_press": "long_press",
    "swipe": "swipe",
    "type": "input_text",
    "enter": "keyboard_enter",
    "back": "navigate_back",
    "home": "navigate_home",
    "wait": "wait",
    "end": "status",
}


def _check_a3_steps(
    dataset: Dataset, trajectory: Trajectory, steps: list[dict[str, Any]], states: Path
) -> str | None:
    """Compares each recorded step with the imported one; returns the ``end`` answer."""
    assert len(trajectory.steps) == len(steps)
    shown = frames(dataset, trajectory)
    answer = None
    for position, step in enumerate(steps):
        recorded: dict[str, Any] = step.get("actions") or step["action"]
        action = trajectory.steps[position].action
        assert isinstance(action, AndroidAction)
        assert action.action_type == _A3_TYPES[recorded["action"]]
        if recorded["action"] in ("tap", "long_press"):
            assert (action.x, action.y) == (recorded["x"], recorded["y"])
        if recorded["action"] == "swipe":
            assert (action.x, action.y) == (recorded["x1"], recorded["y1"])
            assert (action.extra["end_x"], action.extra["end_y"]) == (
                recorded["x2"],
                recorded["y2"],
            )
        if recorded["action"] == "type":
            assert action.text == recorded["text"]
        if recorded["action"] == "open":
            assert action.app_name == recorded["app"]
        if recorded["action"] == "end" and recorded.get("answer"):
            answer = recorded["answer"]
        message = str(step.get("agent_messages") or step["agent_message"])
        thought = message.split("Thought:", 1)[1].split("\nAction:", 1)[0].strip()
        assert trajectory.steps[position].reasoning == thought
        observation = shown[position]
        screenshot = states / "screenshots" / step["screenshot"]
        assert shot_bytes(dataset, observation) == screenshot.read_bytes()
        xml = (states / "xmls" / step["xml"]).read_text(encoding="utf-8")
        assert observation is not None
        assert observation.accessibility_tree == xml
    return answer


def test_a3_histories_field_by_field(real_format: RealFormat, tmp_path: Path) -> None:
    source = real_format("a3")
    dataset = imported("a3", source, tmp_path / "a3")
    histories = sorted(source.rglob("*_history.json"))
    assert len(dataset.trajectories) == len(histories)
    for history in histories:
        run = history.parent.parent
        steps = json.loads(history.read_text(encoding="utf-8"))
        trajectory = run_from(dataset, history)
        assert dataset.tasks[trajectory.task_id].instruction == steps[0]["task"]
        assert trajectory.agent == run.parent.name
        answer = _check_a3_steps(dataset, trajectory, steps, run / "states")
        assert trajectory.final_response == answer
        outcome = json.loads((run / "results" / "func_eval_results.json").read_text())
        assert trajectory.label is not None
        assert trajectory.label.value == ("PASS" if outcome["eval_results"] else "FAIL")
        assert trajectory.label.source == "verifier"


def test_aitk_histories_field_by_field(real_format: RealFormat, tmp_path: Path) -> None:
    source = real_format("aitk")
    dataset = imported("aitk", source, tmp_path / "aitk")
    histories = sorted(source.rglob("history.json"))
    assert len(dataset.trajectories) == len(histories)
    for history in histories:
        record = json.loads(history.read_text(encoding="utf-8"))
        trajectory = run_from(dataset, history)
        assert dataset.tasks[trajectory.task_id].instruction == record["task"]
        assert trajectory.agent == record["exp_args"]["agent"]["name"]
        answer = _check_a3_steps(dataset, trajectory, record["steps"], history.parent / "states")
        assert trajectory.final_response == answer
        assert trajectory.label is None  # AITK records no outcome


def test_a3_and_aitk_bad_inputs_are_named(real_format: RealFormat, tmp_path: Path) -> None:
    import shutil

    shutil.copytree(real_format("aitk"), tmp_path / "src")
    base = next((tmp_path / "src").rglob("history.json")).parent
    for name in ("truncated", "missing", "unknown", "linked"):
        shutil.copytree(base, base.parent / name)
    history = json.loads((base / "history.json").read_text(encoding="utf-8"))
    (base.parent / "truncated" / "history.json").write_text(json.dumps(history)[:150])
    (base.parent / "missing" / "states" / "screenshots" / "step_2.png").unlink()
    history["steps"][1]["action"] = {"action": "teleport"}
    (base.parent / "unknown" / "history.json").write_text(json.dumps(history))
    outside = tmp_path / "secret.png"
    outside.write_bytes(b"\x89PNG not yours")
    link = base.parent / "linked" / "states" / "screenshots" / "step_0.png"
    link.unlink()
    link.symlink_to(outside)
    result = CliRunner().invoke(
        app,
        [
            "datasets",
            "import-mobile",
            "--format",
            "aitk",
            str(tmp_path / "src"),
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 1
    output = " ".join(result.output.split())
    assert "truncated/history.json: invalid JSON" in output
    assert (
        "missing/history.json: steps[2].screenshot: screenshot file 'step_2.png' is missing"
        in output
    )
    assert "unknown/history.json: steps[1].action.action: unknown action type 'teleport'" in output
    assert "linked/history.json: steps[0].screenshot: screenshot 'step_0.png' is" in output
    dataset = load_dataset(tmp_path / "o")
    assert len(dataset.trajectories) == 1
    for path in (tmp_path / "o").rglob("*.png"):
        assert path.read_bytes() != outside.read_bytes()


# --- AgentRewardBench ------------------------------------------------------------------------


def _call(text: str) -> tuple[str, list[Any]]:
    call = ast.parse(text, mode="eval").body
    assert isinstance(call, ast.Call)
    assert isinstance(call.func, ast.Name)
    return call.func.id, [ast.literal_eval(argument) for argument in call.args]


@pytest.mark.parametrize("start", ["", "trajectories", "trajectories/cleaned"])
def test_agentrewardbench_release_field_by_field(
    real_format: RealFormat, tmp_path: Path, start: str
) -> None:
    root = real_format("agentrewardbench")
    source = root / start if start else root
    dataset = imported("agentrewardbench", source, tmp_path / "o")
    files = sorted((root / "trajectories" / "cleaned").rglob("*.json"))
    assert len(dataset.trajectories) == len(files)
    with (root / "annotations.csv").open(encoding="utf-8", newline="") as stream:
        rows = list(csv.DictReader(stream))
    for path in files:
        record = json.loads(path.read_text(encoding="utf-8"))
        trajectory = run_from(dataset, path)
        assert dataset.tasks[trajectory.task_id].instruction == record["goal"].strip()
        assert trajectory.agent == record["agent"]
        assert trajectory.model == record["model"]
        acted = [step for step in record["steps"] if step["action"]]
        assert len(trajectory.steps) == len(acted)
        shown = frames(dataset, trajectory)
        answer = None
        for position, step in enumerate(record["steps"]):
            observation = shown[position]
            assert observation is not None
            assert observation.url == step["url"]
            assert observation.accessibility_tree == step["axtree"]
            assert shot_bytes(dataset, observation) == (root / step["screenshot_path"]).read_bytes()
            if not step["action"]:
                continue
            action = trajectory.steps[position].action
            assert isinstance(action, ToolCallAction)
            name, arguments = _call(step["action"])
            assert action.name == name
            assert list(action.arguments.values()) == arguments
            assert trajectory.steps[position].reasoning == step["reasoning"]
            if name == "send_msg_to_user":
                answer = arguments[0]
        assert trajectory.final_response == answer
        votes = {
            row["annotator_name"].strip(): row["trajectory_success"]
            for row in rows
            if (row["task_id"], row["model_name"], row["exp_name"])
            == (path.stem, record["agent"], record["experiment"])
        }
        passes = sum(v == "Successful" for v in votes.values())
        fails = sum(v == "Unsuccessful" for v in votes.values())
        if passes == fails:
            assert trajectory.label is None
        else:
            assert trajectory.label is not None
            assert trajectory.label.value == ("PASS" if passes > fails else "FAIL")
            assert trajectory.label.source == "vote"
            assert trajectory.label.votes == {
                name: "PASS" if vote == "Successful" else "FAIL"
                for name, vote in votes.items()
                if vote in ("Successful", "Unsuccessful")
            }


def test_agentrewardbench_split_and_unsure_votes(real_format: RealFormat, tmp_path: Path) -> None:
    import shutil

    shutil.copytree(real_format("agentrewardbench"), tmp_path / "release")
    annotations = tmp_path / "release" / "annotations.csv"
    with annotations.open(encoding="utf-8", newline="") as stream:
        reader = csv.DictReader(stream)
        header, rows = reader.fieldnames, list(reader)
    cleaned = next((tmp_path / "release" / "trajectories" / "cleaned").rglob("*.json"))
    record = json.loads(cleaned.read_text(encoding="utf-8"))
    mine = [
        r
        for r in rows
        if (r["model_name"], r["exp_name"]) == (record["agent"], record["experiment"])
    ]
    assert len(mine) >= 2
    mine[0]["trajectory_success"] = "Successful"
    mine[1]["trajectory_success"] = "Unsuccessful"
    for extra in mine[2:]:
        extra["trajectory_success"] = "Unsure"
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(header or []))
    writer.writeheader()
    writer.writerows(rows)
    annotations.write_text(buffer.getvalue(), encoding="utf-8")
    result = CliRunner().invoke(
        app,
        [
            "datasets",
            "import-mobile",
            "--format",
            "agentrewardbench",
            str(tmp_path / "release"),
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "are split" in " ".join(result.output.split())
    (trajectory,) = load_dataset(tmp_path / "o").trajectories.values()
    assert trajectory.label is None


def test_agentrewardbench_and_a3_bad_inputs_are_named(
    real_format: RealFormat, tmp_path: Path
) -> None:
    import shutil

    release = tmp_path / "release"
    shutil.copytree(real_format("agentrewardbench"), release)
    good = next((release / "trajectories" / "cleaned").rglob("*.json"))
    record = json.loads(good.read_text(encoding="utf-8"))
    (good.parent / "truncated.json").write_text(json.dumps(record)[:300], encoding="utf-8")
    record["steps"][1]["screenshot_path"] = "trajectories/screenshots/none.png"
    (good.parent / "missing.json").write_text(json.dumps(record), encoding="utf-8")
    result = CliRunner().invoke(
        app,
        [
            "datasets",
            "import-mobile",
            "--format",
            "agentrewardbench",
            str(release),
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 1
    output = " ".join(result.output.split())
    assert "truncated.json: invalid JSON at line" in output
    assert "missing.json: steps[1].screenshot_path: screenshot file" in output
    assert len(load_dataset(tmp_path / "o").trajectories) == 1

    save = tmp_path / "save_dir"
    shutil.copytree(real_format("a3"), save)
    history = next(save.rglob("*_history.json"))
    steps = json.loads(history.read_text(encoding="utf-8"))
    steps[0]["actions"] = {"action": "teleport"}
    history.write_text(json.dumps(steps), encoding="utf-8")
    result = CliRunner().invoke(
        app, ["datasets", "import-mobile", "--format", "a3", str(save), str(tmp_path / "a3")]
    )
    assert result.exit_code == 1
    output = " ".join(result.output.split())
    assert f"{history.name}: [0].actions.action: unknown action type 'teleport'" in output
    histories = list(save.rglob("*_history.json"))
    assert len(load_dataset(tmp_path / "a3").trajectories) == len(histories) - 1
