"""MCPMark's task folders and initial environments, and bundling them into an imported task.

Owns finding a run's task folder under MCPMark's ``tasks/`` and copying into the dataset's task
folder what a verifier or an environment preparation may read: ``verify.py``, every other file
of the task folder (``customer_data.pkl``, ``prepare_environment.py``, ...) next to it, and the
initial state. What is never copied: ``description.md`` and ``meta.json`` (they become the task's
instruction and metadata) and the task author's answer files (``ground_truth*``), so that no
tool of a judge can ever reach them.

Initial states are looked up, first match wins: an explicit mapping for the task
(``--environment``: the prepared state itself); for Postgres ``<root>/<category>/<task>`` then
``<root>/<category>``, each as ``.sql`` (plain SQL) or ``.backup``/``.dump`` (a ``pg_dump``
archive); for filesystem the ``<root>/<category>/`` tree. A Postgres task with a preparation
script (``prepare_environment.py``) starts from the seed found, or an empty database, and runs
the script on it at replay, as MCPMark does. All inputs are optional: without them a task keeps
its recorded instruction and an external initial state.
"""

from __future__ import annotations

import fnmatch
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dataset.importers.mcpmark.discovery import RunKey
from dataset.models import (
    PG_DUMP_MAGIC,
    DirectoryTreeState,
    InitialState,
    SqlSeedState,
    Task,
    VerifierRef,
)
from dataset.problems import ProblemLog
from dataset.store import TASK_FILE

ANSWER_FILES = ("ground_truth*",)
"""Name patterns of the task author's answers: never copied into a dataset."""

PREPARATION_SCRIPT = "prepare_environment.py"
"""MCPMark's script that builds a task's database or tree before the agent starts."""

_NOT_EXTRA = {"description.md", "meta.json", "verify.py"}
_SKIPPED_PARTS = {"__pycache__", ".git"}
SEED_SUFFIXES = (".sql", ".backup", ".dump")
"""The file names a Postgres initial state may have under an environments root: plain SQL, or a
``pg_dump`` archive (told apart by their first bytes, not their names)."""

_RESERVED = {TASK_FILE, "seed.sql", "seed.dump", "initial"}  # names the dataset's own files take


@dataclass
class TaskFiles:
    """The files MCPMark has for one task, where they were found."""

    service: str
    """The task family (``filesystem``, ``postgres``)."""
    category: str
    task: str
    folder: Path | None = None
    verifier: Path | None = None
    description: Path | None = None
    extras: list[Path] = field(default_factory=list)
    """Other files of the task folder to copy next to the verifier, relative to ``folder``."""
    withheld: list[Path] = field(default_factory=list)
    """Answer files of the task folder that are not copied, relative to ``folder``."""

    @property
    def preparation(self) -> str | None:
        """The preparation script's path in the task folder, when the task has one."""
        names = {path.as_posix() for path in self.extras}
        return PREPARATION_SCRIPT if PREPARATION_SCRIPT in names else None


class TaskFolders:
    """The task folders under MCPMark's ``tasks/`` (none without one), looked up once per task."""

    def __init__(self, tasks_root: Path | None, log: ProblemLog) -> None:
        self.tasks_root = tasks_root
        self.log = log
        self._found: dict[tuple[str, str, str, str], Path | None] = {}
        self._refused: set[Path] = set()

    def files_for(self, key: RunKey) -> TaskFiles:
        """The description, verifier and other files of the run's task, where they exist."""
        family = key.service.family if key.service else key.mcp
        files = TaskFiles(service=family, category=key.category, task=key.task)
        if self.tasks_root is None:
            return files
        cache_key = (key.mcp, family, key.category, key.task)
        if cache_key not in self._found:  # look up (and warn) once per task, not per run
            self._found[cache_key] = _find_task_folder(self.tasks_root, key, family, self.log)
        folder = self._found[cache_key]
        if folder is None:
            return files
        files.folder = folder
        if _regular_inside(folder / "description.md", folder):
            files.description = folder / "description.md"
        if _regular_inside(folder / "verify.py", folder):
            files.verifier = folder / "verify.py"
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder)
            if not path.is_file() or _SKIPPED_PARTS.intersection(relative.parts):
                continue
            if not _regular_inside(path, folder):
                if path not in self._refused:  # said once, not for every run of the task
                    self._refused.add(path)
                    self.log.add(
                        path,
                        "not copied: a link leading out of the task folder",
                        severity="warning",
                    )
                continue
            if path.suffix == ".pyc" or relative.as_posix() in _NOT_EXTRA:
                continue
            if any(fnmatch.fnmatch(path.name.lower(), pattern) for pattern in ANSWER_FILES):
                files.withheld.append(relative)
            else:
                files.extras.append(relative)
        return files


def _regular_inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is a regular file that lies inside ``folder`` once links are followed
    (a task folder's link to a file elsewhere is never copied into a dataset)."""
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return False
    return resolved.is_file() and resolved.is_relative_to(folder.resolve())


def _find_task_folder(tasks_root: Path, key: RunKey, family: str, log: ProblemLog) -> Path | None:
    patterns = [
        f"{key.mcp}/*/{key.category}/{key.task}",
        f"{family}/*/{key.category}/{key.task}",
        f"*/{key.category}/{key.task}",
        f"{key.category}/{key.task}",
    ]
    for pattern in dict.fromkeys(patterns):
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
        f"no task folder for {family} {key.category}/{key.task}; used the recorded "
        "user message as instruction and no verifier",
        severity="warning",
    )
    return None


class Environments:
    """Where initial states come from: explicit per-task paths, then an environments root."""

    def __init__(
        self, root: Path | None, explicit: Mapping[str, Path] | None, log: ProblemLog
    ) -> None:
        self.root = root
        self.explicit = dict(explicit or {})
        self.used: set[str] = set()
        self.log = log

    def explicit_for(self, files: TaskFiles, task_id: str) -> Path | None:
        """The path given for this task, by ``<category>/<task>``, ``<category>__<task>`` or
        task id."""
        for name in (f"{files.category}/{files.task}", f"{files.category}__{files.task}", task_id):
            if name in self.explicit:
                self.used.add(name)
                return self.explicit[name]
        return None

    def candidates(self, files: TaskFiles, task_id: str) -> list[tuple[Path, bool]]:
        """Every place the task's initial state may be, in the order they are tried, each with
        whether it was given explicitly for this task."""
        explicit = self.explicit_for(files, task_id)
        found = [(explicit, True)] if explicit is not None else []
        if self.root is not None:
            if files.service == "filesystem":
                found.append((self.root / files.category, False))
            else:
                for stem in (self.root / files.category / files.task, self.root / files.category):
                    found.extend(
                        (stem.with_name(stem.name + suffix), False) for suffix in SEED_SUFFIXES
                    )
        return found

    def unused(self) -> list[str]:
        """Explicit mappings that no imported task used."""
        return sorted(set(self.explicit) - self.used)


def bundle_task_files(
    task: Task, files: TaskFiles, destination: Path, environments: Environments, log: ProblemLog
) -> Task:
    """Copy the verifier, the task folder's other files and the initial state into the task
    folder of the dataset, when they are available."""
    folder = destination / "tasks" / task.id
    folder.mkdir(parents=True, exist_ok=True)
    updates: dict[str, Any] = {}
    metadata = dict(task.metadata)
    if files.verifier is not None:
        shutil.copy2(files.verifier, folder / "verify.py")
        updates["verifier"] = VerifierRef(path="verify.py")
    copied = _copy_extras(files, folder, log)
    if copied:
        metadata["mcpmark_files"] = list(copied)
    if files.preparation is not None and files.preparation in copied:
        metadata["mcpmark_preparation"] = files.preparation
    if files.withheld:
        metadata["mcpmark_withheld"] = [path.as_posix() for path in files.withheld]
    candidates = environments.candidates(files, task.id)
    state = _copy_initial_state(files, candidates, folder, log)
    if state is not None:
        updates["initial_state"] = state
    elif files.service != "filesystem" and files.preparation is not None:
        # MCPMark's own case (security): an empty database that the script prepares.
        updates["initial_state"] = SqlSeedState(path=None, preparation=files.preparation)
    elif candidates and not candidates[0][1]:
        tried = ", ".join(dict.fromkeys(_shown(path, files) for path, _ in candidates))
        log.add(
            environments.root or candidates[0][0],
            f"no initial state for {files.service} task {files.category}/{files.task} "
            f"(tried {tried}); it stays external",
            severity="warning",
        )
    updates["metadata"] = metadata
    return task.model_copy(update=updates)


def _shown(path: Path, files: TaskFiles) -> str:
    """A place an initial state was looked for; a Postgres seed's with all its suffixes."""
    if files.service == "filesystem" or path.suffix not in SEED_SUFFIXES:
        return str(path)
    return f"{path.with_suffix('')}{{{','.join(SEED_SUFFIXES)}}}"


def _copy_extras(files: TaskFiles, folder: Path, log: ProblemLog) -> list[str]:
    copied: list[str] = []
    if files.folder is None:
        return copied
    for relative in files.extras:
        if relative.parts[0] in _RESERVED:
            log.add(
                files.folder / relative,
                f"not copied: {relative.parts[0]!r} is the name of the dataset's own file",
                severity="warning",
            )
            continue
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(files.folder / relative, target)
        copied.append(relative.as_posix())
    return copied


def _copy_initial_state(
    files: TaskFiles, candidates: list[tuple[Path, bool]], folder: Path, log: ProblemLog
) -> InitialState | None:
    for source, explicit in candidates:
        usable = source.is_dir() if files.service == "filesystem" else source.is_file()
        if explicit and not usable:  # what the user named must be used, or be an error
            wanted = (
                "a folder" if files.service == "filesystem" else "an SQL file or pg_dump archive"
            )
            log.add(
                source,
                f"the initial state given for {files.category}/{files.task} is "
                f"{'missing' if not source.exists() else 'not ' + wanted}: a {files.service} "
                f"task starts from {wanted}",
                field="--environment",
            )
            return None
        if not usable:
            continue
        if files.service == "filesystem":
            target = folder / "initial"
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(source, target, symlinks=True)  # copy2 keeps modification times
            return DirectoryTreeState(path="initial")
        with source.open("rb") as seed:
            name = "seed.dump" if seed.read(len(PG_DUMP_MAGIC)) == PG_DUMP_MAGIC else "seed.sql"
        shutil.copy2(source, folder / name)
        # A state given for the task is the prepared database; one found by name is the
        # category's, on which MCPMark runs the task's preparation.
        return SqlSeedState(path=name, preparation=None if explicit else files.preparation)
    return None
