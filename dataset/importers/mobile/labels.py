"""Human labels with their annotators' votes, read from a labels file and turned into a ``Label``.

Owns the labels file formats: CSV with a header naming ``trajectory``, ``annotator`` and
``label`` columns (one vote per row), or JSON lines with the same fields, or with
``{"trajectory": ..., "votes": {annotator: label}}``. A label is ``1``/``0``, ``success``/
``failure``, ``pass``/``fail``, ``true``/``false`` or ``yes``/``no`` (any case). The majority
decides (``label.source = vote``, every vote kept); a tie gives no label, reported by the caller.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Literal

from dataset.models import Label
from dataset.problems import ProblemLog

__all__ = ["Votes", "parse_vote", "read_votes", "vote_label"]

Votes = dict[str, Literal["PASS", "FAIL"]]
"""Each annotator's verdict on one trajectory."""

_POSITIVE = {"1", "1.0", "success", "successful", "pass", "true", "yes", "y"}
_NEGATIVE = {"0", "0.0", "failure", "fail", "failed", "false", "no", "n"}


def parse_vote(value: object) -> Literal["PASS", "FAIL"] | None:
    """A vote from the spellings labels files use; None when it is none of them."""
    text = str(value).strip().lower()
    if text in _POSITIVE:
        return "PASS"
    if text in _NEGATIVE:
        return "FAIL"
    return None


def vote_label(votes: Votes) -> Label | None:
    """The majority's label with every vote; None on a tie or without votes."""
    passes = sum(1 for vote in votes.values() if vote == "PASS")
    fails = len(votes) - passes
    if passes == fails:
        return None
    return Label(value="PASS" if passes > fails else "FAIL", source="vote", votes=dict(votes))


def _add(
    found: dict[str, Votes],
    log: ProblemLog,
    path: Path,
    where: str,
    run: object,
    annotator: object,
    label: object,
) -> None:
    vote = parse_vote(label)
    if not isinstance(run, str) or not run.strip():
        log.add(path, "no trajectory named", field=where)
    elif not isinstance(annotator, str | int) or not str(annotator).strip():
        log.add(path, "no annotator named", field=where)
    elif vote is None:
        log.add(
            path,
            f"label {label!r} is not a vote (use 1/0, success/failure, pass/fail)",
            field=where,
        )
    else:
        votes = found.setdefault(run.strip(), {})
        if str(annotator) in votes and votes[str(annotator)] != vote:
            log.add(
                path, f"annotator {annotator!r} voted twice on {run!r}, differently", field=where
            )
        votes[str(annotator)] = vote


def read_votes(path: Path, log: ProblemLog) -> dict[str, Votes]:
    """Votes by trajectory key; rows that cannot be read are reported by line and skipped."""
    found: dict[str, Votes] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        log.add(path, f"cannot be read: {error}")
        return found
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        missing = {"trajectory", "annotator", "label"} - set(reader.fieldnames or [])
        if missing:
            log.add(path, f"the header lacks column(s) {', '.join(sorted(missing))}")
            return found
        for line, row in enumerate(reader, start=2):
            _add(
                found, log, path, f"line {line}", row["trajectory"], row["annotator"], row["label"]
            )
        return found
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as error:
            log.add(path, f"invalid JSON: {error.msg}", field=f"line {line}")
            continue
        if not isinstance(record, dict):
            log.add(path, "each line must be a JSON object", field=f"line {line}")
            continue
        if isinstance(record.get("votes"), dict):
            for annotator, label in record["votes"].items():
                _add(found, log, path, f"line {line}", record.get("trajectory"), annotator, label)
        else:
            _add(
                found,
                log,
                path,
                f"line {line}",
                record.get("trajectory"),
                record.get("annotator"),
                record.get("label"),
            )
    return found
