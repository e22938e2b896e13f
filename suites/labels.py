"""Labelling a suite's recorded runs: each is replayed into a fresh sandbox, must replay
faithfully, and takes the verifier's verdict on the replayed end state as its label."""

from __future__ import annotations

from pathlib import Path

from dataset.models import Label, Task, Trajectory
from dataset.store import TRAJECTORIES_DIR
from environments.backends import ProviderSet
from replay.engine import replay_trajectory


class BuildError(Exception):
    """A run that cannot ship: its replay diverged, its verifier gave no verdict, or its label
    is not what it was written for."""


async def verifier_label(
    trajectory: Trajectory, task: Task, task_dir: Path, providers: ProviderSet
) -> Trajectory:
    """``trajectory`` labelled by ``task``'s verifier on a replay of it (``task_dir`` holds the
    task's files); ``BuildError`` naming the run when a step does not match or the verifier
    errs."""
    result = await replay_trajectory(trajectory, task, task_dir, providers, verify=True)
    report = result.report
    where = f"{TRAJECTORIES_DIR}/{trajectory.id}.json"
    if report.verdict != "faithful":
        details = "; ".join(
            f"step {step.index} {step.status}: {step.diff or step.message}"
            for step in report.steps
            if step.status not in ("match", "unrecorded")
        )
        raise BuildError(f"{where}: replay {report.verdict}: {details or report.problems}")
    if report.verifier is None or report.verifier.replayed.errored:
        raise BuildError(f"{where}: the verifier gave no verdict: {report.problems}")
    run = report.verifier.replayed
    label = Label(
        value="PASS" if run.passed else "FAIL",
        source="verifier",
        verifier_output=run.output.strip() or None,
    )
    return trajectory.model_copy(update={"label": label})
