"""MCPMark's task folders and initial environments, and bundling them into an imported task.

Owns finding a run's task folder (``description.md``, ``verify.py``) under MCPMark's ``tasks/``,
and copying the verifier and the initial state (a ``<category>/`` tree for filesystem, a
``<category>.sql`` seed for Postgres) into the task's folder of the dataset. Both inputs are
optional: without them a task keeps its recorded instruction and an external initial state.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataset.importers.mcpmark.discovery import RunKey
from dataset.models import (
    DirectoryTreeState,
    InitialState,
    SqlSeedState,
    Task,
    VerifierRef,
)
from dataset.problems import ProblemLog


@dataclass
class TaskFiles:
    """The files MCPMark has for one task's environment, where they were found."""

    service: str
    category: str
    verifier: Path | None = None
    description: Path | None = None


class TaskFolders:
    """The task folders under MCPMark's ``tasks/`` (none without one), looked up once per task."""

    def __init__(self, tasks_root: Path | None, log: ProblemLog) -> None:
        self.tasks_root = tasks_root
        self.log = log
        self._found: dict[tuple[str, str, str], Path | None] = {}

    def files_for(self, key: RunKey) -> TaskFiles:
        """The description and verifier of the run's task, where they exist."""
        files = TaskFiles(service=key.service, category=key.category)
        if self.tasks_root is None:
            return files
        cache_key = (key.service, key.category, key.task)
        if cache_key not in self._found:  # look up (and warn) once per task, not per run
            self._found[cache_key] = _find_task_folder(self.tasks_root, key, self.log)
        folder = self._found[cache_key]
        if folder is not None:
            if (folder / "description.md").is_file():
                files.description = folder / "description.md"
            if (folder / "verify.py").is_file():
                files.verifier = folder / "verify.py"
        return files


def _find_task_folder(tasks_root: Path, key: RunKey, log: ProblemLog) -> Path | None:
    patterns = [
        f"{key.service}/*/{key.category}/{key.task}",
        f"*/{key.category}/{key.task}",
        f"{key.category}/{key.task}",
    ]
    for pattern in patterns:
        matches = sorted(path for path in tasks_root.glob(pattern) if path.is_dir())
        if matches:
            # MCPMark ships a "standard" and an "easy" suite; prefer the standard one.
            matches.sort(key=lambda path: path.parent.parent.name != "standard")
            if len(matches) > 1:
                log.add(
                    tasks_root,
                    f"task {key.category}/{key.task} found in several suites; used {matches[0]}",
                    severity="warning",
                )
            return matches[0]
    log.add(
        tasks_root,
        f"no task folder for {key.service} {key.category}/{key.task}; used the recorded "
        "user message as instruction and no verifier",
        severity="warning",
    )
    return None


def bundle_task_files(
    task: Task,
    files: TaskFiles,
    destination: Path,
    environments_root: Path | None,
    log: ProblemLog,
) -> Task:
    """Copy the verifier and initial state into the task folder when they are available."""
    folder = destination / "tasks" / task.id
    folder.mkdir(parents=True, exist_ok=True)
    updates: dict[str, Any] = {}
    if files.verifier is not None:
        shutil.copy2(files.verifier, folder / "verify.py")
        updates["verifier"] = VerifierRef(path="verify.py")
    if environments_root is not None:
        state = _copy_initial_state(files, environments_root, folder)
        if state is None:
            log.add(
                environments_root,
                f"no initial state for {files.service} environment {files.category!r} "
                "(expected a folder for filesystem, <category>.sql for postgres)",
                severity="warning",
            )
        else:
            updates["initial_state"] = state
    return task.model_copy(update=updates) if updates else task


def _copy_initial_state(
    files: TaskFiles, environments_root: Path, folder: Path
) -> InitialState | None:
    if files.service == "filesystem":
        tree = environments_root / files.category
        if not tree.is_dir():
            return None
        target = folder / "initial"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(tree, target, symlinks=True)  # copy2 keeps modification times
        return DirectoryTreeState(path="initial")
    seed = environments_root / f"{files.category}.sql"
    if not seed.is_file():
        return None
    shutil.copy2(seed, folder / "seed.sql")
    return SqlSeedState(path="seed.sql")
