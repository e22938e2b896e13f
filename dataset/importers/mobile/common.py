"""What every mobile-domain importer shares: the run it reads, and writing runs as a dataset.

Owns ``SourceRun`` (one recorded run as a source describes it: the instruction, the screens
*before* each action, the actions, the agent and the source benchmark), ``Screen`` (one screen's
image, as a file, bytes or a pixel array, and its UI element list), task and trajectory ids
(one task per source benchmark and task, so a task carries all its agents' runs), copying
screenshots into the dataset, applying annotator votes (``dataset.importers.mobile.labels``),
and ``write_runs``, which writes what converted and reports what did not, naming the file.

The source benchmark and the agent are kept where the report groups by them:
``Trajectory.metadata["benchmark"]``, ``Trajectory.agent`` and ``Trajectory.model``, and the
task's ``metadata["benchmark"]``.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import JsonValue, ValidationError

from dataset.actions import Action
from dataset.frames import INITIAL_OBSERVATION_KEY
from dataset.importers.mobile.labels import Votes, vote_label
from dataset.models import (
    AgentStopReason,
    ExternalState,
    Label,
    LabelSource,
    Observation,
    Provenance,
    Step,
    Task,
    Trajectory,
)
from dataset.problems import Problem, ProblemLog
from dataset.screenshots import image_mime_type
from dataset.store import (
    MANIFEST_FILE,
    TASK_FILE,
    TASKS_DIR,
    TRAJECTORIES_DIR,
    Manifest,
    write_manifest,
    write_task,
    write_trajectory,
)

__all__ = [
    "BENCHMARK_KEY",
    "ImportSummary",
    "Screen",
    "SourceRun",
    "first_text",
    "safe_id",
    "write_runs",
]

BENCHMARK_KEY = "benchmark"
"""``metadata`` key of the source benchmark, on tasks and trajectories."""


@dataclass
class Screen:
    """One recorded screen: its image and what the agent could read of it."""

    image: Path | bytes | list[JsonValue] | Any | None = None
    """A file, encoded image bytes, or a pixel array (rows of [r, g, b], or a numpy array of
    rows x columns x 3 or 4); None: not recorded."""
    ui_elements: str | None = None
    """The UI element list (or accessibility tree) as text."""
    url: str | None = None
    """The page address, for web trajectories."""


@dataclass
class SourceRun:
    """One run as read from a source, before it becomes a ``Trajectory``."""

    source_format: str
    """The importer (``androidworld``, ``spa-bench``, ``a3``, ``agentrewardbench``)."""
    source_path: Path
    """The file or folder it came from."""
    source_key: str
    """The run's name within its source (what a labels file may name it by)."""
    benchmark: str
    """The benchmark the task comes from (``androidworld``, ``spa-bench``, ``webarena``, ...)."""
    task_name: str
    """The task's name in its benchmark (runs of one task share it)."""
    instruction: str
    """The goal as the agent received it."""
    agent: str
    """The agent (policy or framework)."""
    model: str | None
    """The model behind the agent."""
    actions: Sequence[tuple[Action, str | None]]
    """Each action with the agent's reasoning for it."""
    screens: list[Screen]
    """The screen before each action, in order; one more is the screen after the last."""
    label: Literal["PASS", "FAIL"] | None = None
    """The source's own outcome, if it records one."""
    label_source: LabelSource = "verifier"
    """Who decided the source's outcome."""
    domain: Literal["mobile", "gui"] = "mobile"
    """``mobile`` for device runs, ``gui`` for web runs."""
    subdomain: str = "android"
    """``android``, or ``web`` for web runs."""
    final_response: str | None = None
    """The agent's last message, if any."""
    details: dict[str, JsonValue] = field(default_factory=dict)
    """Source facts with no field of their own."""
    stop_reason: AgentStopReason | None = None
    """How the run ended, when the source says (else from its last action)."""
    error: str | None = None
    """The error that ended the run, for a run that crashed."""


@dataclass
class ImportSummary:
    """What an import wrote and what it could not."""

    tasks: list[str] = field(default_factory=list)
    trajectories: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    by_benchmark: dict[str, int] = field(default_factory=dict)
    labelled_by_vote: int = 0
    by_label_source: dict[str, int] = field(default_factory=dict)


def safe_id(raw: str, limit: int = 120) -> str:
    """``raw`` as an identifier (letters, digits, ``.``, ``_``, ``-``); long ones keep a hash."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-._") or "x"
    if len(cleaned) > limit:
        digest = hashlib.sha256(raw.encode()).hexdigest()[:10]
        cleaned = cleaned[: limit - 11].rstrip("-._") + "-" + digest
    return cleaned


def _image_bytes(image: Path | bytes | list[JsonValue] | Any) -> tuple[bytes, str]:
    """The image as file bytes and an extension (pixel arrays become PNG)."""
    if isinstance(image, Path):
        if image.is_symlink() or not image.is_file():
            raise ValueError(f"screenshot {image} is not a regular file (links are not copied)")
        data = image.read_bytes()
        return data, image.suffix.lower() or ".png"
    if isinstance(image, bytes):
        kind = image_mime_type(image, Path("x"))
        if not kind.startswith("image/"):
            raise ValueError("the embedded screenshot is not an image")
        return image, "." + kind.removeprefix("image/").replace("jpeg", "jpg")
    import numpy as np
    from PIL import Image

    array = np.asarray(image, dtype=np.uint8)
    if array.ndim != 3 or array.shape[2] not in (3, 4):
        raise ValueError(f"a pixel array must be rows x columns x 3 or 4, got {array.shape}")
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG")
    return buffer.getvalue(), ".png"


def _observation(
    screen: Screen | None, folder: Path, name: str, relative_to: Path
) -> Observation | None:
    if screen is None:
        return None
    shot: str | None = None
    if screen.image is not None:
        data, extension = _image_bytes(screen.image)
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{name}{extension}"
        target.write_bytes(data)
        shot = target.relative_to(relative_to).as_posix()
    if shot is None and not screen.ui_elements and not screen.url:
        return None
    return Observation(screenshot=shot, accessibility_tree=screen.ui_elements, url=screen.url)


class _TaskIds:
    """Task ids by (benchmark, task name), one per instruction: a second instruction under the
    same name (another instance of a task template, with another goal) gets its own task, never
    the first one's. Tasks already in the destination count."""

    def __init__(self, destination: Path) -> None:
        self.instructions: dict[str, str] = {}
        for path in (destination / TASKS_DIR).glob(f"*/{TASK_FILE}"):
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
                self.instructions[path.parent.name] = str(record.get("instruction"))
            except (OSError, ValueError, AttributeError):
                continue

    def resolve(self, run: SourceRun) -> str:
        base = safe_id(f"{run.benchmark}--{run.task_name}")
        known = self.instructions.get(base)
        if known is None or known == run.instruction:
            return base
        digest = hashlib.sha256(run.instruction.encode()).hexdigest()[:8]
        return safe_id(f"{base}--{digest}")

    def claim(self, task_id: str, instruction: str) -> None:
        self.instructions[task_id] = instruction


def _trajectory_id(
    run: SourceRun, task_id: str, taken: set[str], earlier: dict[str, tuple[str, str]]
) -> str:
    """A fresh id; an id an earlier import gave to another run is taken, while the same run
    imported again keeps its id (and is overwritten)."""
    model = f"--{run.model}" if run.model and run.model != run.agent else ""
    base = safe_id(f"{task_id}--{run.agent}{model}", 170)
    candidate, number = base, 2
    mine = (run.source_format, run.source_key)
    while candidate in taken or earlier.get(candidate, mine) != mine:
        candidate, number = f"{base}--{number}", number + 1
    return candidate


def _earlier_runs(destination: Path) -> dict[str, tuple[str, str]]:
    """The trajectories already in ``destination``: id -> (source format, source key)."""
    found: dict[str, tuple[str, str]] = {}
    for path in (destination / TRAJECTORIES_DIR).glob("*.json"):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            provenance = record.get("provenance", {})
            key = str(provenance.get("details", {}).get("source_key", path.stem))
            found[path.stem] = (str(provenance.get("source_format", "native")), key)
        except (OSError, ValueError, AttributeError):
            found[path.stem] = ("unreadable", path.stem)
    return found


def _stop_reason(run: SourceRun) -> AgentStopReason:
    if run.stop_reason is not None:
        return run.stop_reason
    last = run.actions[-1][0] if run.actions else None
    finished = last is not None and getattr(last, "action_type", None) in ("status", "answer")
    return "completed" if finished else "unknown"


def _convert(
    run: SourceRun, task_id: str, trajectory_id: str, root: Path, votes: Votes | None
) -> tuple[Task, Trajectory]:
    folder = root / TRAJECTORIES_DIR / trajectory_id
    if folder.exists():
        shutil.rmtree(folder)
    base = root / TRAJECTORIES_DIR
    screens = run.screens
    metadata: dict[str, JsonValue] = {BENCHMARK_KEY: run.benchmark}
    if run.error:
        metadata["error"] = run.error
    initial = _observation(screens[0] if screens else None, folder, "frame_0", base)
    if initial is not None:
        metadata[INITIAL_OBSERVATION_KEY] = initial.model_dump(mode="json", exclude_none=True)
    steps = []
    for number, (action, reasoning) in enumerate(run.actions, start=1):
        after = screens[number] if number < len(screens) else None
        steps.append(
            Step(
                index=number,
                action=action,
                observation=_observation(after, folder, f"frame_{number}", base),
                reasoning=reasoning or None,
            )
        )
    label = None
    if votes is not None:
        label = vote_label(votes)
    elif run.label is not None:
        label = Label(value=run.label, source=run.label_source)
    trajectory = Trajectory(
        id=trajectory_id,
        task_id=task_id,
        agent=run.agent,
        model=run.model,
        steps=steps,
        final_response=run.final_response,
        label=label,
        stop_reason=_stop_reason(run),
        turn_count=len(steps),
        provenance=Provenance(
            source_format=run.source_format,
            source_path=str(run.source_path),
            details={"source_key": run.source_key, **run.details},
        ),
        metadata=metadata,
    )
    task = Task(
        id=task_id,
        domain=run.domain,
        subdomain=run.subdomain,
        instruction=run.instruction,
        initial_state=ExternalState(reference=f"{run.benchmark} task {run.task_name}"),
        metadata={BENCHMARK_KEY: run.benchmark, "source_task": run.task_name},
    )
    return task, trajectory


def write_runs(
    runs: Iterable[SourceRun],
    destination: Path,
    *,
    log: ProblemLog,
    votes: dict[str, Votes] | None = None,
    generator: str,
) -> ImportSummary:
    """Write every run as a trajectory (and its task) under ``destination``; a run that cannot
    be converted is reported with its file and the others still land. ``votes`` are keyed by a
    run's ``source_key`` or by the trajectory id it gets."""
    summary = ImportSummary()
    votes = votes or {}
    used: set[str] = set()
    tasks: dict[str, Task] = {}
    destination.mkdir(parents=True, exist_ok=True)
    if not (destination / MANIFEST_FILE).exists():
        write_manifest(
            destination,
            Manifest(
                name=destination.name,
                description="Imported mobile trajectories",
                generator=generator,
            ),
        )
    matched: set[str] = set()
    earlier = _earlier_runs(destination)
    task_ids = _TaskIds(destination)
    for run in runs:
        task_id = task_ids.resolve(run)
        trajectory_id = _trajectory_id(run, task_id, used, earlier)
        key = run.source_key if run.source_key in votes else trajectory_id
        run_votes = votes.get(key)
        if run_votes is not None:
            matched.add(key)
        try:
            task, trajectory = _convert(run, task_id, trajectory_id, destination, run_votes)
        except (ValidationError, ValueError, OSError) as error:
            log.add(run.source_path, f"not imported: {error}")
            continue
        if task_id != safe_id(f"{run.benchmark}--{run.task_name}"):
            log.add(
                run.source_path,
                f"task {run.task_name!r} of {run.benchmark} has another instruction in an "
                f"earlier run; this run's goal is its own task {task_id}",
                severity="warning",
            )
        if task.id not in tasks:
            tasks[task.id] = task
            task_ids.claim(task.id, task.instruction)
            write_task(destination, task)
        if run_votes is not None and trajectory.label is None:
            log.add(
                run.source_path,
                f"the annotators' votes on {key!r} are split (or all unsure); the trajectory "
                "is left unlabelled",
                severity="warning",
            )
        used.add(trajectory_id)
        write_trajectory(destination, trajectory)
        summary.trajectories.append(trajectory_id)
        summary.by_benchmark[run.benchmark] = summary.by_benchmark.get(run.benchmark, 0) + 1
        if trajectory.label is not None:
            source = trajectory.label.source
            summary.by_label_source[source] = summary.by_label_source.get(source, 0) + 1
            if source == "vote":
                summary.labelled_by_vote += 1
    unmatched = sorted(set(votes) - matched)
    if unmatched:
        shown = ", ".join(repr(key) for key in unmatched[:3])
        more = f" and {len(unmatched) - 3} more" if len(unmatched) > 3 else ""
        log.add(
            Path("labels"),
            f"votes for {len(unmatched)} trajectory(ies) match no imported run: {shown}{more}",
            severity="warning",
        )
    summary.tasks = sorted(tasks)
    summary.problems = list(log.problems)
    return summary


def first_text(record: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    """The first of ``keys`` that holds a non-empty string."""
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None
