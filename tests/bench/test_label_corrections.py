"""Scoring against reviewed labels: ``--label-corrections`` replaces the labels it corrects."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from bench.evaluate import report_folder
from bench.results import BASELINES_FILE, JudgeConfig, Prediction, read_predictions
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
