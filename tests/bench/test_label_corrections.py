"""Scoring against reviewed labels: ``--label-corrections`` replaces the labels it corrects, and a
results folder's own ``label_corrections.jsonl`` (the viewer's) applies by default."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from agentjudge.cli import app
from bench.evaluate import report_folder
from bench.results import BASELINES_FILE, JudgeConfig, Prediction, read_predictions
from bench.scores import BenchReport
from dataset.corrections import LabelCorrection, correction_line

ALWAYS_PASS = JudgeConfig(kind="baseline", name="always-pass")


def _prediction(trajectory: str, label: str, item_id: str | None = None) -> Prediction:
    return Prediction(
        config=ALWAYS_PASS,
        trajectory_id=trajectory,
        item_id=item_id,
        task_id=f"task-{trajectory}",
        domain="ds",
        subdomain="filesystem",
        label=label,
        verdict="PASS",
    )


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "results"
    folder.mkdir()
    predictions = [
        _prediction("a", "PASS"),
        _prediction("b", "FAIL"),
        _prediction("c", "FAIL"),
        _prediction("d", "PASS"),
        _prediction("s", "FAIL", item_id="c1"),
    ]
    (folder / BASELINES_FILE).write_text(
        "".join(p.model_dump_json() + "\n" for p in predictions), encoding="utf-8"
    )
    return folder


def _corrections(tmp_path: Path, *entries: tuple[str, str | None, str]) -> Path:
    path = tmp_path / "label_corrections.jsonl"
    path.write_text(
        "".join(
            correction_line(
                LabelCorrection(
                    trajectory_id=trajectory,
                    item_id=item_id,
                    label=label,
                    recorded_at=datetime(2026, 1, 1, tzinfo=UTC),
                )
            )
            + "\n"
            for trajectory, item_id, label in entries
        ),
        encoding="utf-8",
    )
    return path


def test_predictions_take_the_corrected_labels_of_trajectories_and_claims(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    # A correction of a trajectory's label does not touch its claims, and the reverse.
    path = _corrections(tmp_path, ("b", None, "PASS"), ("s", "c1", "PASS"), ("a", "c9", "FAIL"))
    labels = {p.subject: p.label for p in read_predictions(folder, path)}
    assert labels == {"a": "PASS", "b": "PASS", "c": "FAIL", "d": "PASS", "s#c1": "PASS"}
    assert {p.subject: p.label for p in read_predictions(folder)}["b"] == "FAIL"


def test_the_report_scores_against_corrected_labels_and_says_so(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    path = _corrections(tmp_path, ("b", None, "PASS"), ("c", None, "PASS"))

    def overall_accuracy(corrections: Path | None) -> float | None:
        report, _files = report_folder(
            folder, output=tmp_path / "out", replicates=20, label_corrections=corrections
        )
        config = next(c for c in report.configs if c.config == ALWAYS_PASS)
        return next(g.accuracy for g in config.groups if g.level == "overall")

    # always-pass is right where the label is PASS: 2 of the 5 subjects, then 4 of them.
    before = overall_accuracy(None)
    after = overall_accuracy(path)
    assert before == 2 / 5
    assert after == 4 / 5
    report, _ = report_folder(
        folder, output=tmp_path / "out", replicates=20, label_corrections=path
    )
    assert any("Labels corrected by review: 2 label(s)" in note for note in report.notes)


def _accuracy(report: BenchReport) -> float | None:
    config = next(c for c in report.configs if c.config == ALWAYS_PASS)
    return next(g.accuracy for g in config.groups if g.level == "overall")


def test_the_results_folders_own_corrections_apply_by_default_and_can_be_turned_off(
    tmp_path: Path,
) -> None:
    folder = _folder(tmp_path)
    # As `agentjudge view` writes them: label_corrections.jsonl in the results folder.
    written = _corrections(tmp_path, ("b", None, "PASS"), ("c", None, "PASS"), ("zz", None, "PASS"))
    written.rename(folder / "label_corrections.jsonl")
    report, _ = report_folder(folder, output=tmp_path / "out", replicates=20)
    assert _accuracy(report) == 4 / 5
    note = next(n for n in report.notes if n.startswith("Labels corrected by review:"))
    assert "2 label(s)" in note  # b and c; zz names no trajectory here
    assert "1 correction(s) there name no trajectory" in note
    assert "--no-folder-corrections" in note
    off, _ = report_folder(folder, output=tmp_path / "out", replicates=20, folder_corrections=False)
    assert _accuracy(off) == 2 / 5
    assert not any(n.startswith("Labels corrected by review:") for n in off.notes)


def test_a_correction_file_given_replaces_the_folders_own(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    own = _corrections(tmp_path, ("b", None, "PASS"), ("c", None, "PASS"))
    own.rename(folder / "label_corrections.jsonl")
    given = _corrections(tmp_path, ("b", None, "PASS"))
    report, _ = report_folder(
        folder, output=tmp_path / "out", replicates=20, label_corrections=given
    )
    assert _accuracy(report) == 3 / 5
    note = next(n for n in report.notes if n.startswith("Labels corrected by review:"))
    assert str(given) in note
    assert "--no-folder-corrections" not in note


def test_report_command_says_how_many_corrections_it_applied(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    _corrections(tmp_path, ("b", None, "PASS")).rename(folder / "label_corrections.jsonl")
    runner = CliRunner(env={"COLUMNS": "300"})
    applied = runner.invoke(app, ["report", str(folder)])
    assert applied.exit_code == 0, applied.output
    assert "Labels corrected by review: 1 label(s) from" in applied.output
    plain = runner.invoke(app, ["report", str(folder), "--no-folder-corrections"])
    assert plain.exit_code == 0, plain.output
    assert "Labels corrected by review" not in plain.output
    (folder / "label_corrections.jsonl").write_text("{not json\n", encoding="utf-8")
    broken = runner.invoke(app, ["report", str(folder)])
    assert broken.exit_code == 2
    assert "label_corrections.jsonl: line: line 1" in broken.output
