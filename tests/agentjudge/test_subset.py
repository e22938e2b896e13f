"""``--only`` and ``--limit`` on ``replay`` and ``judge`` (and ``ONLY=``/``LIMIT=`` in make): only
the chosen trajectories are replayed, given baselines, judged and reported on."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from typer.testing import CliRunner

from agentjudge.cli import app
from bench.grid_runner import VERDICTS_FILE
from bench.results import BASELINES_FILE

REPOSITORY = Path(__file__).resolve().parents[2]
MINI = REPOSITORY / "datasets" / "examples" / "mini"
FS_TASK = "fs-meeting-notes-index"
FIRST_FS = "fs-meeting-notes-index--mini-claims-success"
"""The first of the task's two trajectories in id order."""

runner = CliRunner(env={"COLUMNS": "200", "JUDGE_MODEL": ""})


def _ids(path: Path, key: str) -> set[str]:
    return {json.loads(line)[key] for line in path.read_text().splitlines()}


def test_replay_only_a_task_with_a_limit_replays_one_trajectory(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["replay", str(MINI), "--only", FS_TASK, "--limit", "1", "--output", str(tmp_path)],
    )
    assert result.exit_code == 0, result.output
    assert _ids(tmp_path / "fidelity.jsonl", "trajectory_id") == {FIRST_FS}
    header = result.output.splitlines()[0]
    assert "1 trajectory(ies) chosen by --only 'fs-meeting-notes-index' --limit 1" in header
    assert "backends by kind: filesystem local, postgres embedded" in header
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["total"]["trajectories"] == 1


def test_replay_refuses_a_pattern_that_matches_nothing(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["replay", str(MINI), "--only", "nothing-like-this*", "--output", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "--only 'nothing-like-this*' matches no trajectory or task id" in result.output
    assert not (tmp_path / "fidelity.jsonl").exists()


def test_judge_only_judges_baselines_and_reports_the_chosen_trajectories(tmp_path: Path) -> None:
    arguments = ["judge", str(MINI), "--model", "mock/fail", "--mode", "llm"]
    arguments += ["--only", "pg-*", "--only", FS_TASK, "--limit", "3"]
    arguments += ["--output", str(tmp_path), "--replay-output", str(tmp_path / "replay")]
    result = runner.invoke(app, arguments)
    assert result.exit_code == 0, result.output
    # fs-* sorts before pg-*: both fs runs, then the first pg run.
    chosen = {
        FIRST_FS,
        "fs-meeting-notes-index--sonnet-pass",
        "pg-active-customers-view--mini-inner-join",
    }
    assert _ids(tmp_path / "replay" / "fidelity.jsonl", "trajectory_id") == chosen
    assert _ids(tmp_path / VERDICTS_FILE, "trajectory_id") == chosen
    report = json.loads((tmp_path / "report.json").read_text())
    # Baselines are fitted on the whole dataset (as in a whole run); the report keeps the subset.
    assert chosen < _ids(tmp_path / BASELINES_FILE, "trajectory_id")
    always_pass = next(c for c in report["configs"] if c["label"] == "baseline: always-pass")
    overall = next(g for g in always_pass["groups"] if g["level"] == "overall")
    counts = overall["confusion"]
    assert counts["tp"] + counts["fp"] + counts["tn"] + counts["fn"] == len(chosen)
    assert any(
        note.startswith("Scored only the 3 trajectory(ies) chosen by --only 'pg-*'")
        for note in report["notes"]
    )


def test_judge_stops_before_any_work_when_a_pattern_matches_nothing(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["judge", str(MINI), "--model", "mock/fail", "--only", "gui-*", "--output", str(tmp_path)],
    )
    assert result.exit_code == 2, result.output
    assert "--only 'gui-*' matches no trajectory or task id" in result.output
    assert not (tmp_path / BASELINES_FILE).exists()


def test_make_passes_only_and_limit_to_replay_and_judge() -> None:
    for target in ("replay", "judge"):
        shown = subprocess.run(
            ["make", "-n", target, "ONLY=gui-* fs-meeting-notes-index", "LIMIT=5"],
            cwd=REPOSITORY,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        command = next(line for line in shown.splitlines() if f"agentjudge {target}" in line)
        assert "--only 'gui-*' --only 'fs-meeting-notes-index' --limit 5" in command
        plain = subprocess.run(
            ["make", "-n", target],
            cwd=REPOSITORY,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        assert "--only" not in plain
        assert "--limit" not in plain
