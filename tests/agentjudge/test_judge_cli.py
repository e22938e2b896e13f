"""``agentjudge judge``: the grid from the command line, with the scripted model (a dry run)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentjudge.cli import app
from bench.grid_runner import VERDICTS_FILE
from dataset.store import load_dataset
from judge_agent.providers.registry import no_model_hint

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"

runner = CliRunner(env={"COLUMNS": "200", "JUDGE_MODEL": ""})


def test_judge_without_a_model_runs_the_baselines_and_says_how_to_give_one(
    tmp_path: Path, mini_replay: Path
) -> None:
    result = runner.invoke(
        app,
        ["judge", str(MINI), "--output", str(tmp_path), "--replay-output", str(mini_replay)],
    )
    assert result.exit_code == 0, result.output
    assert "No judge model is configured" in result.output
    assert "JUDGE_MODEL=provider/model" in result.output
    assert no_model_hint() in result.output  # the registry's hint, printed as it is
    assert "baseline: self-report" in result.output
    assert (tmp_path / "report.html").is_file()
    assert not (tmp_path / VERDICTS_FILE).exists()
    baselines = (tmp_path / "baselines.jsonl").read_text().splitlines()
    labelled = [
        json.loads(path.read_text())
        for path in (MINI / "trajectories").glob("*.json")
        if json.loads(path.read_text()).get("label")
    ]
    # Seven baselines (cited-sources: the search trajectories have claims) on every labelled
    # trajectory, claim by claim where it has claims (the verifier one marks unverifiable ones
    # INVALID rather than dropping them).
    assert len(baselines) == 7 * sum(len(t.get("items", [])) or 1 for t in labelled)


def test_a_model_without_its_key_is_a_clean_error(tmp_path: Path) -> None:
    keyless = CliRunner(env={"COLUMNS": "200", "JUDGE_MODEL": "", "ANTHROPIC_API_KEY": ""})
    result = keyless.invoke(
        app, ["judge", str(MINI), "--model", "anthropic/claude-x", "--output", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "ANTHROPIC_API_KEY" in result.output
    assert not (tmp_path / "baselines.jsonl").exists()  # stopped before doing any work


def test_a_bad_grid_file_is_named(tmp_path: Path) -> None:
    grid = tmp_path / "grid.yaml"
    grid.write_text("turns: [0]\n")
    result = runner.invoke(app, ["judge", str(MINI), "--model", "mock/pass", "--grid", str(grid)])
    assert result.exit_code == 2
    assert f"{grid}: turns.0" in result.output


def test_report_needs_a_results_folder(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["report", str(tmp_path / "nothing")])
    assert missing.exit_code == 2
    assert "no such results folder" in missing.output
    empty = runner.invoke(app, ["report", str(tmp_path)])
    assert empty.exit_code == 2
    assert "run `agentjudge judge` first" in empty.output


def test_judge_refuses_bad_modes_and_budgets() -> None:
    bad_mode = runner.invoke(app, ["judge", str(MINI), "--model", "mock/pass", "--mode", "vibes"])
    assert bad_mode.exit_code == 2
    assert "unknown mode 'vibes'" in bad_mode.output
    bad_turns = runner.invoke(app, ["judge", str(MINI), "--model", "mock/pass", "--turns", "0"])
    assert bad_turns.exit_code == 2
    assert "at least 1" in bad_turns.output
    bad_trees = runner.invoke(app, ["judge", str(MINI), "--model", "mock/pass", "--trees", "few"])
    assert bad_trees.exit_code == 2
    assert "--trees" in bad_trees.output


def test_a_scripted_dry_run_writes_verdicts_and_says_it_is_scripted(
    tmp_path: Path, mini_replay: Path
) -> None:
    arguments = ["judge", str(MINI), "--model", "mock/fail", "--mode", "llm,agent"]
    arguments += ["--turns", "1,2", "--output", str(tmp_path)]
    arguments += ["--replay-output", str(mini_replay)]
    result = runner.invoke(app, arguments)
    assert result.exit_code == 0, result.output
    assert "not judge results" in result.output
    lines = (tmp_path / VERDICTS_FILE).read_text().splitlines()
    # One subject per trajectory, or per claim for the search trajectories (items=each).
    trajectories = sum(len(t.items) or 1 for t in load_dataset(MINI).trajectories.values())
    assert len(lines) == trajectories * (1 + 2)  # llm once, agent per budget
    records = [json.loads(line) for line in lines]
    assert {record["verdict"]["verdict"] for record in records} == {"FAIL"}
    assert {record["turns"] for record in records if record["mode"] == "agent"} == {1, 2}
    assert all(record["scripted"] for record in records)
    report = json.loads((tmp_path / "report.json").read_text())
    labels = [config["label"] for config in report["configs"]]
    assert labels[:3] == ["agent T=1 mock/fail", "agent T=2 mock/fail", "llm mock/fail"]
    assert "baseline: always-fail" in labels
    assert [row["label"] for row in report["improvements"]] == [
        "Improvement (agent T=1 mock/fail - llm)",
        "Improvement (agent T=2 mock/fail - llm)",
    ]
    # `agentjudge report` rebuilds the same scores from the folder alone.
    (tmp_path / "report.json").unlink()
    again = runner.invoke(app, ["report", str(tmp_path / VERDICTS_FILE)])
    assert again.exit_code == 0, again.output
    rebuilt = json.loads((tmp_path / "report.json").read_text())
    assert rebuilt["configs"] == report["configs"]
    assert "Improvement (agent T=1 mock/fail - llm)" in again.output
    # Without a model, the same folder's report keeps the earlier judge rows and says so.
    later = runner.invoke(
        app,
        [
            "judge",
            str(MINI),
            "--output",
            str(tmp_path),
            "--replay-output",
            str(mini_replay),
        ],
    )
    assert later.exit_code == 0, later.output
    latest = json.loads((tmp_path / "report.json").read_text())
    assert latest["configs"] == report["configs"]
    assert any("judge rows come from earlier runs" in note for note in latest["notes"])
    assert not any("holds the baselines only" in note for note in latest["notes"])
    # The mini dataset has mobile and search trajectories, which have no replay yet.
    assert any("domains without a replay yet" in note for note in latest["notes"])


def test_an_unknown_executor_stops_before_any_work(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "judge",
            str(MINI),
            "--model",
            "mock/pass",
            "--executor",
            "cloud",
            "--output",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 2, result.output
    assert "executor: unknown executor 'cloud'" in result.output
    assert "local" in result.output
    assert not (tmp_path / VERDICTS_FILE).exists()
