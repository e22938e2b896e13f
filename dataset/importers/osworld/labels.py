"""Labels of OSWorld runs: the recorded evaluator score, and label files written by people.

Owns reading ``result.txt`` (the score OSWorld's evaluator gave the final state, a number from 0
to 1) into a verifier label, and reading a human label file: JSON (an object mapping a run to
its label, or a list of ``{"run": ..., "label": ...}`` objects), JSON lines of such objects, or
CSV with a ``run`` (or ``trajectory``, ``id``, ``example_id``) and a ``label`` column. A run is
named by its folder relative to the source, its example id or its trajectory id; a label is
``PASS``/``FAIL``, ``true``/``false``, ``1``/``0`` or ``yes``/``no``.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

from dataset.models import LabelValue

__all__ = ["LabelFileError", "RecordedScore", "label_value", "read_label_file", "read_score"]

_WORDS: dict[str, LabelValue] = {
    **dict.fromkeys(("pass", "true", "1", "yes", "success", "1.0"), "PASS"),
    **dict.fromkeys(("fail", "false", "0", "no", "failure", "0.0"), "FAIL"),
}
_KEY_COLUMNS = ("run", "trajectory", "trajectory_id", "id", "example_id", "folder")


class LabelFileError(ValueError):
    """A human label file that cannot be read; the message names the file and the entry."""


@dataclass(frozen=True)
class RecordedScore:
    """What ``result.txt`` says."""

    score: float
    """The evaluator's score."""
    text: str
    """The file's text, stripped."""


def label_value(value: object) -> LabelValue | None:
    """A label from a word, a boolean or 0/1; None when ``value`` is none of them."""
    if isinstance(value, bool):
        return "PASS" if value else "FAIL"
    if isinstance(value, int | float) and value in (0, 1):
        return "PASS" if value == 1 else "FAIL"
    if isinstance(value, str):
        return _WORDS.get(value.strip().lower())
    return None


def read_score(path: Path) -> RecordedScore | str:
    """The score in ``result.txt``, or why it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return "no result.txt (the evaluator's score) in the run folder"
    except (OSError, UnicodeDecodeError) as error:
        return f"result.txt cannot be read: {error}"
    try:
        score = float(text.splitlines()[0]) if text else float("nan")
    except ValueError:
        return f"result.txt does not hold a number: {text[:80]!r}"
    if not 0.0 <= score <= 1.0:
        return f"result.txt holds {text[:80]!r}, not a score from 0 to 1"
    return RecordedScore(score=score, text=text)


def read_label_file(path: Path) -> dict[str, LabelValue]:
    """The labels in a human label file, by the run each names; raises ``LabelFileError``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise LabelFileError(f"{path}: cannot be read: {error}") from None
    if path.suffix.lower() == ".csv":
        return _from_rows(path, list(csv.DictReader(io.StringIO(text))), "row")
    stripped = text.strip()
    if not stripped:
        raise LabelFileError(f"{path}: the label file is empty")
    if path.suffix.lower() == ".jsonl":
        rows = []
        for number, line in enumerate(stripped.splitlines(), start=1):
            if line.strip():
                rows.append(_json(path, line, f"line {number}"))
        return _from_rows(path, rows, "line")
    payload = _json(path, stripped, "the file")
    if isinstance(payload, dict):
        labels: dict[str, LabelValue] = {}
        for key, value in payload.items():
            label = label_value(value)
            if label is None:
                raise LabelFileError(
                    f"{path}: {key!r}: label {value!r} is not PASS/FAIL, true/false or 1/0"
                )
            labels[key] = label
        return labels
    if isinstance(payload, list):
        return _from_rows(path, payload, "entry")
    raise LabelFileError(f"{path}: expected an object or a list, got {type(payload).__name__}")


def _json(path: Path, text: str, where: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise LabelFileError(
            f"{path}: {where}: invalid JSON at line {error.lineno} column {error.colno}: "
            f"{error.msg}"
        ) from None


def _from_rows(path: Path, rows: list[object], unit: str) -> dict[str, LabelValue]:
    labels: dict[str, LabelValue] = {}
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise LabelFileError(f"{path}: {unit} {number}: expected an object with run and label")
        key = next((row[name] for name in _KEY_COLUMNS if row.get(name)), None)
        if not isinstance(key, str):
            raise LabelFileError(
                f"{path}: {unit} {number}: no run named (one of the columns "
                f"{', '.join(_KEY_COLUMNS)})"
            )
        label = label_value(row.get("label"))
        if label is None:
            raise LabelFileError(
                f"{path}: {unit} {number}: label {row.get('label')!r} is not PASS/FAIL, "
                "true/false or 1/0"
            )
        labels[key] = label
    return labels
