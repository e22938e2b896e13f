"""Label corrections: reading the file (last line wins), checking it and applying it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dataset.corrections import (
    LabelCorrection,
    apply_to_dataset,
    check_corrections,
    correction_line,
    read_corrections,
)
from dataset.problems import Problem
from dataset.store import load_dataset

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"
SEARCH_PASS = "search-python3-release-dates--pass"
FS_PASS = "fs-meeting-notes-index--sonnet-pass"


def _line(trajectory_id: str, label: str, item_id: str | None = None, note: str = "") -> str:
    return correction_line(
        LabelCorrection(
            trajectory_id=trajectory_id,
            item_id=item_id,
            label=label,
            note=note,
            recorded_at=datetime(2026, 1, 2, tzinfo=UTC),
        )
    )


def test_the_last_line_about_a_label_wins_and_a_missing_file_has_none(tmp_path: Path) -> None:
    path = tmp_path / "corrections.jsonl"
    assert read_corrections(path) == {}
    lines = [
        _line(FS_PASS, "FAIL", note="index misses a file"),
        "",
        _line(SEARCH_PASS, "FAIL", item_id="c1"),
        _line(FS_PASS, "PASS", note="taken back"),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = read_corrections(path)
    assert set(found) == {(FS_PASS, None), (SEARCH_PASS, "c1")}
    assert found[(FS_PASS, None)].label == "PASS"
    assert found[(FS_PASS, None)].note == "taken back"


def test_a_bad_line_is_named_by_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "corrections.jsonl"
    good = _line(FS_PASS, "FAIL")
    bad = json.dumps(
        {"trajectory_id": FS_PASS, "label": "MAYBE", "recorded_at": "2026-01-01T00:00:00Z"}
    )
    path.write_text(f"{good}\n{bad}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"corrections\.jsonl: label: line 2"):
        read_corrections(path)
    problems: list[Problem] = []
    found = read_corrections(path, problems)
    assert list(found) == [(FS_PASS, None)]
    assert len(problems) == 1
    assert problems[0].field == "label"
    assert problems[0].message.startswith("line 2:")


def test_corrections_naming_nothing_in_the_dataset_are_problems(tmp_path: Path) -> None:
    dataset = load_dataset(MINI)
    path = tmp_path / "c.jsonl"
    path.write_text(
        "\n".join(
            [
                _line("no-such-run", "PASS"),
                _line(FS_PASS, "FAIL", item_id="nope"),
                _line(FS_PASS, "FAIL"),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    problems = check_corrections(read_corrections(path), dataset, path)
    assert sorted((problem.field, problem.message) for problem in problems) == [
        ("item_id", f"{FS_PASS!r} has no claim 'nope'"),
        ("trajectory_id", f"'no-such-run' is not a trajectory of {MINI}"),
    ]


def test_applying_corrections_changes_the_copy_not_the_dataset_or_its_files(tmp_path: Path) -> None:
    dataset = load_dataset(MINI)
    search = dataset.trajectories[SEARCH_PASS]
    claim = search.items[0]
    flipped_claim = "FAIL" if claim.label == "PASS" else "PASS"
    original_file = (MINI / "trajectories" / f"{FS_PASS}.json").read_bytes()
    recorded = dataset.trajectories[FS_PASS].label
    assert recorded is not None
    assert recorded.value == "PASS"
    path = tmp_path / "c.jsonl"
    path.write_text(
        _line(FS_PASS, "FAIL", note="wrong file")
        + "\n"
        + _line(SEARCH_PASS, flipped_claim, claim.id)
        + "\n",
        encoding="utf-8",
    )
    corrected = apply_to_dataset(dataset, read_corrections(path))
    label = corrected.trajectories[FS_PASS].label
    assert label is not None
    assert (label.value, label.source) == ("FAIL", "human")
    assert label.error_message is not None
    assert "wrong file" in label.error_message
    assert corrected.trajectories[SEARCH_PASS].items[0].label == flipped_claim
    assert corrected.trajectories[SEARCH_PASS].items[1:] == search.items[1:]
    # The loaded dataset and the file on disk keep the recorded labels.
    assert dataset.trajectories[FS_PASS].label == recorded
    assert dataset.trajectories[SEARCH_PASS].items[0].label == claim.label
    assert (MINI / "trajectories" / f"{FS_PASS}.json").read_bytes() == original_file
