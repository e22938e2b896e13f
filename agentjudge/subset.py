"""``--only PATTERN`` and ``--limit N``: the options of ``replay`` and ``judge`` that run a subset
of a dataset (``dataset.selection``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentjudge.paths import fail
from dataset.selection import Selection, SelectionError, select_trajectories
from dataset.store import load_dataset

__all__ = ["LimitOption", "OnlyOption", "selected_ids", "selection"]

SUBSET_PANEL = "Subset"
"""The help panel of the options that choose which trajectories run."""

OnlyOption = Annotated[
    list[str] | None,
    typer.Option(
        "--only",
        metavar="PATTERN",
        help="Run only the trajectories whose id or task id matches this shell glob (quote it: "
        "`--only 'gui-*'`). Repeatable: a trajectory matching any pattern runs.",
        rich_help_panel=SUBSET_PANEL,
    ),
]

LimitOption = Annotated[
    int | None,
    typer.Option(
        "--limit",
        metavar="N",
        min=1,
        help="Run at most N trajectories (after --only), the first ones in trajectory-id order.",
        rich_help_panel=SUBSET_PANEL,
    ),
]


def selection(only: list[str] | None, limit: int | None) -> Selection:
    """The options as a ``Selection``."""
    return Selection(patterns=tuple(only or ()), limit=limit)


def selected_ids(dataset: Path, chosen: Selection) -> set[str] | None:
    """The trajectory ids of ``dataset`` that ``chosen`` keeps (None: all of them); a pattern
    that matches nothing stops with exit code 2 naming it."""
    if chosen.everything:
        return None
    loaded = load_dataset(dataset, partial=True)
    try:
        return select_trajectories(loaded.trajectories, chosen)
    except SelectionError as error:
        raise fail(f"{dataset}: {error}") from None
