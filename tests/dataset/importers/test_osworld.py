"""The OSWorld importer on run folders written here from OSWorld's documented file formats.

Each test writes what OSWorld leaves behind — ``traj.jsonl`` lines (step_num, action_timestamp,
action, response, reward, done, info, screenshot_file), ``step_<n>_<stamp>.png`` files,
``result.txt`` — and task JSON files (id, instruction, config setup steps, evaluator), in
OSWorld's results tree or AJ-Bench's ``<app>/<task>/{true,false}/`` layout. Expected values are
the ones written into those files.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentjudge.cli import app
from dataset.actions import Computer13Action, PyAutoGuiAction
from dataset.importers.osworld import import_osworld, read_label_file
from dataset.importers.osworld.importer import DuplicateIdError
from dataset.importers.osworld.labels import LabelFileError
from dataset.importers.osworld.steps import parse_action_timestamp
from dataset.models import DocumentState, ExternalState
from dataset.store import load_dataset

WRITER_ID = "0b17a146-2934-46c7-8727-73ff6b6483e8"
CALC_ID = "1de60575-bb6e-4c3d-9e6a-2fa699f9f197"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32

DOCX_URL = "https://example.org/osworld/Quarterly_Memo.docx"


def _task_json(example_id: str, domain: str, document: str, url: str) -> dict[str, Any]:
    return {
        "id": example_id,
        "snapshot": domain,
        "instruction": f"Edit {Path(document).name} as asked and save it.",
        "source": "authors",
        "config": [
            {"type": "download", "parameters": {"files": [{"url": url, "path": document}]}},
            {"type": "open", "parameters": {"path": document}},
        ],
        "trajectory": "trajectories/",
        "related_apps": [domain],
        "evaluator": {
            "postconfig": [{"type": "activate_window", "parameters": {"window_name": "x"}}],
            "func": "compare_docx_files",
            "result": {"type": "vm_file", "path": document, "dest": Path(document).name},
            "expected": {"type": "cloud_file", "path": url + ".gold", "dest": "gold"},
        },
    }


def _write_run(
    folder: Path,
    actions: list[object],
    *,
    score: str | None = "1.0",
    responses: list[str] | None = None,
    error: str | None = None,
    done_last: bool = True,
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for number, action in enumerate(actions, start=1):
        stamp = f"20240615@1030{number:02d}"
        shot = f"step_{number}_{stamp}.png"
        (folder / shot).write_bytes(PNG + bytes([number]))
        lines.append(
            json.dumps(
                {
                    "step_num": number,
                    "action_timestamp": stamp,
                    "action": action,
                    "response": responses[number - 1] if responses else f"thinking {number}",
                    "reward": 0,
                    "done": done_last and number == len(actions),
                    "info": {},
                    "screenshot_file": shot,
                }
            )
        )
    if error is not None:
        lines.append(json.dumps({"Error": error}))
    (folder / "traj.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if score is not None:
        (folder / "result.txt").write_text(score + "\n", encoding="utf-8")
    return folder


def _osworld_tree(root: Path) -> tuple[Path, Path]:
    """A results tree with a pyautogui Writer run and a computer_13 Calc run, and their tasks."""
    results = root / "results"
    tasks = root / "evaluation_examples"
    writer_doc = "/home/user/Desktop/Quarterly_Memo.docx"
    calc_doc = "/home/user/sales.xlsx"
    for example_id, domain, document, url in (
        (WRITER_ID, "libreoffice_writer", writer_doc, DOCX_URL),
        (CALC_ID, "libreoffice_calc", calc_doc, "https://example.org/osworld/sales.xlsx"),
    ):
        path = tasks / "examples" / domain / f"{example_id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_task_json(example_id, domain, document, url)), "utf-8")
    _write_run(
        results / "pyautogui/screenshot/gpt-4o/libreoffice_writer" / WRITER_ID,
        [
            "import pyautogui\npyautogui.doubleClick(1101, 231)",
            "import pyautogui\npyautogui.typewrite('Q4')",
            "DONE",
        ],
        responses=["select then type", "select then type", "finished"],
    )
    _write_run(
        results / "computer_13/a11y_tree/claude-3-7/libreoffice_calc" / CALC_ID,
        [
            {"action_type": "CLICK", "parameters": {"x": 200, "y": 300, "button": "left"}},
            {"action_type": "TYPING", "parameters": {"text": "=SUM(B2:B9)\n"}},
            {"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "s"]}},
        ],
        score="0.0",
        done_last=False,
    )
    return results, tasks


def test_osworld_tree_imports_both_action_spaces(tmp_path: Path) -> None:
    results, tasks = _osworld_tree(tmp_path)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    (downloads / "Quarterly_Memo.docx").write_bytes(b"PK\x03\x04 memo")
    out = tmp_path / "dataset"

    report = import_osworld([results], out, tasks_root=tasks, files_dir=downloads, max_steps=3)

    assert sorted(report.tasks) == sorted([WRITER_ID, CALC_ID])
    dataset = load_dataset(out)
    writer = dataset.tasks[WRITER_ID]
    assert (writer.domain, writer.subdomain) == ("gui", "word")
    assert writer.instruction == "Edit Quarterly_Memo.docx as asked and save it."
    assert writer.initial_state == DocumentState(
        path="files/Quarterly_Memo.docx",
        application="writer",
        open_at="/home/user/Desktop/Quarterly_Memo.docx",
    )
    bundled = out / "tasks" / WRITER_ID / "files" / "Quarterly_Memo.docx"
    assert bundled.read_bytes() == b"PK\x03\x04 memo"
    evaluator = writer.metadata["osworld_evaluator"]
    assert isinstance(evaluator, dict)
    assert evaluator["func"] == "compare_docx_files"

    (writer_run,) = [t for t in dataset.trajectories.values() if t.task_id == WRITER_ID]
    assert writer_run.id == f"{WRITER_ID}__gpt-4o__pyautogui__screenshot"
    assert writer_run.model == "gpt-4o"
    assert [step.action for step in writer_run.steps] == [
        PyAutoGuiAction(code="import pyautogui\npyautogui.doubleClick(1101, 231)"),
        PyAutoGuiAction(code="import pyautogui\npyautogui.typewrite('Q4')"),
        PyAutoGuiAction(code="DONE"),
    ]
    assert writer_run.steps[0].reasoning == "select then type"
    assert "same model answer as step 1" in (writer_run.steps[1].reasoning or "")
    assert writer_run.steps[2].reasoning == "finished"
    assert writer_run.steps[1].started_at == datetime(2024, 6, 15, 10, 30, 2)
    shot = writer_run.steps[1].observation
    assert shot is not None
    assert shot.screenshot is not None
    assert (out / "trajectories" / shot.screenshot).read_bytes() == PNG + bytes([2])
    assert writer_run.label is not None
    assert (writer_run.label.value, writer_run.label.source) == ("PASS", "verifier")
    assert writer_run.stop_reason == "completed"

    calc = dataset.tasks[CALC_ID]
    assert calc.subdomain == "excel"
    assert isinstance(calc.initial_state, ExternalState)
    assert "https://example.org/osworld/sales.xlsx" in calc.initial_state.reference
    (calc_run,) = [t for t in dataset.trajectories.values() if t.task_id == CALC_ID]
    assert calc_run.steps[1].action == Computer13Action(
        action_type="TYPING", parameters={"text": "=SUM(B2:B9)\n"}
    )
    assert calc_run.label is not None
    assert calc_run.label.value == "FAIL"
    assert calc_run.stop_reason == "turn_limit"  # 3 steps, no DONE, cap 3
    assert [(n.task_id, n.url, n.path) for n in report.needed_files] == [
        (CALC_ID, "https://example.org/osworld/sales.xlsx", "/home/user/sales.xlsx")
    ]
    assert any("--file" in p.message and "sales.xlsx" in p.message for p in report.problems), (
        report.problems
    )


def test_file_option_supplies_a_download_by_url(tmp_path: Path) -> None:
    results, tasks = _osworld_tree(tmp_path)
    local = tmp_path / "elsewhere.xlsx"
    local.write_bytes(b"PK\x03\x04 sheet")
    out = tmp_path / "dataset"
    report = import_osworld(
        [results / "computer_13"],
        out,
        tasks_root=tasks,
        files={"https://example.org/osworld/sales.xlsx": local},
    )
    assert report.needed_files == []
    task = load_dataset(out).tasks[CALC_ID]
    assert task.initial_state == DocumentState(
        path="files/sales.xlsx", application="calc", open_at="/home/user/sales.xlsx"
    )


def _ajbench_tree(root: Path) -> Path:
    gui = root / "GUI"
    task_id = "ppt-title-task"
    task = _task_json(
        task_id, "libreoffice_impress", "/home/user/deck.pptx", "https://x.org/deck.pptx"
    )
    runs: list[tuple[str, list[object]]] = [
        ("true", [{"action_type": "CLICK", "parameters": {"x": 5, "y": 6}}, "DONE"]),
        ("false", [{"action_type": "PRESS", "parameters": {"key": "enter"}}]),
    ]
    for verdict, actions in runs:
        folder = _write_run(gui / "PPT" / task_id / verdict, actions, score=None)
        (folder / f"{task_id}.json").write_text(json.dumps(task), "utf-8")
        (folder / "deck.pptx").write_bytes(b"PK deck")
    return gui


def test_ajbench_layout_takes_human_labels_from_folders(tmp_path: Path) -> None:
    gui = _ajbench_tree(tmp_path)
    out = tmp_path / "dataset"
    report = import_osworld([gui], out)
    dataset = load_dataset(out)
    assert report.by_label_source == {"human": 2}
    labels = {t.id: t.label.value for t in dataset.trajectories.values() if t.label}
    assert sorted(labels.values()) == ["FAIL", "PASS"]
    for trajectory_id in labels:
        assert "true" not in trajectory_id
        assert "false" not in trajectory_id
    task = dataset.tasks["ppt-title-task"]
    assert task.subdomain == "ppt"
    # The document sat in the run folder: it is bundled and opened with Impress.
    assert isinstance(task.initial_state, DocumentState)
    assert task.initial_state.application == "impress"
    passing = next(t for t in dataset.trajectories.values() if t.label and t.label.value == "PASS")
    assert [s.action for s in passing.steps] == [
        Computer13Action(action_type="CLICK", parameters={"x": 5, "y": 6}),
        Computer13Action(action_type="DONE"),
    ]


def test_label_file_wins_over_the_recorded_score(tmp_path: Path) -> None:
    results, tasks = _osworld_tree(tmp_path)
    labels_file = tmp_path / "labels.csv"
    labels_file.write_text(f"run,label\n{WRITER_ID},false\n", "utf-8")
    out = tmp_path / "dataset"
    report = import_osworld([results], out, tasks_root=tasks, labels=read_label_file(labels_file))
    dataset = load_dataset(out, partial=True)
    writer_run = next(t for t in dataset.trajectories.values() if t.task_id == WRITER_ID)
    assert writer_run.label is not None
    assert (writer_run.label.value, writer_run.label.source) == ("FAIL", "human")
    calc_run = next(t for t in dataset.trajectories.values() if t.task_id == CALC_ID)
    assert calc_run.label is not None
    assert calc_run.label.source == "verifier"
    assert report.unused_labels == []


def test_label_files_in_each_format_and_their_errors(tmp_path: Path) -> None:
    as_json = tmp_path / "l.json"
    as_json.write_text(json.dumps({"a": "PASS", "b": 0}), "utf-8")
    assert read_label_file(as_json) == {"a": "PASS", "b": "FAIL"}
    as_lines = tmp_path / "l.jsonl"
    as_lines.write_text('{"trajectory": "t1", "label": true}\n{"run": "x/y", "label": "no"}\n')
    assert read_label_file(as_lines) == {"t1": "PASS", "x/y": "FAIL"}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"a": "maybe"}), "utf-8")
    with pytest.raises(LabelFileError, match=r"bad\.json: 'a': label 'maybe'"):
        read_label_file(bad)
    no_key = tmp_path / "nokey.csv"
    no_key.write_text("name,label\nq,1\n", "utf-8")
    with pytest.raises(LabelFileError, match=r"nokey\.csv: row 1: no run named"):
        read_label_file(no_key)


def test_bad_input_is_named_and_the_other_runs_still_import(tmp_path: Path) -> None:
    results, tasks = _osworld_tree(tmp_path)
    writer_traj = results / "pyautogui/screenshot/gpt-4o/libreoffice_writer" / WRITER_ID
    lines = (writer_traj / "traj.jsonl").read_text("utf-8").splitlines()
    lines[1] = "{not json"
    (writer_traj / "traj.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    calc = results / "computer_13/a11y_tree/claude-3-7/libreoffice_calc" / CALC_ID
    with (calc / "traj.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"step_num": 4, "action": {"action_type": "TYPING"}}) + "\n")
    (calc / "result.txt").write_text("passed\n", "utf-8")
    _write_run(results / "pyautogui/screenshot/gpt-4o/chrome/abc-chrome", ["DONE"])
    (tasks / "examples/chrome").mkdir(parents=True)
    (tasks / "examples/chrome/abc-chrome.json").write_text(
        json.dumps({"id": "abc-chrome", "instruction": "open a tab", "config": []}), "utf-8"
    )
    _write_run(results / "pyautogui/screenshot/gpt-4o/libreoffice_writer/no-task-here", ["DONE"])

    out = tmp_path / "dataset"
    report = import_osworld([results], out, tasks_root=tasks)
    messages = [str(problem) for problem in report.problems]

    def has(*parts: str) -> bool:
        return any(all(part in message for part in parts) for message in messages)

    assert has(f"{WRITER_ID}/traj.jsonl", "line 2: invalid JSON"), messages
    assert has(f"{CALC_ID}/traj.jsonl", "line 4", "TYPING needs parameter(s) text"), messages
    assert has(CALC_ID, "result.txt does not hold a number"), messages
    assert has("abc-chrome", "'chrome' is not a LibreOffice domain"), messages
    assert has("no-task-here", "no task JSON for example 'no-task-here'"), messages
    dataset = load_dataset(out, partial=True)
    assert dataset.errors == []
    assert sorted(t.task_id for t in dataset.trajectories.values()) == [WRITER_ID, CALC_ID]
    writer_run = next(t for t in dataset.trajectories.values() if t.task_id == WRITER_ID)
    assert len(writer_run.steps) == 2  # the broken line is left out, the others kept
    calc_run = next(t for t in dataset.trajectories.values() if t.task_id == CALC_ID)
    assert calc_run.label is None


def test_a_crashed_run_ends_with_an_error(tmp_path: Path) -> None:
    _, tasks = _osworld_tree(tmp_path)
    results = tmp_path / "crash"
    _write_run(
        results / "pyautogui/screenshot/m/libreoffice_writer" / WRITER_ID,
        ["import pyautogui\npyautogui.click(1, 2)"],
        error="Time limit exceeded in libreoffice_writer/" + WRITER_ID,
        done_last=False,
    )
    out = tmp_path / "dataset"
    import_osworld([results], out, tasks_root=tasks)
    (run,) = load_dataset(out, partial=True).trajectories.values()
    assert run.stop_reason == "error"
    assert "Time limit exceeded" in str(run.provenance.details["run_error"])


def test_screenshot_links_leaving_the_run_folder_are_not_copied(tmp_path: Path) -> None:
    results, tasks = _osworld_tree(tmp_path)
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"host file")
    run = results / "pyautogui/screenshot/gpt-4o/libreoffice_writer" / WRITER_ID
    first = next(run.glob("step_1_*.png"))
    first.unlink()
    os.symlink(secret, first)
    out = tmp_path / "dataset"
    import_osworld([run.parent.parent], out, tasks_root=tasks)
    (trajectory,) = load_dataset(out, partial=True).trajectories.values()
    assert trajectory.steps[0].observation is None
    copied = list((out / "trajectories").rglob("*.png"))
    assert all(path.read_bytes() != b"host file" for path in copied)


def test_duplicate_ids_stop_before_writing(tmp_path: Path) -> None:
    results, tasks = _osworld_tree(tmp_path)
    twin = tmp_path / "other" / "pyautogui/screenshot/gpt-4o/libreoffice_writer" / WRITER_ID
    _write_run(twin, ["DONE"])
    out = tmp_path / "dataset"
    with pytest.raises(DuplicateIdError, match=WRITER_ID):
        import_osworld([results, tmp_path / "other"], out, tasks_root=tasks)
    assert not out.exists()


def test_action_timestamps() -> None:
    assert parse_action_timestamp("20240615@103002") == datetime(2024, 6, 15, 10, 30, 2)
    assert parse_action_timestamp("20240615@103002123456") == datetime(
        2024, 6, 15, 10, 30, 2, 123456
    )
    assert parse_action_timestamp("2024-06-15") is None
    assert parse_action_timestamp(20240615) is None


def test_command_line_lists_needed_files_and_validates(tmp_path: Path) -> None:
    results, tasks = _osworld_tree(tmp_path)
    out = tmp_path / "dataset"
    runner = CliRunner()
    outcome = runner.invoke(
        app,
        ["datasets", "import-osworld", str(results), str(out), "--tasks-root", str(tasks)],
    )
    assert outcome.exit_code == 0, outcome.output
    assert "imported 2 trajectory(ies) of 2 task(s)" in outcome.output
    assert "2 downloaded file(s) were not supplied" in outcome.output
    assert DOCX_URL in outcome.output
    assert "--file" in outcome.output

    local = tmp_path / "memo.docx"
    local.write_bytes(b"PK memo")
    again = runner.invoke(
        app,
        [
            "datasets",
            "import-osworld",
            str(results / "pyautogui"),
            str(tmp_path / "d2"),
            "--tasks-root",
            str(tasks),
            "--file",
            f"{DOCX_URL}={local}",
        ],
    )
    assert again.exit_code == 0, again.output
    assert "not supplied" not in again.output

    missing = runner.invoke(
        app, ["datasets", "import-osworld", str(results), str(out), "--file", f"{DOCX_URL}=/nope"]
    )
    assert missing.exit_code == 2
    assert "/nope is not a file" in missing.output
    bad_labels = tmp_path / "labels.json"
    bad_labels.write_text("[1, 2", "utf-8")
    refused = runner.invoke(
        app,
        ["datasets", "import-osworld", str(results), str(out), "--labels", str(bad_labels)],
    )
    assert refused.exit_code == 2
    assert "labels.json: the file: invalid JSON" in refused.output
