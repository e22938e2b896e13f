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
from dataset.importers.osworld.importer import ExistingDatasetError
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


def test_a_clashing_id_is_made_distinct_and_the_others_still_import(tmp_path: Path) -> None:
    results, tasks = _osworld_tree(tmp_path)
    twin = tmp_path / "other" / "pyautogui/screenshot/gpt-4o/libreoffice_writer" / WRITER_ID
    _write_run(twin, ["DONE"])
    out = tmp_path / "dataset"
    report = import_osworld([results, tmp_path / "other"], out, tasks_root=tasks)
    assert len(report.trajectories) == 3
    assert len(set(report.trajectories)) == 3
    ((wanted, given),) = report.renamed
    assert wanted == f"{WRITER_ID}__gpt-4o__pyautogui__screenshot"
    assert given.startswith(wanted + "__")
    assert any(
        "already taken" in str(problem) and str(twin) in str(problem) for problem in report.problems
    )
    assert len(load_dataset(out, partial=True).trajectories) == 3


def test_an_existing_dataset_is_refused_unless_merging(tmp_path: Path) -> None:
    results, tasks = _osworld_tree(tmp_path)
    out = tmp_path / "dataset"
    first = import_osworld([results], out, tasks_root=tasks)
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    with pytest.raises(ExistingDatasetError, match="--merge"):
        import_osworld([results], out, tasks_root=tasks)
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before

    merged = import_osworld([results / "pyautogui"], out, tasks_root=tasks, merge=True)
    writer_run = next(tid for tid in first.trajectories if tid.startswith(WRITER_ID))
    assert sorted(merged.replaced) == [
        f"tasks/{WRITER_ID}/task.json",
        f"trajectories/{writer_run}.json",
    ]
    assert len(load_dataset(out, partial=True).trajectories) == 2

    runner = CliRunner()
    refused = runner.invoke(
        app, ["datasets", "import-osworld", str(results), str(out), "--tasks-root", str(tasks)]
    )
    assert refused.exit_code == 1
    assert "already holds a dataset" in refused.output
    assert "--merge" in refused.output
    accepted = runner.invoke(
        app,
        [
            "datasets",
            "import-osworld",
            str(results),
            str(out),
            "--tasks-root",
            str(tasks),
            "--merge",
        ],
    )
    assert accepted.exit_code == 0, accepted.output
    assert "--merge replaced 4 file(s)" in accepted.output


def test_windows_variants_get_their_own_ids(tmp_path: Path) -> None:
    results, tasks = _osworld_tree(tmp_path)
    windows_task = _task_json(
        WRITER_ID, "libreoffice_writer", "C:\\Users\\User\\memo.docx", DOCX_URL
    )
    windows_task["instruction"] = "The Windows wording of the task."
    path = tasks / "examples_windows/libreoffice_writer" / f"{WRITER_ID}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(windows_task), "utf-8")
    _write_run(
        tmp_path / "results_windows/pyautogui/screenshot/gpt-4o/libreoffice_writer" / WRITER_ID,
        ["DONE"],
    )
    out = tmp_path / "dataset"
    report = import_osworld([results, tmp_path / "results_windows"], out, tasks_root=tasks)
    assert report.renamed == []
    dataset = load_dataset(out, partial=True)
    assert sorted(dataset.tasks) == sorted([WRITER_ID, CALC_ID, f"{WRITER_ID}__windows"])
    linux, windows = dataset.tasks[WRITER_ID], dataset.tasks[f"{WRITER_ID}__windows"]
    assert linux.instruction == "Edit Quarterly_Memo.docx as asked and save it."
    assert windows.instruction == "The Windows wording of the task."
    assert windows.metadata["osworld_platform"] == "windows"
    assert isinstance(windows.initial_state, ExternalState)
    assert windows.initial_state.reference.startswith("cannot replay")
    (run,) = [t for t in dataset.trajectories.values() if t.task_id == windows.id]
    assert run.id == f"{WRITER_ID}__windows__gpt-4o__pyautogui__screenshot"


def test_multi_apps_and_other_domains_are_reported_and_skipped(tmp_path: Path) -> None:
    results, tasks = _osworld_tree(tmp_path)
    multi = _task_json("m-1", "libreoffice_calc", "/home/user/a.xlsx", "https://e.org/a.xlsx")
    multi["related_apps"] = ["libreoffice_calc", "chrome"]
    (tasks / "examples/multi_apps").mkdir(parents=True)
    (tasks / "examples/multi_apps/m-1.json").write_text(json.dumps(multi), "utf-8")
    _write_run(results / "pyautogui/screenshot/gpt-4o/multi_apps/m-1", ["DONE"])
    out = tmp_path / "dataset"
    report = import_osworld([results], out, tasks_root=tasks)
    assert not any(tid.startswith("m-1") for tid in report.trajectories)
    assert any(
        "m-1" in str(p) and "multi_apps tasks use several applications" in str(p)
        for p in report.problems
    )
    assert len(report.trajectories) == 2


def test_setup_steps_are_kept_for_the_desktop_or_reported(tmp_path: Path) -> None:
    results, tasks = _osworld_tree(tmp_path)
    path = tasks / "examples/libreoffice_writer" / f"{WRITER_ID}.json"
    task = json.loads(path.read_text("utf-8"))
    task["config"] += [
        {"type": "sleep", "parameters": {"seconds": 2}},
        {"type": "execute", "parameters": {"command": ["python", "-c", "print(1)"]}},
        {"type": "launch", "parameters": {"command": "libreoffice --writer"}},
        {"type": "chrome_open_tabs", "parameters": {"urls_to_open": ["https://e.org"]}},
        {"type": "execute", "parameters": {}},
    ]
    path.write_text(json.dumps(task), "utf-8")
    out = tmp_path / "dataset"
    report = import_osworld([results], out, tasks_root=tasks)
    messages = [str(problem) for problem in report.problems]
    assert any(
        "config[6].parameters.command" in m and "needs a 'command'" in m for m in messages
    ), messages
    assert any(
        "config[5] (chrome_open_tabs), config[6] (execute without a command)" in m
        and "not carried out on replay" in m
        for m in messages
    ), messages
    written = load_dataset(out, partial=True).tasks[WRITER_ID]
    assert written.metadata["osworld_setup_not_replayed"] == [
        "config[5] (chrome_open_tabs)",
        "config[6] (execute without a command)",
    ]
    config = written.metadata["osworld_config"]
    assert isinstance(config, list)
    assert [step["type"] for step in config if isinstance(step, dict)] == [
        "download",
        "open",
        "sleep",
        "execute",
        "launch",
        "chrome_open_tabs",
        "execute",
    ]


def test_missing_downloads_say_cannot_replay_with_the_file_option(tmp_path: Path) -> None:
    results, tasks = _osworld_tree(tmp_path)
    out = tmp_path / "dataset"
    report = import_osworld([results / "pyautogui"], out, tasks_root=tasks)
    hint = f"--file '{DOCX_URL}=LOCAL_PATH'"
    assert any("cannot replay: supply " + hint in str(p) for p in report.problems)
    task = load_dataset(out, partial=True).tasks[WRITER_ID]
    assert isinstance(task.initial_state, ExternalState)
    assert task.initial_state.reference.startswith("cannot replay: supply " + hint)


@pytest.mark.parametrize(
    ("action", "severity", "message"),
    [
        (
            {"action_type": "CLICK", "parameters": {"x": 300}},
            "error",
            "parameters.y: CLICK has x without y",
        ),
        (
            {"action_type": "RIGHT_CLICK", "parameters": {"y": 300}},
            "error",
            "parameters.x: RIGHT_CLICK has y without x",
        ),
        (
            {"action_type": "CLICK", "parameters": {"x": "300", "y": 2}},
            "error",
            "parameters.x: must be a number",
        ),
        (
            {"action_type": "CLICK", "parameters": {"button": "back"}},
            "error",
            "parameters.button: must be left, right or middle",
        ),
        (
            {"action_type": "CLICK", "parameters": {"num_clicks": 7}},
            "error",
            "parameters.num_clicks: must be 1, 2 or 3",
        ),
        (
            {"action_type": "SCROLL", "parameters": {"dx": 0, "dy": "up"}},
            "error",
            "parameters.dy: must be a number",
        ),
        (
            {"action_type": "TYPING", "parameters": {"text": 5}},
            "error",
            "parameters.text: must be text",
        ),
        (
            {"action_type": "MOVE_TO", "parameters": {"x": 5000, "y": 10}},
            "warning",
            "parameters.x: 5000 is off OSWorld's 1920x1080 screen",
        ),
        (
            {"action_type": "DRAG_TO", "parameters": {"x": 10, "y": -4}},
            "warning",
            "parameters.y: -4 is off OSWorld's 1920x1080 screen",
        ),
    ],
)
def test_computer_13_arguments_are_checked(
    tmp_path: Path, action: dict[str, Any], severity: str, message: str
) -> None:
    _, tasks = _osworld_tree(tmp_path)
    results = tmp_path / "checked"
    run = results / "computer_13/a11y_tree/m/libreoffice_calc" / CALC_ID
    _write_run(run, [{"action_type": "PRESS", "parameters": {"key": "a"}}, action, "DONE"])
    report = import_osworld([results], tmp_path / "dataset", tasks_root=tasks)
    found = [p for p in report.problems if message in p.message]
    assert found, [str(p) for p in report.problems]
    assert found[0].severity == severity
    assert found[0].field == "action"
    assert found[0].file.endswith(f"{CALC_ID}/traj.jsonl")
    assert "line 2" in found[0].message
    (trajectory,) = load_dataset(tmp_path / "dataset", partial=True).trajectories.values()
    # An action OSWorld could not have run is left out; one off the screen ran and is kept.
    assert len(trajectory.steps) == (2 if severity == "error" else 3)


def test_downloads_are_taken_only_from_regular_files_inside_their_folder(tmp_path: Path) -> None:
    results, tasks = _osworld_tree(tmp_path)
    secret = tmp_path / "secret.docx"
    secret.write_bytes(b"host document")
    files = tmp_path / "downloads"
    files.mkdir()
    os.symlink(secret, files / "Quarterly_Memo.docx")
    os.mkfifo(files / "sales.xlsx")
    out = tmp_path / "dataset"
    report = import_osworld([results], out, tasks_root=tasks, files_dir=files)
    assert sorted(n.path.rsplit("/", 1)[1] for n in report.needed_files) == [
        "Quarterly_Memo.docx",
        "sales.xlsx",
    ]
    assert not any(p.read_bytes() == b"host document" for p in out.rglob("*.docx"))


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
