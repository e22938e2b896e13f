"""The mobile pieces through the command line: import, dry run, switches, the ranking tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from agentjudge.cli import app
from bench.agent_ranking import JSON_FILE, MARKDOWN_FILE, MobileScores, write_agent_ranking
from bench.dry_run import write_dry_run
from bench.grid import GridError, GridFile, expand_grid
from bench.grid_runner import GridSpec
from bench.results import JudgeConfig, Prediction
from dataset.store import load_dataset


def episode(folder: Path, name: str, goal: str, agent: str, success: bool, steps: int) -> None:
    shots = folder / name
    shots.mkdir(parents=True)
    for number in range(steps + 1):
        Image.new("RGB", (90, 160), (number * 20, 0, 0)).save(shots / f"{number}.png")
    record = {
        "goal": goal,
        "task_template": goal.split(maxsplit=1)[0],
        "agent": agent,
        "is_successful": 1 if success else 0,
        "step_data": [
            {
                "screenshot": f"{name}/{n}.png",
                "action": {"action_type": "click", "x": 10, "y": 20 + n},
            }
            for n in range(steps)
        ],
        "final_screenshot": f"{name}/{steps}.png",
    }
    (folder / f"{name}.json").write_text(json.dumps(record), encoding="utf-8")


@pytest.fixture
def imported(tmp_path: Path) -> Path:
    source = tmp_path / "episodes"
    source.mkdir()
    plan = [("alpha", True), ("alpha", False), ("beta", True), ("beta", True), ("gamma", False)]
    for number, (agent, success) in enumerate(plan):
        for task in ("Open settings", "Add contact"):
            episode(source, f"{agent}-{number}-{task[:3]}", task, agent, success, 3 + number)
    labels = tmp_path / "votes.csv"
    labels.write_text(
        "trajectory,annotator,label\nalpha-0-Ope,x,0\nalpha-0-Ope,y,0\nalpha-0-Ope,z,1\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        app,
        [
            "datasets",
            "import-mobile",
            "--format",
            "androidworld",
            str(source),
            str(tmp_path / "ds"),
            "--labels",
            str(labels),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "imported 10 trajectory(ies) of 2 task(s)" in result.output
    assert "labels: verifier 9, vote 1" in result.output
    return tmp_path / "ds"


def test_import_mobile_refuses_an_unknown_format_and_a_missing_source(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        app, ["datasets", "import-mobile", "--format", "droid", str(tmp_path), str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "use one of androidworld, spa-bench, a3, aitk, agentrewardbench" in result.output
    result = runner.invoke(
        app,
        [
            "datasets",
            "import-mobile",
            "--format",
            "a3",
            str(tmp_path / "none"),
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 2
    assert "no such file or folder" in result.output


def test_dry_run_writes_the_exact_images_a_method_sends(imported: Path, tmp_path: Path) -> None:
    summary = write_dry_run(
        imported,
        tmp_path / "dry",
        modes=["mobile-baseline", "a3-final"],
        method_options={"screenshots": "3", "long_edge": "80"},
    )
    assert not summary.problems
    data = load_dataset(imported)
    assert len(summary.folders) == 2 * len(data.trajectories)
    trajectory = sorted(data.trajectories)[0]
    folder = tmp_path / "dry" / "mobile-baseline" / trajectory
    record = json.loads((folder / "request_1.json").read_text(encoding="utf-8"))
    images = [
        part["image"] for m in record["messages"] for part in m["content"] if isinstance(part, dict)
    ]
    assert len(images) == 3
    for name in images:
        with Image.open(folder / name) as image:
            assert max(image.size) == 80  # 90 x 160 shrunk to a long edge of 80
    assert "[image request_1_image_1.png]" in (folder / "request_1.txt").read_text(encoding="utf-8")
    # a3-final shows one screen; long_edge is a switch every method takes, so it is 80 there too.
    final = tmp_path / "dry" / "a3-final" / trajectory
    assert sorted(p.name for p in final.glob("*.png")) == ["request_1_image_1.png"]
    with Image.open(final / "request_1_image_1.png") as image:
        assert image.size == (45, 80)


def test_the_command_line_checks_switches_and_dry_runs(imported: Path, tmp_path: Path) -> None:
    runner = CliRunner(env={"COLUMNS": "200", "JUDGE_MODEL": ""})
    bad = runner.invoke(
        app, ["judge", str(imported), "--mode", "spa-bench", "--method-option", "screenshots=9"]
    )
    assert bad.exit_code == 2
    assert "taken by none of the modes" in " ".join(bad.output.split())
    result = runner.invoke(
        app,
        [
            "judge",
            str(imported),
            "--mode",
            "mobile-methods",
            "--dry-run",
            str(tmp_path / "dry"),
            "--method-option",
            "screenshots=4",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "no model was called" in result.output
    assert len(list((tmp_path / "dry").iterdir())) == 6


def test_grid_file_switch_sets_become_arms() -> None:
    grid = GridFile(
        modes=["mobile-baseline"],
        method_options=[{"screenshots": 3}, {"screenshots": 48, "ui": True}],
    )
    arms = expand_grid(grid, GridSpec(), ["mock/coin"])
    assert [spec.method_options for _, spec in arms] == [
        {"screenshots": "3"},
        {"screenshots": "48", "ui": "on"},
    ]
    assert arms[1][1].variant == "options=screenshots=48,ui=on"
    with pytest.raises(GridError, match="method_options"):
        expand_grid(
            GridFile(modes=["llm"], method_options=[{"window": 3}]), GridSpec(), ["mock/coin"]
        )


def test_ranking_tables_group_by_benchmark_and_agent(imported: Path, tmp_path: Path) -> None:
    data = load_dataset(imported)
    predictions = []
    for trajectory in data.trajectories.values():
        assert trajectory.label is not None
        for name, verdict in (("always-pass", "PASS"), ("oracle", trajectory.label.value)):
            predictions.append(
                Prediction(
                    config=JudgeConfig(kind="baseline", name=name),
                    trajectory_id=trajectory.id,
                    task_id=trajectory.task_id,
                    domain="mobile",
                    subdomain="android",
                    agent=trajectory.agent,
                    label=trajectory.label.value,
                    verdict=verdict,
                )
            )
    path = write_agent_ranking(tmp_path, predictions, imported, replicates=200)
    assert path == tmp_path / MARKDOWN_FILE
    scores = MobileScores.model_validate_json((tmp_path / JSON_FILE).read_text(encoding="utf-8"))
    assert {agent.agent for agent in scores.agents} == {
        "androidworld/alpha",
        "androidworld/beta",
        "androidworld/gamma",
    }
    oracle = next(row for row in scores.variants if row.variant == "baseline: oracle")
    assert oracle.values["ranking_rho"] == pytest.approx(1.0)
    assert oracle.values["rate_mae"] == pytest.approx(0.0)
    # alpha: 4 runs, labels PASS (verifier) twice, but one is overruled by the annotators' vote.
    alpha = next(agent for agent in scores.agents if agent.agent == "androidworld/alpha")
    assert alpha.trajectories == 4
    assert alpha.label_rate == pytest.approx(1 / 4)
    assert "| androidworld | 2 | 10 |" in path.read_text(encoding="utf-8")


def test_datasets_without_benchmarks_get_no_ranking_tables(tmp_path: Path) -> None:
    ds = Path(__file__).resolve().parents[2] / "datasets" / "ds"
    assert write_agent_ranking(tmp_path, [], ds, replicates=10) is None
    assert not (tmp_path / MARKDOWN_FILE).exists()


def test_a_scripted_run_of_every_method_gives_the_ranking_tables_marked_scripted(
    imported: Path, tmp_path: Path
) -> None:
    runner = CliRunner(env={"COLUMNS": "200", "JUDGE_MODEL": ""})
    result = runner.invoke(
        app,
        [
            "judge",
            str(imported),
            "--mode",
            "mobile-methods",
            "--model",
            "mock/coin",
            "--output",
            str(tmp_path / "judge"),
            "--replay-output",
            str(tmp_path / "replay"),
        ],
    )
    # The imported tasks start from an external state: not replayable (reported), judged
    # from the recorded trajectory.
    assert "cannot replay: it starts from an external state" in result.output
    text = (tmp_path / "judge" / MARKDOWN_FILE).read_text(encoding="utf-8")
    assert text.count("SCRIPTED") == 1
    for mode in (
        "spa-bench",
        "a3-final",
        "a3-essential",
        "androidarena",
        "agentrewardbench",
        "mobile-baseline",
    ):
        assert f"| {mode} mock/coin (scripted) | 10 | 0 |" in text, mode
    # The terminal gets the ranking rendered, not its Markdown source.
    assert "Meta-correlation across variants" in result.output
    assert "## Meta-correlation" not in result.output
    scores = MobileScores.model_validate_json(
        (tmp_path / "judge" / JSON_FILE).read_text(encoding="utf-8")
    )
    assert scores.scripted
    assert {row.quality for row in scores.meta} == {
        "accuracy",
        "precision",
        "recall",
        "f1",
        "balanced_accuracy",
    }
