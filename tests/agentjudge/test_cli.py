"""The ``agentjudge`` command line: help everywhere, validate and list."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentjudge.cli import app
from dataset.store import Manifest, write_manifest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "datasets"
BROKEN = FIXTURES / "broken"
runner = CliRunner(env={"COLUMNS": "200"})  # wide enough that help text is not wrapped

COMMANDS = [
    [],
    ["datasets"],
    ["datasets", "list"],
    ["datasets", "validate"],
    ["datasets", "import-mcpmark"],
    ["datasets", "schema"],
    ["replay"],
    ["judge"],
    ["report"],
    ["settings"],
    ["view"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "root")
def test_every_command_has_help(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output
    assert "Show this message and exit" in result.output


def test_validate_on_a_broken_dataset_lists_every_problem_and_fails() -> None:
    result = runner.invoke(app, ["datasets", "validate", str(BROKEN)])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(lines) == 19
    for expected in (
        "error: tasks/bad-json/task.json: invalid JSON at line 5 column 1",
        "error: trajectories/dangling.json: task_id: task 'no-such-task' does not exist",
        "error: trajectories/wrong-types.json: steps[0].index: Input should be a valid integer",
        "error: tasks/missing-files/task.json: verifier.path: names",
    ):
        assert any(line.startswith(expected) for line in lines), expected
    assert "19 error(s), 1 warning(s)" in result.output


def test_validate_json_report_is_machine_readable() -> None:
    result = runner.invoke(app, ["datasets", "validate", "--json", str(BROKEN)])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["valid"] is False
    assert report["trajectories"] == 1
    assert report["counts"] == [
        {"domain": "ds", "subdomain": "filesystem", "PASS": 1, "FAIL": 0, "unlabelled": 0}
    ]
    assert sum(1 for p in report["problems"] if p["severity"] == "error") == 19


def test_validate_on_a_valid_dataset_prints_counts_and_succeeds(tmp_path: Path) -> None:
    valid = tmp_path / "valid"
    shutil.copytree(BROKEN, valid)
    for name in (
        "bad-json",
        "escape",
        "id-mismatch",
        "missing-files",
        "no-task-file",
        "wrong-types",
    ):
        shutil.rmtree(valid / "tasks" / name)
    for path in (valid / "trajectories").iterdir():
        if path.is_file() and path.name != "good-traj.json":
            path.unlink()
    result = runner.invoke(app, ["datasets", "validate", str(valid)])
    assert result.exit_code == 0, result.output
    assert "1 valid task(s), 1 valid trajectory(ies)" in result.output
    row = next(line for line in result.output.splitlines() if "filesystem" in line)
    assert [cell.strip() for cell in row.strip("│ ").split("│")] == [
        "ds",
        "filesystem",
        "1",
        "0",
        "0",
        "1",
    ]
    assert "valid (0 warning(s))" in result.output


def test_list_shows_each_dataset_with_its_status(tmp_path: Path) -> None:
    shutil.copytree(BROKEN, tmp_path / "one" / "broken")
    write_manifest(tmp_path / "two", Manifest(name="empty-one"))
    result = runner.invoke(app, ["datasets", "list", str(tmp_path)])
    assert result.exit_code == 0, result.output
    broken_row = next(line for line in result.output.splitlines() if "broken" in line)
    assert "19 error(s)" in broken_row
    assert "empty-one" in result.output


def test_list_searches_the_datasets_variable_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_manifest(tmp_path / "extra" / "mine", Manifest(name="from-the-variable"))
    monkeypatch.setenv("AGENTJUDGE_DATASETS", str(tmp_path / "extra"))
    result = runner.invoke(app, ["datasets", "list"])
    assert result.exit_code == 0, result.output
    assert "from-the-variable" in result.output


EXAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"


@pytest.mark.parametrize(
    ("record", "files"),
    [
        ("manifest", ["dataset.json"]),
        (
            "task",
            sorted(p.relative_to(EXAMPLE).as_posix() for p in EXAMPLE.glob("tasks/*/task.json")),
        ),
        (
            "trajectory",
            sorted(p.relative_to(EXAMPLE).as_posix() for p in EXAMPLE.glob("trajectories/*.json")),
        ),
    ],
)
def test_exported_schema_accepts_the_example_files(record: str, files: list[str]) -> None:
    import jsonschema

    result = runner.invoke(app, ["datasets", "schema", record])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.output)
    assert files
    for name in files:
        jsonschema.validate(json.loads((EXAMPLE / name).read_text(encoding="utf-8")), schema)


def test_exported_schema_checks_types_but_not_cross_field_rules() -> None:
    import jsonschema

    schema = json.loads(runner.invoke(app, ["datasets", "schema", "trajectory"]).output)
    assert schema["properties"]["task_id"]["description"].startswith("The task attempted")
    wrong_types = json.loads((BROKEN / "trajectories" / "wrong-types.json").read_text())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(wrong_types, schema)
    # Required parameters per action type are checked by the loader only; the help says so.
    missing_parameters = json.loads(
        (BROKEN / "trajectories" / "bad-action-params.json").read_text()
    )
    jsonschema.validate(missing_parameters, schema)
    help_text = runner.invoke(app, ["datasets", "schema", "--help"]).output
    assert "datasets validate" in help_text


def test_schema_of_an_unknown_record_is_refused() -> None:
    result = runner.invoke(app, ["datasets", "schema", "verdicts"])
    assert result.exit_code == 2
    assert "choose one of manifest, task, trajectory" in result.output


MISSING_PATH_COMMANDS = {
    "judge": (["judge", "{missing}"], "no such dataset folder"),
    "judge with a model": (["judge", "{missing}", "--model", "mock/pass"], "no such dataset"),
    "replay": (["replay", "{missing}"], "no such dataset folder"),
    "datasets validate": (["datasets", "validate", "{missing}"], "no such dataset folder"),
    "datasets validate --json": (["datasets", "validate", "{missing}", "--json"], "no such"),
    "datasets list": (["datasets", "list", "{missing}"], "no such folder to search"),
    "import-mcpmark source": (
        ["datasets", "import-mcpmark", "{missing}", "{tmp}/dst"],
        "no such MCPMark results folder",
    ),
    "import-mcpmark --tasks-root": (
        ["datasets", "import-mcpmark", "{tmp}", "{tmp}/dst", "--tasks-root", "{missing}"],
        "no such MCPMark tasks folder",
    ),
    "import-mcpmark --environments-root": (
        ["datasets", "import-mcpmark", "{tmp}", "{tmp}/dst", "--environments-root", "{missing}"],
        "no such initial states folder",
    ),
    "report": (["report", "{missing}"], "no such results folder"),
}


@pytest.mark.parametrize("name", list(MISSING_PATH_COMMANDS))
def test_a_missing_path_is_exit_code_2_naming_it(name: str, tmp_path: Path) -> None:
    arguments, expected = MISSING_PATH_COMMANDS[name]
    missing = tmp_path / "does-not-exist"
    filled = [part.format(missing=missing, tmp=tmp_path) for part in arguments]
    result = runner.invoke(app, filled, env={"JUDGE_MODEL": ""})
    assert result.exit_code == 2, result.output
    assert f"{missing}: {expected}" in result.output
    assert sorted(path.name for path in tmp_path.iterdir()) == []  # nothing was made


def test_a_file_given_as_a_dataset_is_exit_code_2(tmp_path: Path) -> None:
    file = tmp_path / "dataset.json"
    file.write_text("{}")
    for command in (
        ["judge", str(file)],
        ["replay", str(file)],
        ["datasets", "validate", str(file)],
    ):
        result = runner.invoke(app, command)
        assert result.exit_code == 2, result.output
        assert f"{file}: is not a dataset folder (it is a file, not a folder)" in result.output


MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"


def _correction(trajectory_id: str, label: str, item_id: str | None = None) -> str:
    return json.dumps(
        {
            "trajectory_id": trajectory_id,
            "item_id": item_id,
            "label": label,
            "recorded_at": "2026-01-01T00:00:00Z",
        }
    )


def test_validate_counts_labels_as_corrected_and_names_bad_corrections(tmp_path: Path) -> None:
    corrections = tmp_path / "label_corrections.jsonl"
    corrections.write_text(_correction("fs-meeting-notes-index--sonnet-pass", "FAIL") + "\n")
    plain = runner.invoke(app, ["datasets", "validate", "--json", str(MINI)])
    corrected = runner.invoke(
        app, ["datasets", "validate", "--json", str(MINI), "--label-corrections", str(corrections)]
    )
    assert plain.exit_code == corrected.exit_code == 0, corrected.output

    def filesystem(output: str) -> dict[str, int]:
        counts = json.loads(output)["counts"]
        return next(row for row in counts if row["subdomain"] == "filesystem")

    before, after = filesystem(plain.output), filesystem(corrected.output)
    assert (after["PASS"], after["FAIL"]) == (before["PASS"] - 1, before["FAIL"] + 1)

    corrections.write_text(
        _correction("no-such-trajectory", "PASS") + "\n" + '{"label": "PASS"}\n', encoding="utf-8"
    )
    result = runner.invoke(
        app, ["datasets", "validate", str(MINI), "--label-corrections", str(corrections)]
    )
    assert result.exit_code == 1, result.output
    assert f"error: {corrections}: trajectory_id: 'no-such-trajectory' is not a trajectory" in (
        result.output
    )
    assert f"error: {corrections}: trajectory_id: line 2: Field required" in result.output
    missing = runner.invoke(
        app, ["datasets", "validate", str(MINI), "--label-corrections", str(tmp_path / "none")]
    )
    assert missing.exit_code == 2
    assert "no such label-correction file" in missing.output


def test_view_refuses_a_folder_that_is_neither_results_nor_dataset(tmp_path: Path) -> None:
    result = runner.invoke(app, ["view", str(tmp_path)])
    assert result.exit_code == 2
    assert f"error: {tmp_path}: neither a results folder" in result.output


def test_report_and_judge_refuse_a_missing_correction_file_before_any_work(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    (results / "baselines.jsonl").write_text("", encoding="utf-8")
    missing = tmp_path / "none.jsonl"
    report = runner.invoke(app, ["report", str(results), "--label-corrections", str(missing)])
    assert report.exit_code == 2
    assert f"error: {missing}: no such label-correction file" in report.output
    assert not (results / "report.html").exists()
    judge = runner.invoke(
        app,
        [
            "judge",
            str(MINI),
            "--output",
            str(tmp_path / "out"),
            "--label-corrections",
            str(missing),
        ],
    )
    assert judge.exit_code == 2, judge.output
    assert f"{missing}: no such label-correction file" in judge.output
    assert not (tmp_path / "out").exists()
