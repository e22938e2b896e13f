"""Human labels with their annotators' votes, read from a labels file and turned into a ``Label``.

Owns the labels file formats: CSV with a header naming ``trajectory``, ``annotator`` and
``label`` columns (one vote per row), or JSON lines with the same fields, or with
``{"trajectory": ..., "votes": {annotator: label}}``; and AgentRewardBench's own
``annotations.csv`` (``annotator_name, benchmark, task_id, model_name, exp_name,
trajectory_success, ...``), keyed ``<benchmark>/<model_name>/<exp_name>/<task_id>``. A label is
``1``/``0``, ``success``/``failure``, ``successful``/``unsuccessful``, ``pass``/``fail``,
``true``/``false`` or ``yes``/``no`` (any case); ``unsure`` is no vote. The majority decides
(``label.source = vote``, every vote kept); a split (or only unsure votes) gives no label,
reported by the caller.
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
_NEGATIVE = {"0", "0.0", "failure", "fail", "failed", "false", "no", "n", "unsuccessful"}
_ABSTAIN = {"unsure", "unknown", "not sure", "n/a", "na", ""}
"""Answers that are no vote either way: the annotator is counted as having looked, not voted."""

_ARB_COLUMNS = ("annotator_name", "benchmark", "task_id", "model_name", "exp_name")
_ARB_LABEL = "trajectory_success"


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
    elif vote is None and str(label).strip().lower() in _ABSTAIN:
        found.setdefault(run.strip(), {})
    elif vote is None:
        log.add(
            path,
            f"label {label!r} is not a vote (use 1/0, success/failure, pass/fail)",
            field=where,
        )
    else:
        name = str(annotator).strip()
        votes = found.setdefault(run.strip(), {})
        if name in votes and votes[name] != vote:
            log.add(path, f"annotator {name!r} voted twice on {run!r}, differently", field=where)
        votes[name] = vote


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
        header = [name.strip() for name in reader.fieldnames or []]
        if {*_ARB_COLUMNS, _ARB_LABEL} <= set(header):
            return _agentrewardbench_votes(reader, path, log, found)
        missing = {"trajectory", "annotator", "label"} - set(header)
        if missing:
            log.add(
                path,
                f"the header lacks column(s) {', '.join(sorted(missing))} (or AgentRewardBench's "
                f"{', '.join(_ARB_COLUMNS)}, {_ARB_LABEL})",
            )
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


def _agentrewardbench_votes(
    reader: csv.DictReader[str], path: Path, log: ProblemLog, found: dict[str, Votes]
) -> dict[str, Votes]:
    """AgentRewardBench's ``annotations.csv``: one row per annotator and trajectory."""
    for line, raw in enumerate(reader, start=2):
        row = {str(key).strip(): (value or "").strip() for key, value in raw.items() if key}
        parts = [row.get(column, "") for column in ("benchmark", "model_name", "exp_name")]
        if not all(parts) or not row.get("task_id"):
            message = "benchmark, model_name, exp_name or task_id is empty"
            log.add(path, message, field=f"line {line}")
            continue
        key = "/".join([*parts, row["task_id"]])
        _add(found, log, path, f"line {line}", key, row.get("annotator_name"), row[_ARB_LABEL])
    return found
