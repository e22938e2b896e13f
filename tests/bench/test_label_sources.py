"""Scoring by who decided the labels: ``agentjudge report --label-source``."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from agentjudge.cli import app
from bench.evaluate import report_folder
from bench.results import BASELINES_FILE, JudgeConfig, Prediction, read_predictions
from dataset.corrections import LabelCorrection, correction_line
from dataset.models import Label

ALWAYS_PASS = JudgeConfig(kind="baseline", name="always-pass")


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "results"
    folder.mkdir()
    rows = [
        ("a", "PASS", "vote"),
        ("b", "FAIL", "vote"),
        ("c", "PASS", "evaluator"),
        ("d", "FAIL", "verifier"),
        ("e", "FAIL", None),  # written before label sources were kept
    ]
    predictions = [
        Prediction(
            config=ALWAYS_PASS,
            trajectory_id=trajectory,
            task_id=f"task-{trajectory}",
            domain="mobile",
            subdomain="android",
            label=label,
            label_source=source,
            verdict="PASS",
        )
        for trajectory, label, source in rows
    ]
    (folder / BASELINES_FILE).write_text(
        "".join(p.model_dump_json(exclude_none=True) + "\n" for p in predictions),
        encoding="utf-8",
    )
    return folder


def _overall_accuracy(tmp_path: Path, folder: Path, sources: tuple[str, ...]) -> float | None:
    report, _ = report_folder(folder, output=tmp_path / "out", replicates=20, label_sources=sources)
    config = next(c for c in report.configs if c.config == ALWAYS_PASS)
    return next(g.accuracy for g in config.groups if g.level == "overall")


def test_reports_score_only_the_chosen_label_sources(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    assert _overall_accuracy(tmp_path, folder, ()) == 2 / 5
    assert _overall_accuracy(tmp_path, folder, ("vote",)) == 1 / 2
    assert _overall_accuracy(tmp_path, folder, ("evaluator",)) == 1.0
    assert _overall_accuracy(tmp_path, folder, ("verifier", "unknown")) == 0.0
    report, _ = report_folder(
        folder, output=tmp_path / "out", replicates=20, label_sources=("vote", "human")
    )
    assert any("labels decided by: human, vote (2 labelled" in note for note in report.notes)


def test_a_reviewed_label_is_a_human_one(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    corrections = tmp_path / "corrections.jsonl"
    correction = LabelCorrection(
        trajectory_id="c", label="FAIL", recorded_at=datetime(2026, 1, 1, tzinfo=UTC)
    )
    corrections.write_text(correction_line(correction) + "\n", encoding="utf-8")
    sources = {p.trajectory_id: p.label_source for p in read_predictions(folder, corrections)}
    assert sources == {"a": "vote", "b": "vote", "c": "human", "d": "verifier", "e": None}


def test_the_command_refuses_an_unknown_source_and_old_labels_still_load(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    result = CliRunner().invoke(app, ["report", str(folder), "--label-source", "crowd"])
    assert result.exit_code == 2
    assert "--label-source crowd: use human, vote, verifier, evaluator" in result.output
    result = CliRunner().invoke(
        app, ["report", str(folder), "--label-source", "vote", "--output", str(tmp_path / "r")]
    )
    assert result.exit_code == 0, result.output
    assert Label.model_validate({"value": "PASS"}).source == "unknown"
    assert Label.model_validate({"value": "FAIL", "source": "human"}).source == "human"
