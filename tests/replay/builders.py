"""Datasets and trajectories built on the fly for replay tests."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from dataset.actions import ToolCallAction
from dataset.models import Label, Observation, Step, Trajectory
from dataset.store import Manifest, load_dataset, write_manifest, write_trajectory

MINI = Path(__file__).parents[2] / "datasets" / "examples" / "mini"
FS_TASK = "fs-meeting-notes-index"
PG_TASK = "pg-active-customers-view"


def call(
    index: int,
    name: str,
    arguments: dict[str, Any],
    output: str | None,
    *,
    error: bool = False,
) -> Step:
    """A recorded tool-call step."""
    return Step(
        index=index,
        action=ToolCallAction(name=name, arguments=arguments, call_id=f"call_{index}"),
        observation=None if output is None else Observation(text=output),
        is_error=error,
    )


def steps(*calls: tuple[Any, ...]) -> list[Step]:
    """Steps numbered from 1: each item is ``(name, arguments, output[, error])``."""
    return [
        call(index, item[0], item[1], item[2], error=len(item) > 3 and bool(item[3]))
        for index, item in enumerate(calls, start=1)
    ]


def trajectory(
    identifier: str, task_id: str, recorded: list[Step], label: str | None = None, **extra: Any
) -> Trajectory:
    """A trajectory with an optional verifier label."""
    return Trajectory(
        id=identifier,
        task_id=task_id,
        agent="test-agent",
        steps=recorded,
        label=None if label is None else Label(value=label, source="verifier", **extra),
    )


def build_dataset(root: Path, trajectories: list[Trajectory], tasks: tuple[str, ...]) -> Path:
    """A dataset with some of the mini example's DS tasks and the given trajectories."""
    write_manifest(root, Manifest(name=root.name))
    for task in tasks:
        shutil.copytree(MINI / "tasks" / task, root / "tasks" / task)
    for item in trajectories:
        write_trajectory(root, item)
    load_dataset(root)  # fails loudly if the test built something invalid
    return root
