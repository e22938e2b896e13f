"""Converting OSWorld runs into tasks and trajectories, and writing them as a dataset.

Owns the import as a whole: which runs are taken (LibreOffice Impress, Writer and Calc tasks; a
bad run never stops the others), the ids of tasks and trajectories and their uniqueness (an
import that would write one trajectory id twice stops before writing anything), the label
(a human label file first, then AJ-Bench's ``true``/``false`` folder, then the recorded score),
the files a task's setup downloads (bundled when supplied locally, else reported as needed with
the way to supply them), and copying screenshots next to the trajectory.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from pydantic import JsonValue, ValidationError

from dataset.importers.osworld.discovery import (
    TRAJECTORY_FILE,
    RunPlace,
    find_run_folders,
    run_place,
)
from dataset.importers.osworld.labels import RecordedScore, read_score
from dataset.importers.osworld.steps import RecordedSteps, read_steps
from dataset.importers.osworld.task_config import (
    OSWORLD_DOMAINS,
    SetupFile,
    TaskConfig,
    application_for,
    find_task_file,
    read_task_config,
)
from dataset.importers.source_files import SourceFileError, copy_source_file
from dataset.models import (
    AgentStopReason,
    DocumentState,
    ExternalState,
    InitialState,
    Label,
    LabelValue,
    Observation,
    Provenance,
    Step,
    Task,
    Trajectory,
)
from dataset.problems import Problem, ProblemLog
from dataset.store import (
    MANIFEST_FILE,
    TASKS_DIR,
    TRAJECTORIES_DIR,
    Manifest,
    write_manifest,
    write_task,
    write_trajectory,
)

__all__ = [
    "DEFAULT_MAX_STEPS",
    "OSWORLD_DOMAINS",
    "DuplicateIdError",
    "ImportReport",
    "NeededFile",
    "import_osworld",
]

DEFAULT_MAX_STEPS = 15
"""OSWorld's default step cap per example, used when the task file sets none."""

TASK_FILES_DIR = "files"
"""Where a task's downloaded files are bundled, inside its task folder."""

_UNSAFE_ID_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


class DuplicateIdError(Exception):
    """Raised, before anything is written, when two runs would be written under one id."""

    def __init__(self, clashes: list[tuple[str, str, str]]) -> None:
        self.clashes = clashes
        lines = [f"  {tid}: {first} and {second}" for tid, first, second in clashes]
        super().__init__(
            f"{len(clashes)} trajectory id(s) would be written twice; nothing was imported:\n"
            + "\n".join(lines)
        )


@dataclass(frozen=True)
class NeededFile:
    """A file a task's setup downloads that was not supplied, so its task cannot be replayed."""

    task_id: str
    """The task that needs it."""
    url: str
    """Where OSWorld downloaded it from."""
    path: str
    """Where it lay on the agent's desktop."""

    def how_to_supply(self) -> str:
        """The command-line options that would supply it."""
        name = PurePosixPath(self.path).name
        return f"--file '{self.url}=LOCAL_PATH', or put {name} in a --files-dir folder"


@dataclass
class ImportReport:
    """What an import wrote and what it found wrong."""

    tasks: list[str] = field(default_factory=list)
    """Ids of the tasks written."""
    trajectories: list[str] = field(default_factory=list)
    """Ids of the trajectories written."""
    problems: list[Problem] = field(default_factory=list)
    """Every problem met, with the file and field it concerns."""
    by_subdomain: Counter[str] = field(default_factory=Counter)
    """Trajectories written per subdomain (``ppt``, ``word``, ``excel``)."""
    by_label_source: Counter[str] = field(default_factory=Counter)
    """Trajectories written per label source (``human``, ``verifier``, ``none``)."""
    needed_files: list[NeededFile] = field(default_factory=list)
    """Downloaded files that were not supplied (their tasks start from an external state)."""
    unused_labels: list[str] = field(default_factory=list)
    """Entries of the human label file that named no imported run."""


@dataclass
class _Run:
    place: RunPlace
    config: TaskConfig
    subdomain: str
    task_id: str
    trajectory_id: str


@dataclass
class _Options:
    log: ProblemLog
    labels: Mapping[str, LabelValue]
    files: Mapping[str, Path]
    files_dir: Path | None
    pass_threshold: float
    max_steps: int
    used_labels: set[str] = field(default_factory=set)


def import_osworld(
    sources: list[Path],
    destination: Path,
    *,
    tasks_root: Path | None = None,
    labels: Mapping[str, LabelValue] | None = None,
    files: Mapping[str, Path] | None = None,
    files_dir: Path | None = None,
    pass_threshold: float = 1.0,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> ImportReport:
    """Convert every OSWorld run folder (one holding ``traj.jsonl``) under ``sources`` into the
    dataset at ``destination``.

    ``tasks_root`` is OSWorld's ``evaluation_examples`` folder (task JSON files); without it a
    task JSON next to the run is used (AJ-Bench's layout). ``labels`` are human labels by run
    (its folder relative to its source, its example id or its trajectory id); they win over
    AJ-Bench's ``true``/``false`` folders, which win over ``result.txt`` (a score of at least
    ``pass_threshold`` is PASS, labelled by OSWorld's evaluator). ``files`` supplies downloaded
    files by URL, desktop path or file name; ``files_dir`` is a folder searched by file name.
    ``max_steps`` is the agents' step cap when the task file sets none.

    Raises ``DuplicateIdError``, having written nothing, when two runs would get one trajectory
    id. Otherwise each record is written as soon as it is converted.
    """
    log = ProblemLog(Path.cwd())
    options = _Options(
        log=log,
        labels=dict(labels or {}),
        files={key: Path(value) for key, value in (files or {}).items()},
        files_dir=files_dir,
        pass_threshold=pass_threshold,
        max_steps=max_steps,
    )
    found = find_run_folders(*sources)
    if not found:
        for source in sources:
            log.add(source, f"no OSWorld run folders (holding {TRAJECTORY_FILE}) found")
    runs = [run for run in (_read_run(s, f, tasks_root, log) for s, f in found) if run]
    _refuse_duplicate_ids(runs)

    report = ImportReport()
    written: dict[str, Task] = {}
    for run in runs:
        try:
            _import_run(run, destination, options, report, written)
        except Exception as error:  # a corrupt run must not stop the batch
            log.add(run.place.folder, f"could not be imported: {type(error).__name__}: {error}")
    report.unused_labels = sorted(set(options.labels) - options.used_labels)
    for key in report.unused_labels:
        log.add(
            Path(key), "the label file names no imported run", field="labels", severity="warning"
        )
    report.problems = log.problems
    return report


def _read_run(source: Path, folder: Path, tasks_root: Path | None, log: ProblemLog) -> _Run | None:
    place = run_place(source, folder)
    task_file = find_task_file(place.example_id, place.domain, tasks_root, folder)
    if task_file is None:
        hint = (
            f"no {place.example_id}.json under {tasks_root}"
            if tasks_root is not None
            else "pass --tasks-root (OSWorld's evaluation_examples folder)"
        )
        log.add(folder, f"no task JSON for example {place.example_id!r}: {hint}")
        return None
    config = read_task_config(task_file, place.example_id, log)
    if config is None:
        return None
    subdomain = (
        place.ajbench_app or OSWORLD_DOMAINS.get((place.domain or "").lower()) or config.subdomain
    )
    if subdomain is None:
        known = ", ".join(OSWORLD_DOMAINS)
        log.add(
            folder,
            f"domain {place.domain!r} is not a LibreOffice domain this runtime replays ({known}); "
            "skipped",
        )
        return None
    task_id = _safe_id(config.example_id)
    return _Run(place, config, subdomain, task_id, _trajectory_id(task_id, place))


def _trajectory_id(task_id: str, place: RunPlace) -> str:
    if place.folder_label is not None:
        # AJ-Bench: the folders differ by their label only, which an id must not spell out.
        digest = hashlib.sha256(place.relative.encode()).hexdigest()[:8]
        return _safe_id(f"{task_id}__ajbench-{digest}")
    parts = [task_id, place.model, place.action_space, place.observation_type]
    if not any(parts[1:]):
        parts.append("run-" + hashlib.sha256(place.relative.encode()).hexdigest()[:8])
    return _safe_id("__".join(part for part in parts if part))


def _refuse_duplicate_ids(runs: list[_Run]) -> None:
    first: dict[str, Path] = {}
    clashes: list[tuple[str, str, str]] = []
    for run in runs:
        seen = first.setdefault(run.trajectory_id, run.place.folder)
        if seen != run.place.folder:
            clashes.append((run.trajectory_id, str(seen), str(run.place.folder)))
    if clashes:
        raise DuplicateIdError(clashes)


def _import_run(
    run: _Run,
    destination: Path,
    options: _Options,
    report: ImportReport,
    written: dict[str, Task],
) -> None:
    log = options.log
    traj_file = run.place.folder / TRAJECTORY_FILE
    recorded = read_steps(traj_file, log, space_hint=run.place.action_space)
    if recorded is None:
        return
    if not recorded.steps and recorded.error is None:
        log.add(
            traj_file, "no steps recorded; imported as a zero-step trajectory", severity="warning"
        )
    for line in recorded.missing_screenshots:
        log.add(
            traj_file,
            f"line {line}: the screenshot file it names is missing",
            field="screenshot_file",
            severity="warning",
        )
    score = read_score(run.place.folder / "result.txt")
    label = _label(run, score, options)
    if not (destination / MANIFEST_FILE).exists():
        write_manifest(
            destination,
            Manifest(
                name=destination.name,
                description="Trajectories imported from OSWorld result folders.",
                generator="agentjudge datasets import-osworld",
            ),
        )
    task = written.get(run.task_id)
    if task is None:
        task = _write_task(run, destination, options, report)
        if task is None:
            return
        written[run.task_id] = task
    elif task.instruction != run.config.instruction:
        log.add(
            run.config.file,
            f"instruction differs from another run of task {task.id!r}; kept the first",
            field="instruction",
            severity="warning",
        )
    try:
        trajectory = _build_trajectory(run, recorded, label, score, destination, options)
    except ValidationError as error:
        log.add_validation_error(traj_file, error)
        return
    write_trajectory(destination, trajectory)
    report.trajectories.append(trajectory.id)
    report.by_subdomain[run.subdomain] += 1
    report.by_label_source[label.source if label else "none"] += 1


def _label(run: _Run, score: RecordedScore | str, options: _Options) -> Label | None:
    place = run.place
    for key in (place.relative, place.example_id, run.trajectory_id, str(place.folder)):
        given = options.labels.get(key)
        if given is not None:
            options.used_labels.add(key)
            return Label(value=given, source="human")
    if place.folder_label is not None:
        return Label.model_validate({"value": place.folder_label, "source": "human"})
    if isinstance(score, RecordedScore):
        value: LabelValue = "PASS" if score.score >= options.pass_threshold else "FAIL"
        return Label(
            value=value,
            source="verifier",
            verifier_output=f"OSWorld evaluator score {score.text} (PASS from "
            f"{options.pass_threshold:g})",
        )
    options.log.add(
        place.folder, f"no label: {score}, and no human label names this run", severity="warning"
    )
    return None


def _supplied(item: SetupFile, run: _Run, options: _Options) -> Path | None:
    """The local copy of a downloaded file, looked up in the order the options document."""
    for key in (item.url, item.path, item.name):
        given = options.files.get(key)
        if given is not None:
            if not given.is_file():
                options.log.add(given, f"--file for {key!r}: no such file", field="--file")
                return None
            return given
    folders = [options.files_dir] if options.files_dir is not None else []
    folders += [run.place.folder, run.place.folder.parent]
    url_name = PurePosixPath(item.url.split("?", 1)[0]).name
    for folder in folders:
        for name in dict.fromkeys((url_name, item.name)):
            if name and (folder / name).is_file():
                return folder / name
    return None


def _source_root(local: Path, run: _Run, options: _Options) -> Path:
    """The folder a supplied file must stay inside: the one it was found in, or, for a file
    named with ``--file``, its own folder."""
    for folder in (options.files_dir, run.place.folder.parent):
        if folder is not None and local.is_relative_to(folder):
            return folder
    return local.parent


def _write_task(
    run: _Run, destination: Path, options: _Options, report: ImportReport
) -> Task | None:
    config = run.config
    folder = destination / TASKS_DIR / run.task_id
    bundled: list[JsonValue] = []
    needed: list[NeededFile] = []
    local_name: dict[str, str] = {}
    for item in config.downloads:
        local = _supplied(item, run, options)
        if local is None:
            needed.append(NeededFile(task_id=run.task_id, url=item.url, path=item.path))
            continue
        name = _unique_name(item.name, set(local_name.values()))
        try:
            copy_source_file(
                local, _source_root(local, run, options), folder / TASK_FILES_DIR / name
            )
        except SourceFileError as error:
            options.log.add(local, str(error))
            needed.append(NeededFile(task_id=run.task_id, url=item.url, path=item.path))
            continue
        local_name[item.path] = name
        bundled.append({"file": f"{TASK_FILES_DIR}/{name}", "open_at": item.path, "url": item.url})
    document = config.document
    initial: InitialState
    if document is not None and document in local_name:
        initial = DocumentState(
            path=f"{TASK_FILES_DIR}/{local_name[document]}",
            application=application_for(document, run.subdomain),
            open_at=document,
        )
    else:
        wanted = ", ".join(f"{item.url} (at {item.path})" for item in needed) or "none named"
        reason = (
            f"the document {document} it opens"
            if document is not None
            else "no office document among its setup files"
        )
        initial = ExternalState(
            reference=f"OSWorld task {config.example_id}: {reason}; files not supplied: {wanted}"
        )
    for missing in needed:
        options.log.add(
            config.file,
            f"task {run.task_id}: its setup downloads {missing.url} to {missing.path}; supply "
            f"it with {missing.how_to_supply()} (until then the task cannot be replayed)",
            field="config",
            severity="warning",
        )
    report.needed_files.extend(needed)
    metadata: dict[str, JsonValue] = {
        "source": "osworld",
        "osworld_example_id": config.example_id,
        "osworld_task_file": config.file.name,
        "osworld_config": config.raw.get("config", []),
        "osworld_files": bundled,
    }
    for key in ("evaluator", "related_apps", "snapshot", "source", "trajectory"):
        if key in config.raw:
            metadata[f"osworld_{key}"] = config.raw[key]
    if needed:
        metadata["osworld_needed_files"] = [{"url": n.url, "path": n.path} for n in needed]
    try:
        task = Task(
            id=run.task_id,
            domain="gui",
            subdomain=run.subdomain,
            instruction=config.instruction,
            initial_state=initial,
            metadata=metadata,
        )
    except ValidationError as error:
        options.log.add_validation_error(config.file, error)
        return None
    write_task(destination, task)
    report.tasks.append(task.id)
    return task


def _unique_name(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    stem, suffix = PurePosixPath(name).stem, PurePosixPath(name).suffix
    number = 2
    while f"{stem}-{number}{suffix}" in taken:
        number += 1
    return f"{stem}-{number}{suffix}"


def _stop_reason(recorded: RecordedSteps, cap: int) -> AgentStopReason:
    if recorded.error is not None:
        return "error"
    if not recorded.steps:
        return "unknown"
    last = recorded.steps[-1]
    signal = getattr(last.action, "action_type", None) or getattr(last.action, "code", "")
    if str(signal).strip() in {"DONE", "FAIL"} or last.done:
        return "completed"
    if len(recorded.steps) >= cap:
        return "turn_limit"
    return "unknown"


def _build_trajectory(
    run: _Run,
    recorded: RecordedSteps,
    label: Label | None,
    score: RecordedScore | str,
    destination: Path,
    options: _Options,
) -> Trajectory:
    shots = destination / TRAJECTORIES_DIR / run.trajectory_id
    if shots.exists():
        shutil.rmtree(shots)
    steps: list[Step] = []
    first_with: dict[str, int] = {}
    for number, item in enumerate(recorded.steps, start=1):
        observation = None
        if item.screenshot is not None:
            shots.mkdir(parents=True, exist_ok=True)
            name = f"step_{number}{item.screenshot.suffix.lower() or '.png'}"
            copy_source_file(item.screenshot, run.place.folder, shots / name)
            observation = Observation(screenshot=f"{run.trajectory_id}/{name}")
        reasoning = item.response
        if reasoning is not None:
            earlier = first_with.setdefault(reasoning, number)
            if earlier != number:
                reasoning = f"(the same model answer as step {earlier}, which gave several actions)"
        steps.append(
            Step(
                index=number,
                action=item.action,
                observation=observation,
                reasoning=reasoning,
                started_at=item.started_at,
            )
        )
    place = run.place
    details: dict[str, JsonValue] = {
        "layout": "ajbench" if place.folder_label is not None else "osworld",
        "relative_folder": place.relative,
        "example_id": place.example_id,
    }
    for name in ("domain", "model", "observation_type"):
        value = getattr(place, name)
        if value is not None:
            details[name] = value
    space = recorded.action_space or place.action_space
    if space is not None:
        details["action_space"] = space
    if isinstance(score, RecordedScore):
        details["recorded_score"] = score.score
    if recorded.error is not None:
        details["run_error"] = recorded.error
    cap = run.config.max_steps or options.max_steps
    return Trajectory(
        id=run.trajectory_id,
        task_id=run.task_id,
        agent=f"osworld-agent ({place.model})" if place.model else "osworld-agent",
        model=place.model,
        steps=steps,
        label=label,
        stop_reason=_stop_reason(recorded, cap),
        turn_count=len(steps),
        started_at=steps[0].started_at if steps else None,
        provenance=Provenance(
            source_format="osworld", source_path=str(place.folder), details=details
        ),
        metadata={"error_message": recorded.error} if recorded.error else {},
    )


def _safe_id(raw: str) -> str:
    cleaned = _UNSAFE_ID_CHARS.sub("-", raw).strip("-._") or "unnamed"
    if len(cleaned) > 200:
        digest = hashlib.sha256(raw.encode()).hexdigest()[:12]
        cleaned = f"{cleaned[:187]}-{digest}"
    return cleaned
