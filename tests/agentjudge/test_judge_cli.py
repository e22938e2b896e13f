"""``agentjudge judge``: the grid from the command line, with the scripted model (a dry run)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentjudge.cli import app
from judge_agent.runner import VERDICTS_FILE

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"

runner = CliRunner(env={"COLUMNS": "200", "JUDGE_MODEL": ""})


def test_judge_without_a_model_says_how_to_give_one() -> None:
    result = runner.invoke(app, ["judge", str(MINI)])
    assert result.exit_code == 2
    assert "pass --model provider/model or set JUDGE_MODEL" in result.output


def test_judge_refuses_bad_modes_and_budgets() -> None:
    bad_mode = runner.invoke(app, ["judge", str(MINI), "--model", "mock/pass", "--mode", "vibes"])
    assert bad_mode.exit_code == 2
    assert "unknown mode 'vibes'" in bad_mode.output
    bad_turns = runner.invoke(app, ["judge", str(MINI), "--model", "mock/pass", "--turns", "0"])
    assert bad_turns.exit_code == 2
    assert "at least 1" in bad_turns.output


def test_a_scripted_dry_run_writes_verdicts_and_says_it_is_scripted(tmp_path: Path) -> None:
    arguments = ["judge", str(MINI), "--model", "mock/fail", "--mode", "llm,agent"]
    arguments += ["--turns", "1,2", "--output", str(tmp_path)]
    result = runner.invoke(app, arguments)
    assert result.exit_code == 0, result.output
    assert "not judge results" in result.output
    lines = (tmp_path / VERDICTS_FILE).read_text().splitlines()
    trajectories = len(list((MINI / "trajectories").glob("*.json")))
    assert len(lines) == trajectories * (1 + 2)  # llm once, agent per budget
    records = [json.loads(line) for line in lines]
    assert {record["verdict"]["verdict"] for record in records} == {"FAIL"}
    assert {record["turns"] for record in records if record["mode"] == "agent"} == {1, 2}
    assert all(record["scripted"] for record in records)
