"""Label corrections: a reviewer's verdict that a recorded label is wrong, kept beside the data.

A correction file is JSON lines, one ``LabelCorrection`` per line, appended as reviewers record
them (the viewer writes ``label_corrections.jsonl``). The dataset itself is never edited: code
that wants the corrected labels reads the file and applies it (``apply_to_dataset`` here,
``bench.results.read_predictions`` for scoring). The last line about a trajectory (or one of its
claims) wins, so a reviewer can take a correction back by recording the original label again.

Owns the record, reading a file into the corrections that stand, checking them against a dataset
and applying them. Must not decide where the file lives (the caller's) or write it.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dataset.models import Label, LabelValue, Trajectory
from dataset.problems import Problem, format_location
from dataset.store import Dataset

__all__ = [
    "CORRECTIONS_FILE",
    "CorrectionKey",
    "LabelCorrection",
    "apply_to_dataset",
    "check_corrections",
    "correction_line",
    "read_corrections",
]

CORRECTIONS_FILE = "label_corrections.jsonl"
"""The file's usual name (in a results folder, or next to a dataset folder)."""

CorrectionKey = tuple[str, str | None]
"""What a correction is about: (trajectory id, claim id or None for the whole trajectory)."""


class LabelCorrection(BaseModel):
    """One reviewer's decision about one label."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    trajectory_id: str = Field(min_length=1)
    """The trajectory whose label is corrected."""
    item_id: str | None = None
    """The claim whose label is corrected; None for the trajectory's own label."""
    label: LabelValue
    """The label the reviewer says is right."""
    previous: LabelValue | None = None
    """The label the data held when the reviewer looked (None: it had none)."""
    note: str = ""
    """Why, in the reviewer's words."""
    reviewer: str = ""
    """Who decided (free text; empty when not given)."""
    recorded_at: datetime
    """When the correction was recorded."""
    source: Literal["viewer", "manual"] = "viewer"
    """What wrote the line: the viewer's form or a person editing the file."""

    @property
    def key(self) -> CorrectionKey:
        """The label this correction replaces."""
        return (self.trajectory_id, self.item_id)


def read_corrections(
    path: Path, problems: list[Problem] | None = None
) -> dict[CorrectionKey, LabelCorrection]:
    """The corrections that stand in ``path`` (the last line per label wins), by key.

    A missing file has none. A line that is not a correction is left out and, when ``problems``
    is given, reported there with its line number; without ``problems`` it raises ``ValueError``
    naming the file and line.
    """
    standing: dict[CorrectionKey, LabelCorrection] = {}
    if not path.is_file():
        return standing
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            correction = LabelCorrection.model_validate_json(line)
        except ValidationError as error:
            first = error.errors()[0]
            field = format_location(first["loc"]) or None
            message = f"line {number}: {first['msg']}"
            if problems is None:
                raise ValueError(f"{path}: {field or 'line'}: {message}") from None
            problems.append(Problem(file=str(path), field=field, message=message))
            continue
        standing[correction.key] = correction
    return standing


def check_corrections(
    corrections: dict[CorrectionKey, LabelCorrection], dataset: Dataset, source: Path
) -> list[Problem]:
    """Corrections that name no trajectory or claim of ``dataset``, as problems of ``source``."""
    problems: list[Problem] = []
    for (trajectory_id, item_id), _correction in sorted(
        corrections.items(), key=lambda entry: (entry[0][0], entry[0][1] or "")
    ):
        trajectory = dataset.trajectories.get(trajectory_id)
        if trajectory is None:
            problems.append(
                Problem(
                    file=str(source),
                    field="trajectory_id",
                    message=f"{trajectory_id!r} is not a trajectory of {dataset.root}",
                )
            )
        elif item_id is not None and all(item.id != item_id for item in trajectory.items):
            problems.append(
                Problem(
                    file=str(source),
                    field="item_id",
                    message=f"{trajectory_id!r} has no claim {item_id!r}",
                )
            )
    return problems


def _corrected(
    trajectory: Trajectory, corrections: dict[CorrectionKey, LabelCorrection]
) -> Trajectory:
    whole = corrections.get((trajectory.id, None))
    update: dict[str, object] = {}
    if whole is not None:
        votes = trajectory.label.votes if trajectory.label is not None else {}
        update["label"] = Label(
            value=whole.label,
            source="human",
            error_message=f"corrected by review: {whole.note}" if whole.note else None,
            votes=votes,
        )
    items = [
        item.model_copy(update={"label": corrections[(trajectory.id, item.id)].label})
        if (trajectory.id, item.id) in corrections
        else item
        for item in trajectory.items
    ]
    if items != trajectory.items:
        update["items"] = items
    return trajectory.model_copy(update=update) if update else trajectory


def apply_to_dataset(
    dataset: Dataset, corrections: dict[CorrectionKey, LabelCorrection]
) -> Dataset:
    """A copy of ``dataset`` whose labels carry the corrections (the files are not touched). A
    corrected trajectory label has source ``human``."""
    trajectories = {
        trajectory_id: _corrected(trajectory, corrections)
        for trajectory_id, trajectory in dataset.trajectories.items()
    }
    return dataclasses.replace(dataset, trajectories=trajectories)


def correction_line(correction: LabelCorrection) -> str:
    """The correction as one line of a correction file (without the newline)."""
    return json.dumps(correction.model_dump(mode="json"), ensure_ascii=False)
