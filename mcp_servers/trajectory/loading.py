"""Finding and reading the trajectory a standalone server serves, and its task when there is one.

Owns the rules of ``python -m mcp_servers.trajectory``: a trajectory file is read and validated on
its own (so one bad record elsewhere in its dataset does not stop it), and its task is looked up
in the dataset around it (``<root>/trajectories/<id>.json`` next to ``<root>/tasks/``). A bad
trajectory file raises ``DatasetError`` naming the file and field; a task that cannot be found
only produces a warning, and the trajectory is served without its instruction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from dataset.models import IDENTIFIER_PATTERN, Task, Trajectory
from dataset.problems import DatasetError, Problem, ProblemLog
from dataset.store import TASK_FILE, TASKS_DIR, TRAJECTORIES_DIR
from mcp_servers.serving import ToolServer
from mcp_servers.trajectory.server import TrajectoryContext, trajectory_server

__all__ = ["LoadedTrajectory", "load_trajectory_file", "trajectory_file_in_dataset"]


@dataclass
class LoadedTrajectory:
    """A trajectory read from disk, with its task when found and what went wrong finding it."""

    trajectory: Trajectory
    """The validated trajectory."""
    task: Task | None
    """Its task, or None when it could not be found or read."""
    base_dir: Path
    """The folder holding the trajectory file (screenshot paths are relative to it)."""
    warnings: list[Problem] = field(default_factory=list)
    """Why the task is missing, if it is."""

    def server(self) -> ToolServer[TrajectoryContext]:
        """A trajectory server over what was loaded."""
        return trajectory_server(self.trajectory, task=self.task, base_dir=self.base_dir)


def trajectory_file_in_dataset(root: Path, trajectory_id: str) -> Path:
    """The file of trajectory ``trajectory_id`` in the dataset at ``root``."""
    if not re.fullmatch(IDENTIFIER_PATTERN, trajectory_id):
        raise DatasetError(
            [
                Problem(
                    file=str(root),
                    field="trajectory id",
                    message=f"{trajectory_id!r} is not a valid trajectory id",
                )
            ]
        )
    return root / TRAJECTORIES_DIR / f"{trajectory_id}.json"


def load_trajectory_file(path: Path) -> LoadedTrajectory:
    """Read and validate one trajectory file and look its task up in the surrounding dataset.

    Raises ``DatasetError`` (every problem named by file and field) when the file is missing, is
    not JSON, or is not a valid trajectory.
    """
    path = Path(path)
    log = ProblemLog(Path.cwd())
    if path.exists() and not path.is_file():
        log.add(path, "is not a file: expected a trajectory JSON file")
        raise DatasetError(log.problems)
    raw = log.read_json(path)
    if raw is None:
        raise DatasetError(log.problems)
    try:
        trajectory = Trajectory.model_validate(raw)
    except ValidationError as error:
        log.add_validation_error(path, error)
        raise DatasetError(log.problems) from None
    base_dir = path.parent
    task = _find_task(path, trajectory, log)
    return LoadedTrajectory(
        trajectory=trajectory, task=task, base_dir=base_dir, warnings=log.problems
    )


def _find_task(path: Path, trajectory: Trajectory, log: ProblemLog) -> Task | None:
    folder = path.parent.resolve()
    without = "; serving the trajectory without its task instruction"
    if folder.name != TRAJECTORIES_DIR:
        log.add(
            path,
            f"is not inside a dataset's {TRAJECTORIES_DIR}/ folder, so its task cannot be "
            f"looked up{without}",
            field="task_id",
            severity="warning",
        )
        return None
    task_file = folder.parent / TASKS_DIR / trajectory.task_id / TASK_FILE
    if not task_file.is_file():
        log.add(
            path,
            f"task {trajectory.task_id!r} has no {TASKS_DIR}/{trajectory.task_id}/{TASK_FILE} "
            f"in the dataset{without}",
            field="task_id",
            severity="warning",
        )
        return None
    task_log = ProblemLog(log.base)
    raw = task_log.read_json(task_file)
    task: Task | None = None
    if raw is not None:
        try:
            task = Task.model_validate(raw)
        except ValidationError as error:
            task_log.add_validation_error(task_file, error)
    if task is not None and task.id != trajectory.task_id:
        task_log.add(task_file, f"id {task.id!r} differs from {trajectory.task_id!r}", field="id")
        task = None
    for problem in task_log.problems:
        log.problems.append(
            problem.model_copy(update={"severity": "warning", "message": problem.message + without})
        )
    return task
