"""The dataset format on disk: reading with full validation, and atomic writing.

Layout of a dataset folder::

    dataset.json                 manifest (format version, name, description)
    tasks/<task_id>/task.json    one Task; its id equals the folder name
    tasks/<task_id>/...          the initial state and verifier the task names
    assets/...                   optional files many tasks share (``dataset.assets``)
    trajectories/<id>.json       one Trajectory; its id equals the file name
    trajectories/<id>/...        optional per-trajectory files (screenshots)

Loading checks every file and cross-reference and reports every problem it finds; it raises
``DatasetError`` unless the caller asks for the valid part only. A file a record names (an initial
tree, a seed, a verifier, a screenshot) must stay inside its task's folder (``assets/`` for a
shared file, ``trajectories/`` for a screenshot)
once symbolic links are followed: a link leaving it is an error naming the link and its target,
so that no code or data from elsewhere on the machine is run or shown as the dataset's.
``check_dataset_folder`` tells a missing or unreadable dataset path apart from a broken dataset.
Files are written atomically through ``storage.files``; results files (replay reports, verdicts)
are not this module's.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from dataset.assets import state_file, state_file_folder
from dataset.models import InitialState, Task, Trajectory
from dataset.problems import DatasetError, Problem, ProblemLog
from storage.files import write_json_atomic

__all__ = [
    "FORMAT_VERSION",
    "MANIFEST_FILE",
    "RECORD_MODELS",
    "TASKS_DIR",
    "TASK_FILE",
    "TRAJECTORIES_DIR",
    "Dataset",
    "DatasetNotFoundError",
    "Manifest",
    "check_dataset_folder",
    "count_by",
    "find_datasets",
    "load_dataset",
    "write_manifest",
    "write_task",
    "write_trajectory",
]

FORMAT_VERSION: Literal[1] = 1
MANIFEST_FILE = "dataset.json"
TASKS_DIR = "tasks"
TASK_FILE = "task.json"
TRAJECTORIES_DIR = "trajectories"


class Manifest(BaseModel):
    """The ``dataset.json`` file that marks a folder as a dataset."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    format_version: Literal[1] = FORMAT_VERSION
    """Version of this on-disk format."""

    name: str = Field(min_length=1)
    """Short name shown in listings and reports."""

    description: str = ""
    """What the dataset contains and how it was made."""

    generator: str | None = None
    """The program that wrote it (an importer, a suite generator), if not written by hand."""

    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    """Free-form facts about the dataset."""


RECORD_MODELS: dict[str, type[BaseModel]] = {
    "manifest": Manifest,
    "task": Task,
    "trajectory": Trajectory,
}
"""The models behind the dataset's three kinds of JSON file, by name."""


@dataclass
class Dataset:
    """A loaded dataset: the records that validated, plus every problem found."""

    root: Path
    """The dataset folder."""

    manifest: Manifest | None
    """The manifest, if it validated."""

    tasks: dict[str, Task] = field(default_factory=dict)
    """Valid tasks by id."""

    trajectories: dict[str, Trajectory] = field(default_factory=dict)
    """Valid trajectories whose task is valid, by id."""

    problems: list[Problem] = field(default_factory=list)
    """Everything wrong or suspicious, errors and warnings."""

    @property
    def errors(self) -> list[Problem]:
        """Only the problems of severity ``error``."""
        return [problem for problem in self.problems if problem.severity == "error"]

    def task_dir(self, task_id: str) -> Path:
        """The folder of a task, where its initial state and verifier live."""
        return self.root / TASKS_DIR / task_id

    def trajectory_dir(self) -> Path:
        """The folder trajectory files and their screenshots are relative to."""
        return self.root / TRAJECTORIES_DIR


class DatasetNotFoundError(DatasetError):
    """The dataset path does not exist, is not a folder, or cannot be read; the message names
    the path and says which."""

    def __init__(self, root: Path, reason: str) -> None:
        self.root = root
        self.problems = [Problem(file=str(root), message=reason)]
        Exception.__init__(self, f"{root}: {reason}")


def _folder_problem(root: Path) -> str | None:
    """Why ``root`` cannot be read as a dataset folder, or None when it can be listed."""
    try:
        with os.scandir(root):
            return None
    except FileNotFoundError:
        return "no such dataset folder (the path does not exist)"
    except NotADirectoryError:
        return "is not a dataset folder (it is a file, not a folder)"
    except OSError as error:
        return f"the dataset folder cannot be read: {error.strerror or error}"


def check_dataset_folder(root: Path | str) -> None:
    """Raise ``DatasetNotFoundError`` when ``root`` does not exist, is not a folder, or cannot
    be listed; commands call it before any work so that a typo is not a half-run."""
    root = Path(root)
    problem = _folder_problem(root)
    if problem is not None:
        raise DatasetNotFoundError(root, problem)


def load_dataset(root: Path | str, *, partial: bool = False) -> Dataset:
    """Read and validate a dataset folder.

    With ``partial=False`` any error raises ``DatasetError`` listing all of them; with
    ``partial=True`` the valid records are returned and the problems ride along in
    ``Dataset.problems``.
    """
    root = Path(root)
    log = ProblemLog(root)
    dataset = Dataset(root=root, manifest=None)
    unreadable = _folder_problem(root)
    if unreadable is not None:
        log.add(root, unreadable)
        dataset.problems = log.problems
        if partial:
            return dataset
        raise DatasetError(log.problems)

    dataset.manifest = _load_manifest(root, log)
    invalid_tasks = _load_tasks(root, log, dataset)
    _load_trajectories(root, log, dataset, invalid_tasks)

    dataset.problems = log.problems
    if log.errors and not partial:
        raise DatasetError(log.problems)
    return dataset


def _load_manifest(root: Path, log: ProblemLog) -> Manifest | None:
    path = root / MANIFEST_FILE
    raw = log.read_json(path)
    if raw is None:
        return None
    try:
        return Manifest.model_validate(raw)
    except ValidationError as error:
        log.add_validation_error(path, error)
        return None


def _load_tasks(root: Path, log: ProblemLog, dataset: Dataset) -> set[str]:
    """Load every task folder; return the names of folders whose task did not validate."""
    tasks_root = root / TASKS_DIR
    invalid: set[str] = set()
    if not tasks_root.is_dir():
        log.add(tasks_root, "folder is missing: a dataset keeps its tasks under tasks/<id>/")
        return invalid
    for entry in sorted(tasks_root.iterdir()):
        if not entry.is_dir():
            log.add(entry, "unexpected file: tasks/ holds one folder per task", severity="warning")
            continue
        path = entry / TASK_FILE
        raw = log.read_json(path)
        if raw is None:
            invalid.add(entry.name)
            continue
        try:
            task = Task.model_validate(raw)
        except ValidationError as error:
            log.add_validation_error(path, error)
            invalid.add(entry.name)
            continue
        problems_before = len(log.errors)
        if task.id != entry.name:
            log.add(path, f"id {task.id!r} differs from its folder name {entry.name!r}", field="id")
        _check_task_files(root, entry, path, task, log)
        if len(log.errors) > problems_before:
            invalid.add(entry.name)
        else:
            dataset.tasks[task.id] = task
    return invalid


def _check_task_files(
    root: Path, task_dir: Path, task_file: Path, task: Task, log: ProblemLog
) -> None:
    _check_state_files(root, task_dir, task_file, task.initial_state, "initial_state", log)
    if task.verifier is not None:
        verifier = task_dir / task.verifier.path
        _check_exists(root, verifier, "file", task_file, "verifier.path", log, task_dir)


def _check_state_files(
    root: Path,
    task_dir: Path,
    named_in: Path,
    state: InitialState,
    field_name: str,
    log: ProblemLog,
) -> None:
    """Check that the files an initial state names exist inside its task's folder (or, for a
    ``dataset:`` name, inside the dataset's ``assets/``)."""
    for named in state.files():
        where = f"{field_name}.{named.field}"
        target = state_file(task_dir, named.path)
        folder = state_file_folder(task_dir, named.path)
        _check_exists(root, target, named.expected, named_in, where, log, folder)


def _check_exists(
    root: Path,
    target: Path,
    expected: Literal["dir", "file", "any"],
    named_in: Path,
    field_name: str,
    log: ProblemLog,
    folder: Path,
) -> None:
    """Check that ``target`` (a path below the dataset ``root``) exists as ``expected`` and,
    symbolic links followed, stays inside ``folder`` (its task's folder, ``assets/`` or
    ``trajectories/``)."""
    shown = log.display(target)
    escape = _link_escape(root, target, folder)
    if escape is not None:
        link, destination = escape
        via = "which" if link == target else f"but {log.display(link)}"
        log.add(
            named_in,
            f"names {shown}, {via} is a symbolic link to {destination}, outside "
            f"{log.display(folder)}/: files a dataset names must be inside it",
            field=field_name,
        )
    elif not target.exists():
        log.add(named_in, f"names {shown}, which does not exist", field=field_name)
    elif expected == "dir" and not target.is_dir():
        log.add(named_in, f"names {shown}, which is not a folder", field=field_name)
    elif expected == "file" and not target.is_file():
        log.add(named_in, f"names {shown}, which is not a file", field=field_name)


def _link_escape(root: Path, target: Path, folder: Path) -> tuple[Path, str] | None:
    """The symbolic link through which ``target`` leaves ``folder``, and where it points (its
    text, and what it resolves to when that differs); None when ``target`` stays inside.

    ``folder`` counts as the dataset names it (``<root>/tasks/<id>``), so a task folder or a
    ``tasks/`` that is itself a link elsewhere is reported as that link. Only the dataset root
    may be reached through a link.
    """
    allowed = Path(os.path.realpath(root)) / folder.relative_to(root)
    resolved = Path(os.path.realpath(target))
    if resolved.is_relative_to(allowed):
        return None
    step = root
    for part in target.relative_to(root).parts:
        step = step / part
        if not step.is_symlink():
            continue
        lands = Path(os.path.realpath(step))
        if lands.is_relative_to(allowed):
            continue  # a link that stays inside (e.g. initial -> initial-v2)
        text = os.readlink(step)
        return step, text if Path(text) == lands else f"{text} (which is {lands})"
    return target, str(resolved)


def _load_trajectories(
    root: Path, log: ProblemLog, dataset: Dataset, invalid_tasks: set[str]
) -> None:
    folder = root / TRAJECTORIES_DIR
    if not folder.is_dir():
        log.add(folder, "folder is missing: a dataset keeps trajectories/<id>.json files")
        return
    for path in sorted(folder.iterdir()):
        if path.is_dir():
            continue  # per-trajectory attachments; checked through the steps that name them
        if path.suffix != ".json":
            log.add(
                path, "unexpected file: trajectories/ holds <id>.json files", severity="warning"
            )
            continue
        raw = log.read_json(path)
        if raw is None:
            continue
        try:
            trajectory = Trajectory.model_validate(raw)
        except ValidationError as error:
            log.add_validation_error(path, error)
            continue
        problems_before = len(log.errors)
        if trajectory.id != path.stem:
            log.add(
                path, f"id {trajectory.id!r} differs from its file name {path.name!r}", field="id"
            )
        if trajectory.task_id in invalid_tasks:
            log.add(
                path,
                f"task {trajectory.task_id!r} is invalid (see its own problems)",
                field="task_id",
            )
        elif trajectory.task_id not in dataset.tasks:
            log.add(
                path,
                f"task {trajectory.task_id!r} does not exist in {TASKS_DIR}/",
                field="task_id",
            )
        task = dataset.tasks.get(trajectory.task_id)
        if task is not None and trajectory.initial_state is not None:
            _check_own_state(root, path, trajectory.initial_state, task, log)
        _check_screenshots(root, folder, path, trajectory, log)
        _warn_about_label(path, trajectory, dataset, log)
        if len(log.errors) == problems_before:
            dataset.trajectories[trajectory.id] = trajectory


def _check_screenshots(
    root: Path, folder: Path, path: Path, trajectory: Trajectory, log: ProblemLog
) -> None:
    for position, step in enumerate(trajectory.steps):
        if step.observation is None:
            continue
        shots = [("screenshot", step.observation.screenshot)] + [
            (f"screenshot_variants[{number}]", variant)
            for number, variant in enumerate(step.observation.screenshot_variants or [])
        ]
        for name, shot in shots:
            if shot is not None:
                where = f"steps[{position}].observation.{name}"
                _check_exists(root, folder / shot, "file", path, where, log, folder)


def _check_own_state(
    root: Path, path: Path, state: InitialState, task: Task, log: ProblemLog
) -> None:
    """A trajectory's own starting state: of the same kind as its task's, files in its task's
    folder."""
    if task.initial_state.kind not in (state.kind, "empty"):
        log.add(
            path,
            f"starts from a {state.kind} state, but task {task.id!r} starts from a"
            f" {task.initial_state.kind} state: a run's own state may only vary its task's",
            field="initial_state.kind",
        )
        return
    task_dir = root / TASKS_DIR / task.id
    _check_state_files(root, task_dir, path, state, "initial_state", log)


def _warn_about_label(
    path: Path, trajectory: Trajectory, dataset: Dataset, log: ProblemLog
) -> None:
    task = dataset.tasks.get(trajectory.task_id)
    label = trajectory.label
    if label is None and not trajectory.items:
        log.add(
            path, "no label: it can be judged but not scored", field="label", severity="warning"
        )
    elif (
        label is not None
        and label.source == "verifier"
        and task is not None
        and task.verifier is None
    ):
        log.add(
            path,
            f"labelled by a verifier, but task {task.id!r} ships none",
            field="label.source",
            severity="warning",
        )


def count_by(
    dataset: Dataset,
) -> list[tuple[str, str, int, int, int]]:
    """Trajectory counts as rows ``(domain, subdomain, PASS, FAIL, unlabelled)``, sorted."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for trajectory in dataset.trajectories.values():
        task = dataset.tasks[trajectory.task_id]
        label = trajectory.label.value if trajectory.label else "unlabelled"
        counts[(task.domain, task.subdomain, label)] += 1
    groups = sorted({(domain, subdomain) for domain, subdomain, _ in counts})
    return [
        (
            domain,
            subdomain,
            counts[(domain, subdomain, "PASS")],
            counts[(domain, subdomain, "FAIL")],
            counts[(domain, subdomain, "unlabelled")],
        )
        for domain, subdomain in groups
    ]


def find_datasets(*search_roots: Path) -> list[Path]:
    """Dataset folders (those with a manifest) at or up to three levels below the given roots."""
    found: set[Path] = set()
    for search_root in search_roots:
        if not search_root.is_dir():
            continue
        for depth in range(4):
            pattern = "/".join(["*"] * depth + [MANIFEST_FILE])
            found.update(path.parent.resolve() for path in search_root.glob(pattern))
    return sorted(found)


# --- writing ----------------------------------------------------------------------------------


def _dump(model: BaseModel) -> object:
    return model.model_dump(mode="json", exclude_none=True)


def write_manifest(root: Path, manifest: Manifest) -> Path:
    """Write ``dataset.json``; returns its path."""
    path = root / MANIFEST_FILE
    write_json_atomic(path, _dump(manifest))
    return path


def write_task(root: Path, task: Task) -> Path:
    """Write a task's ``task.json`` into its folder (created if needed); returns the folder."""
    folder = root / TASKS_DIR / task.id
    write_json_atomic(folder / TASK_FILE, _dump(task))
    return folder


def write_trajectory(root: Path, trajectory: Trajectory) -> Path:
    """Write one trajectory file; returns its path."""
    path = root / TRAJECTORIES_DIR / f"{trajectory.id}.json"
    write_json_atomic(path, _dump(trajectory))
    return path
