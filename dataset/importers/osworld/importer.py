"""Converting OSWorld runs into tasks and trajectories, and writing them as a dataset.

Owns the import as a whole: which runs are taken (LibreOffice Impress, Writer and Calc tasks; a
bad run never stops the others), the ids of tasks and trajectories and their uniqueness (a
Windows variant gets ids of its own; two runs that would still share an id get distinct ones,
with a warning), whether an existing dataset may be added to (refused unless merging, and a
merge lists what it replaced), the label
(a human label file first, then AJ-Bench's ``true``/``false`` folder, then the recorded score),
the files a task's setup downloads (bundled when supplied locally, else reported as needed with
the way to supply them), and copying screenshots next to the trajectory.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
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
    OTHER_OSWORLD_DOMAINS,
    SetupFile,
    TaskConfig,
    application_for,
    find_task_file,
    names_windows,
    read_task_config,
)
from dataset.importers.source_files import (
    SourceFileError,
    copy_source_file,
    source_file_inside,
)
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
    "ExistingDatasetError",
    "ImportReport",
    "NeededFile",
    "import_osworld",
]

DEFAULT_MAX_STEPS = 15
"""OSWorld's default step cap per example, used when the task file sets none."""

TASK_FILES_DIR = "files"
"""Where a task's downloaded files are bundled, inside its task folder."""

_UNSAFE_ID_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


WINDOWS_SUFFIX = "__windows"
"""Added to the ids of a Windows variant, whose OSWorld ``id`` is its Linux task's."""


class ExistingDatasetError(Exception):
    """Raised, before anything is written, when the destination already holds a dataset and the
    import was not asked to merge into it."""


@dataclass(frozen=True)
class NeededFile:
    """A file a task's setup downloads that was not supplied, so its task cannot be replayed."""

    task_id: str
    """The task that needs it."""
    url: str
    """Where OSWorld downloaded it from."""
    path: str
    """Where it lay on the agent's desktop."""

    def file_option(self) -> str:
        """The exact ``--file`` option that supplies it, quoted for a shell."""
        value = f"{self.url}=LOCAL_PATH"
        return f"--file '{value}'" if "'" not in value else f"--file {shlex.quote(value)}"

    def how_to_supply(self) -> str:
        """The command-line options that would supply it."""
        name = PurePosixPath(self.path).name
        return f"{self.file_option()}, or put {name} in a --files-dir folder"


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
    replaced: list[str] = field(default_factory=list)
    """Files of an existing dataset this (merging) import wrote over, relative to it."""
    renamed: list[tuple[str, str]] = field(default_factory=list)
    """``(id it would have had, id given)`` for runs whose id another run already took."""
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
    existing: set[str] = field(default_factory=set)
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
    merge: bool = False,
) -> ImportReport:
    """Convert every OSWorld run folder (one holding ``traj.jsonl``) under ``sources`` into the
    dataset at ``destination``.

    ``tasks_root`` is OSWorld's ``evaluation_examples`` folder (task JSON files); without it a
    task JSON next to the run is used (AJ-Bench's layout). ``labels`` are human labels by run
    (its folder relative to its source, its example id or its trajectory id); they win over
    AJ-Bench's ``true``/``false`` folders, which win over ``result.txt`` (a score of at least
    ``pass_threshold`` is PASS, labelled by OSWorld's evaluator). ``files`` supplies downloaded
    files by URL, desktop path or file name; ``files_dir`` is a folder searched by file name.
    ``max_steps`` is the agents' step cap when the task file sets none. ``merge`` allows adding
    to a dataset that already exists at ``destination``; the report lists the files replaced.

    Raises ``ExistingDatasetError``, having written nothing, when ``destination`` holds a
    dataset and ``merge`` is false. Otherwise each record is written as soon as it is converted.
    """
    existing = _existing_files(destination)
    if existing and not merge:
        records = len(existing - {MANIFEST_FILE})
        raise ExistingDatasetError(
            f"{destination} already holds a dataset ({records} task and trajectory "
            "file(s)); nothing was imported. Pass --merge to add to it (runs and tasks with the "
            "same ids are replaced, and listed), or choose another folder"
        )
    log = ProblemLog(Path.cwd())
    options = _Options(
        log=log,
        labels=dict(labels or {}),
        files={key: Path(value) for key, value in (files or {}).items()},
        files_dir=files_dir,
        pass_threshold=pass_threshold,
        max_steps=max_steps,
        existing=existing,
    )
    found = find_run_folders(*sources)
    if not found:
        for source in sources:
            log.add(source, f"no OSWorld run folders (holding {TRAJECTORY_FILE}) found")
    runs = [run for run in (_read_run(s, f, tasks_root, log) for s, f in found) if run]
    report = ImportReport()
    _make_ids_distinct(runs, log, report)
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


def _existing_files(destination: Path) -> set[str]:
    """The task and trajectory files already in ``destination``, relative to it."""
    if not destination.is_dir():
        return set()
    found = {
        path.relative_to(destination).as_posix()
        for pattern in (f"{TASKS_DIR}/*/task.json", f"{TRAJECTORIES_DIR}/*.json")
        for path in destination.glob(pattern)
    }
    if (destination / MANIFEST_FILE).is_file():
        found.add(MANIFEST_FILE)
    return found


def _read_run(source: Path, folder: Path, tasks_root: Path | None, log: ProblemLog) -> _Run | None:
    place = run_place(source, folder)
    domain = (place.domain or "").lower()
    if domain in OTHER_OSWORLD_DOMAINS:
        reason = (
            "multi_apps tasks use several applications at once, and this runtime's desktops "
            "replay one LibreOffice application per task"
            if domain == "multi_apps"
            else f"domain {place.domain!r} is not a LibreOffice domain this runtime replays "
            f"({', '.join(OSWORLD_DOMAINS)})"
        )
        log.add(folder, f"{reason}; skipped", severity="warning")
        return None
    windows = names_windows(place.relative + "/x") or names_windows(source.name + "/x")
    task_file = find_task_file(place.example_id, place.domain, tasks_root, folder, windows=windows)
    if task_file is None:
        variant = "Windows variant's " if windows else ""
        hint = (
            f"no {variant}{place.example_id}.json under {tasks_root}"
            if tasks_root is not None
            else "pass --tasks-root (OSWorld's evaluation_examples folder)"
        )
        log.add(folder, f"no task JSON for example {place.example_id!r}: {hint}")
        return None
    config = read_task_config(task_file, place.example_id, log)
    if config is None:
        return None
    if tasks_root is not None and task_file.is_relative_to(tasks_root):
        config.windows = config.windows or names_windows(task_file.relative_to(tasks_root))
    config.windows = config.windows or windows
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
    task_id = _safe_id(config.example_id + (WINDOWS_SUFFIX if config.windows else ""))
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


def _make_ids_distinct(runs: list[_Run], log: ProblemLog, report: ImportReport) -> None:
    """Give a run whose trajectory id another run already took an id of its own (the first
    keeps it), with a warning naming both folders: a clash never stops the other runs."""
    first: dict[str, Path] = {}
    for run in runs:
        seen = first.setdefault(run.trajectory_id, run.place.folder)
        if seen == run.place.folder:
            continue
        digest = hashlib.sha256(str(run.place.folder).encode()).hexdigest()[:8]
        wanted, run.trajectory_id = run.trajectory_id, _safe_id(f"{run.trajectory_id}__{digest}")
        first[run.trajectory_id] = run.place.folder
        report.renamed.append((wanted, run.trajectory_id))
        log.add(
            run.place.folder,
            f"trajectory id {wanted!r} is already taken by the run in {seen}; this run is "
            f"imported as {run.trajectory_id!r}",
            severity="warning",
        )


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
    _note_replaced(f"{TRAJECTORIES_DIR}/{trajectory.id}.json", options, report)
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
            try:  # a file named on the command line stays inside its own folder
                source_file_inside(given, given.parent)
            except SourceFileError as error:
                options.log.add(given, f"--file for {key!r}: {error}", field="--file")
                return None
            return given
    folders = [options.files_dir] if options.files_dir is not None else []
    folders += [run.place.folder, run.place.folder.parent]
    url_name = PurePosixPath(item.url.split("?", 1)[0]).name
    for folder in folders:
        for name in dict.fromkeys((url_name, item.name)):
            candidate = folder / name
            if not name or "/" in name or not os.path.lexists(candidate):
                continue
            try:
                source_file_inside(candidate, folder)
            except SourceFileError as error:  # a link out of its folder is never read
                options.log.add(candidate, str(error), severity="warning")
                continue
            return candidate
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
    initial = _initial_state(run, needed, local_name)
    for missing in needed:
        options.log.add(
            config.file,
            f"task {run.task_id}: cannot replay: supply {missing.file_option()} (its setup "
            f"downloads that URL to {missing.path}; or put {PurePosixPath(missing.path).name} "
            "in a --files-dir folder)",
            field="config",
            severity="warning",
        )
    if config.unsupported_setup and not config.windows:
        options.log.add(
            config.file,
            f"task {run.task_id}: setup step(s) {', '.join(config.unsupported_setup)} are not "
            "supported by this runtime's desktops and are not carried out on replay, which may "
            "start from another state than the recorded run",
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
    if config.windows:
        metadata["osworld_platform"] = "windows"
    if config.unsupported_setup:
        metadata["osworld_setup_not_replayed"] = list(config.unsupported_setup)
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
    _note_replaced(f"{TASKS_DIR}/{task.id}/task.json", options, report)
    write_task(destination, task)
    report.tasks.append(task.id)
    return task


def _initial_state(run: _Run, needed: list[NeededFile], local_name: dict[str, str]) -> InitialState:
    """The task's document when it was supplied; else an external state saying why the task
    cannot be replayed and, for missing downloads, the exact ``--file`` options."""
    config = run.config
    document = config.document
    if config.windows:
        return ExternalState(
            reference=f"cannot replay: OSWorld task {config.example_id} is a Windows variant "
            "(from OSWorld's Windows VM), and this runtime's desktops run Linux"
        )
    if needed:
        supply = " ".join(missing.file_option() for missing in needed)
        return ExternalState(
            reference=f"cannot replay: supply {supply} (OSWorld task {config.example_id} "
            f"downloads {len(needed)} file(s) that were not given to the import)"
        )
    if document is not None and document in local_name:
        return DocumentState(
            path=f"{TASK_FILES_DIR}/{local_name[document]}",
            application=application_for(document, run.subdomain),
            open_at=document,
        )
    return ExternalState(
        reference=f"cannot replay: OSWorld task {config.example_id} opens no office "
        "document among its setup files"
    )


def _note_replaced(relative: str, options: _Options, report: ImportReport) -> None:
    if relative in options.existing:
        options.existing.discard(relative)  # replaced once, by this import
        report.replaced.append(relative)


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
