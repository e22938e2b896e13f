"""Choosing a subset of a dataset's trajectories: ``--only PATTERN`` and ``--limit N``.

A pattern is a shell glob (``*``, ``?``, ``[...]``) matched against each trajectory's id and its
task's id; a trajectory is kept when any pattern matches either. The limit keeps the first N of
what the patterns kept, in trajectory-id order (the order every run uses), so the same options
pick the same trajectories on every machine.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from dataset.models import Trajectory

__all__ = ["Selection", "SelectionError", "select_trajectories"]


class SelectionError(ValueError):
    """The options select nothing (a pattern that matches no id, a limit below 1)."""


class Selection(BaseModel):
    """What ``--only`` and ``--limit`` asked for."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    patterns: tuple[str, ...] = ()
    """Globs on trajectory ids and task ids (empty: every trajectory)."""
    limit: int | None = None
    """Keep at most this many of the matching trajectories (None: all)."""

    @property
    def everything(self) -> bool:
        """Whether the selection keeps every trajectory (no pattern, no limit)."""
        return not self.patterns and self.limit is None

    def describe(self) -> str:
        """The options as given, for messages (``--only 'gui-*' --limit 5``)."""
        parts = [f"--only {pattern!r}" for pattern in self.patterns]
        if self.limit is not None:
            parts.append(f"--limit {self.limit}")
        return " ".join(parts) or "everything"


def _matches(pattern: str, trajectory: Trajectory) -> bool:
    return fnmatch.fnmatchcase(trajectory.id, pattern) or fnmatch.fnmatchcase(
        trajectory.task_id, pattern
    )


def select_trajectories(
    trajectories: Mapping[str, Trajectory], selection: Selection
) -> set[str] | None:
    """The ids ``selection`` keeps, or None when it keeps everything (no option given).

    Raises ``SelectionError`` when a limit is below 1 or a pattern matches no trajectory or
    task (each such pattern named, with a few of the ids there are), so a typo never runs an
    empty or a silently smaller subset."""
    if selection.everything:
        return None
    if selection.limit is not None and selection.limit < 1:
        raise SelectionError(f"--limit {selection.limit}: give 1 or more")
    ordered = [trajectories[key] for key in sorted(trajectories)]
    unmatched = [
        pattern
        for pattern in selection.patterns
        if not any(_matches(pattern, trajectory) for trajectory in ordered)
    ]
    if unmatched:
        raise SelectionError(
            f"{', '.join(f'--only {pattern!r}' for pattern in unmatched)} matches no trajectory "
            f"or task id (for example: {_examples(ordered)})"
        )
    kept = [
        trajectory.id
        for trajectory in ordered
        if not selection.patterns
        or any(_matches(pattern, trajectory) for pattern in selection.patterns)
    ]
    if selection.limit is not None:
        kept = kept[: selection.limit]
    return set(kept)


def _examples(ordered: Sequence[Trajectory], count: int = 3) -> str:
    if not ordered:
        return "the dataset has no trajectory"
    tasks = sorted({trajectory.task_id for trajectory in ordered})[:count]
    runs = [trajectory.id for trajectory in ordered[:count]]
    return f"tasks {', '.join(tasks)}; trajectories {', '.join(runs)}"
