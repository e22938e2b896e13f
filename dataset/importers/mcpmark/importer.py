"""Converting MCPMark runs into tasks and trajectories, and writing them as a dataset.

Owns the import as a whole: which runs are imported (known services only; one bad run never
stops the others), the ids of tasks and trajectories and their uniqueness (an import that would
write one trajectory id twice stops before writing anything), runs with an empty conversation,
building a ``Task`` and a ``Trajectory`` from what the other modules of this package read, and
writing each record as soon as it is made.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

from pydantic import JsonValue, ValidationError

from dataset.actions import ToolCallAction
from dataset.importers.mcpmark.conversation import Conversation, ConversationReader, strings
from dataset.importers.mcpmark.discovery import RunKey, find_run_dirs, read_run_files, run_key
from dataset.importers.mcpmark.meta import (
    execution_result,
    optional_text,
    parse_time,
    read_label,
    read_usage,
    stop_reason,
)
from dataset.importers.mcpmark.paths import PathRewriter, backup_folders
from dataset.importers.mcpmark.services import SERVER_COLLATIONS, SERVER_ROLES, SERVICES
from dataset.importers.mcpmark.task_files import (
    Environments,
    TaskFiles,
    TaskFolders,
    bundle_task_files,
)
from dataset.models import (
    EmptyState,
    ExternalState,
    InitialState,
    Observation,
    Provenance,
    SqlSeedState,
    Step,
    Task,
    Trajectory,
)
from dataset.problems import Problem, ProblemLog
from dataset.store import (
    MANIFEST_FILE,
    TRAJECTORIES_DIR,
    Manifest,
    write_manifest,
    write_task,
    write_trajectory,
)

SUPPORTED_SERVICES = {name: (s.domain, s.subdomain) for name, s in SERVICES.items()}
"""MCPMark services this importer understands, with the (domain, subdomain) they map to."""

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


@dataclass
class ImportReport:
    """What an import wrote and what it found wrong."""

    tasks: list[str] = field(default_factory=list)
    """Ids of the tasks written."""

    trajectories: list[str] = field(default_factory=list)
    """Ids of the trajectories written."""

    problems: list[Problem] = field(default_factory=list)
    """Every problem met, with the run folder and field it concerns."""

    by_server: Counter[str] = field(default_factory=Counter)
    """Trajectories written per tool server implementation."""

    empty: list[str] = field(default_factory=list)
    """Run folders whose conversation was empty, imported as zero-step trajectories."""

    skipped_empty: list[str] = field(default_factory=list)
    """Run folders whose conversation was empty, skipped on request."""


@dataclass
class _Options:
    log: ProblemLog
    task_folders: TaskFolders
    sandbox_prefixes: list[str]
    max_turns: int
    collations: dict[str, str | None]


@dataclass
class _Run:
    """One run folder as the first pass read it: its names and the ids it will be written as."""

    folder: Path
    meta: dict[str, Any]
    messages: list[Any]
    key: RunKey
    task_id: str
    trajectory_id: str


def import_mcpmark(
    sources: list[Path],
    destination: Path,
    *,
    tasks_root: Path | None = None,
    environments_root: Path | None = None,
    environments: Mapping[str, Path] | None = None,
    sandbox_prefixes: list[str] | None = None,
    max_turns: int = 100,
    skip_empty: bool = False,
    collations: Mapping[str, str | None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Convert every MCPMark run folder under ``sources`` into the dataset at ``destination``.

    ``on_progress(done, total)`` is called after each run folder is converted (for a progress
    display).

    ``tasks_root`` is MCPMark's ``tasks/`` folder (``description.md``, ``verify.py`` and the
    files next to them); ``environments_root`` holds initial states (``<category>/`` trees for
    filesystem; ``<category>/<task>.sql``, else ``<category>.sql``, for Postgres);
    ``environments`` maps a task (``<category>/<task>``, ``<category>__<task>`` or its id) to
    its own initial state, before any lookup. ``sandbox_prefixes`` adds recorded root folders to
    rewrite besides the ``backup_filesystem_*`` ones found automatically. A run whose turn count
    reaches ``max_turns`` without a final answer is recorded as stopped by its turn limit. A run
    whose ``messages.json`` is empty becomes a zero-step trajectory carrying its recorded
    failure, or is skipped (reported) with ``skip_empty``.

    A Postgres run starts from its task's database under the collation its server's database
    had (``SERVER_COLLATIONS``), recorded as the trajectory's own ``initial_state`` when it differs
    from the task's; ``collations`` overrides it by server name (``postgres-mcp``, ``supabase``,
    ``insforge``), or for every server under ``*`` (None: the replaying server's default).

    Raises ``DuplicateIdError``, having written nothing, when two runs would get one trajectory
    id or a run's id is already in ``destination`` from another run folder. Otherwise each record
    is written as soon as it is converted; one bad run never stops the others.
    """
    log = ProblemLog(Path.cwd())
    options = _Options(
        log=log,
        task_folders=TaskFolders(tasks_root, log),
        sandbox_prefixes=list(sandbox_prefixes or []),
        max_turns=max_turns,
        # A collation given for every server replaces the known per-server ones.
        collations={
            **({} if "*" in (collations or {}) else SERVER_COLLATIONS),
            **(collations or {}),
        },
    )
    run_dirs = find_run_dirs(*sources)
    if not run_dirs:
        for source in sources:
            log.add(source, "no MCPMark run folders (with messages.json and meta.json) found")
    runs = [run for run in (_read_run(folder, log) for folder in run_dirs) if run is not None]
    _refuse_duplicate_ids(runs, destination)

    batch = _Batch(destination, options, Environments(environments_root, environments, log))
    for done, run in enumerate(runs, start=1):
        try:
            batch.import_run(run, skip_empty=skip_empty)
        except Exception as error:  # a corrupt run must not stop the batch
            log.add(run.folder, f"could not be imported: {type(error).__name__}: {error}")
        if on_progress is not None:
            on_progress(done, len(runs))
    batch.finish()
    batch.report.problems = log.problems
    return batch.report


class _Batch:
    """The writing pass: tasks written once each, trajectories as they are converted."""

    def __init__(self, destination: Path, options: _Options, environments: Environments) -> None:
        self.destination = destination
        self.options = options
        self.log = options.log
        self.environments = environments
        self.report = ImportReport()
        self.tasks: dict[str, Task] = {}
        self.waiting: list[_Run] = []  # empty conversations whose task has no instruction yet

    def import_run(self, run: _Run, *, skip_empty: bool) -> None:
        """Convert and write one run (an empty one may wait for its task's instruction)."""
        if run.messages:
            server = run.key.service.server if run.key.service else None
            reader = ConversationReader(run.folder / "messages.json", self.log, server)
            conversation = reader.read(run.messages)
            if conversation is not None:
                self.write(run, conversation)
            return
        if skip_empty:
            self.log.add(
                run.folder / "messages.json",
                f"empty conversation ({_failure(run.meta)}); skipped (--skip-empty)",
                severity="warning",
            )
            self.report.skipped_empty.append(str(run.folder))
            return
        instruction = _known_instruction(run, self.options, self.tasks)
        if instruction is None:
            self.waiting.append(run)
        else:
            self.write(run, Conversation(instruction, [], None))

    def finish(self) -> None:
        """Write the empty runs that waited for an instruction; report unused mappings."""
        for run in self.waiting:
            task = self.tasks.get(run.task_id)
            if task is None:
                self.log.add(
                    run.folder / "messages.json",
                    f"empty conversation ({_failure(run.meta)}) and no instruction for task "
                    f"{run.task_id!r}: pass --tasks-root (MCPMark's tasks/ folder) to import "
                    "it, or --skip-empty to leave it out",
                )
                continue
            self.write(run, Conversation(task.instruction, [], None))
        for name in self.environments.unused():
            self.log.add(
                self.environments.explicit[name],
                f"no imported task is named {name!r} (expected <category>/<task>)",
                field="--environment",
                severity="warning",
            )

    def write(self, run: _Run, conversation: Conversation) -> None:
        """Convert one run and write its trajectory, and its task the first time."""
        converted = _convert(run, conversation, self.options)
        if converted is None:
            return
        task, trajectory, task_files = converted
        if not (self.destination / MANIFEST_FILE).exists():
            write_manifest(
                self.destination,
                Manifest(
                    name=self.destination.name,
                    description="Trajectories imported from MCPMark run folders.",
                    generator="agentjudge datasets import-mcpmark",
                ),
            )
        previous = self.tasks.get(task.id)
        if previous is None:
            task = bundle_task_files(
                task, task_files, self.destination, self.environments, self.log
            )
            write_task(self.destination, task)
            self.tasks[task.id] = task
            self.report.tasks.append(task.id)
        elif previous.instruction != task.instruction:
            self.log.add(
                run.folder / "messages.json",
                f"instruction differs from another run of task {task.id!r}; kept the first",
                field="[0].content",
                severity="warning",
            )
        trajectory = with_server_roles(
            self.with_collation(trajectory, self.tasks[task.id], run), self.tasks[task.id]
        )
        write_trajectory(self.destination, trajectory)
        self.report.trajectories.append(trajectory.id)
        self.report.by_server[trajectory.tool_server or run.key.mcp] += 1
        if not run.messages:
            self.report.empty.append(str(run.folder))

    def with_collation(self, trajectory: Trajectory, task: Task, run: _Run) -> Trajectory:
        """``trajectory`` starting under its server's collation, where that is not its task's.

        A task with a preparation keeps one collation for all its runs: a preparation may
        create roles, whose names are the server's, so one build of it exists at a time."""
        collations = self.options.collations
        server = trajectory.tool_server or ""
        if server not in collations and "*" not in collations:
            return trajectory
        collation = collations.get(server, collations.get("*"))
        state = task.initial_state
        if isinstance(state, EmptyState) and collation is not None:
            own: InitialState = SqlSeedState(path=None, collation=collation)
            return trajectory.model_copy(update={"initial_state": own})
        if not isinstance(state, SqlSeedState) or collation == state.collation:
            return trajectory
        if state.preparation is not None:
            self.log.add(
                run.folder / "meta.json",
                f"recorded on a {collation or 'default'}-collated database, replayed under task"
                f" {task.id!r}'s collation ({state.collation or 'the server default'}): its"
                f" {state.preparation} builds one database at a time",
                severity="warning",
            )
            return trajectory
        if state.path is None and collation is None:
            return trajectory  # an empty database under the server's default is the task's kind
        own = SqlSeedState(path=state.path, collation=collation)
        return trajectory.model_copy(update={"initial_state": own})


def with_server_roles(trajectory: Trajectory, task: Task) -> Trajectory:
    """``trajectory`` starting where its server's standard roles exist (``SERVER_ROLES``): its
    own initial state, else its task's, with the roles added."""
    roles = SERVER_ROLES.get(trajectory.tool_server or "")
    state = trajectory.initial_state or task.initial_state
    if not roles:
        return trajectory
    if isinstance(state, EmptyState):
        own: InitialState = SqlSeedState(path=None, server_roles=list(roles))
    elif isinstance(state, SqlSeedState):
        own = state.model_copy(update={"server_roles": list(roles)})
    else:
        return trajectory
    return trajectory.model_copy(update={"initial_state": own})


def _read_run(folder: Path, log: ProblemLog) -> _Run | None:
    """The first pass over one run folder: its files, names and ids (None, logged, if unusable)."""
    try:
        files_read = read_run_files(folder, log)
        if files_read is None:
            return None
        meta, messages = files_read
        key = run_key(folder, meta)
        if key.service is None:
            log.add(
                folder / "meta.json",
                f"service {key.mcp!r} is not supported; only "
                f"{', '.join(sorted(SERVICES))} runs are imported",
                field="mcp",
            )
            return None
        task_id = _safe_id(f"{key.service.family}__{key.category}__{key.task}")
        run = key.run if key.run != key.model else None
        parts = (task_id, key.model, key.server_part, key.experiment, run)
        trajectory_id = _safe_id("__".join(part for part in parts if part))
        return _Run(folder, meta, messages, key, task_id, trajectory_id)
    except Exception as error:  # a corrupt run must not stop the batch
        log.add(folder, f"could not be imported: {type(error).__name__}: {error}")
        return None


def _refuse_duplicate_ids(runs: list[_Run], destination: Path) -> None:
    """Raise ``DuplicateIdError`` when two runs share an id, or a run's id is already in the
    destination from another run folder."""
    first: dict[str, Path] = {}
    clashes: list[tuple[str, str, str]] = []
    for run in runs:
        seen = first.setdefault(run.trajectory_id, run.folder)
        if seen != run.folder:
            clashes.append((run.trajectory_id, str(seen), str(run.folder)))
    for trajectory_id, folder in first.items():
        existing = destination / TRAJECTORIES_DIR / f"{trajectory_id}.json"
        if not existing.is_file():
            continue
        source = _recorded_source(existing)
        if source is None or Path(source).resolve() != folder.resolve():
            shown = source or "a trajectory of unknown origin"
            clashes.append((trajectory_id, f"{shown} (already in {existing})", str(folder)))
    if clashes:
        raise DuplicateIdError(clashes)


def _recorded_source(trajectory_file: Path) -> str | None:
    try:
        payload = json.loads(trajectory_file.read_text(encoding="utf-8"))
        source = payload["provenance"]["source_path"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return source if isinstance(source, str) else None


def _failure(meta: dict[str, Any]) -> str:
    message = optional_text(execution_result(meta).get("error_message"))
    return f"recorded error: {message}" if message else "no error recorded"


def _known_instruction(run: _Run, options: _Options, written: dict[str, Task]) -> str | None:
    """The instruction of an empty run's task: its description, or another run's message."""
    files = options.task_folders.files_for(run.key)
    if files.description is not None:
        return files.description.read_text(encoding="utf-8").strip() or None
    task = written.get(run.task_id)
    return task.instruction if task is not None else None


def _convert(
    run: _Run, conversation: Conversation, options: _Options
) -> tuple[Task, Trajectory, TaskFiles] | None:
    log, key = options.log, run.key
    prefixes = list(options.sandbox_prefixes)
    if key.service is not None and key.service.family == "filesystem":
        texts = chain(conversation.texts(), strings(run.meta.get("execution_result")))
        prefixes += sorted(backup_folders(texts))
        if not prefixes and conversation.steps:
            log.add(
                run.folder / "messages.json",
                "no backup_filesystem_* sandbox folder found in the paths; kept them as recorded "
                "(pass --sandbox-prefix to rewrite another root)",
                severity="warning",
            )
    rewrite = PathRewriter(prefixes)
    if not run.messages:
        log.add(
            run.folder / "messages.json",
            f"empty conversation ({_failure(run.meta)}): the run ended before the agent "
            "started; imported as a zero-step trajectory",
            severity="warning",
        )
    files = options.task_folders.files_for(key)
    try:
        task = _build_task(run.task_id, key, files, rewrite.text(conversation.instruction), log)
        trajectory = _build_trajectory(run, conversation, rewrite, options)
    except ValidationError as error:
        log.add_validation_error(run.folder, error)
        return None
    return task, trajectory, files


def _build_task(
    task_id: str, key: RunKey, files: TaskFiles, instruction: str, log: ProblemLog
) -> Task:
    assert key.service is not None
    metadata: dict[str, JsonValue] = {
        "source": "mcpmark",
        "mcpmark_service": key.service.family,
        "mcpmark_category": key.category,
        "mcpmark_task": key.task,
    }
    if files.description is not None:
        instruction = files.description.read_text(encoding="utf-8").strip() or instruction
        task_meta_path = files.description.parent / "meta.json"
        task_meta = log.read_json(task_meta_path) if task_meta_path.is_file() else None
        if isinstance(task_meta, dict):
            metadata["mcpmark_meta"] = task_meta
    return Task.model_validate(
        {
            "id": task_id,
            "domain": key.service.domain,
            "subdomain": key.service.subdomain,
            "instruction": instruction,
            "initial_state": ExternalState(
                reference=f"MCPMark {key.service.family} environment {key.category!r}"
            ),
            "metadata": metadata,
        }
    )


def _build_trajectory(
    run: _Run, conversation: Conversation, rewrite: PathRewriter, options: _Options
) -> Trajectory:
    key, meta = run.key, run.meta
    meta_path = run.folder / "meta.json"
    steps = [
        Step(
            index=number,
            action=ToolCallAction(
                name=pending.action.name,
                arguments={k: rewrite.json(v) for k, v in pending.action.arguments.items()},
                call_id=pending.action.call_id,
            ),
            observation=(
                Observation(text=rewrite.text(pending.observation.text or ""))
                if pending.observation is not None
                else None
            ),
            is_error=pending.is_error,
            reasoning=rewrite.optional(pending.reasoning),
        )
        for number, pending in enumerate(conversation.steps, start=1)
    ]
    final = rewrite.optional(conversation.final_response)
    label = read_label(meta, meta_path, rewrite, options.log, key.path_label)
    turn_count = meta.get("turn_count")
    if not (isinstance(turn_count, int) and turn_count >= 0):
        turn_count = None
    times = meta.get("time") if isinstance(meta.get("time"), dict) else {}
    assert isinstance(times, dict)

    details: dict[str, JsonValue] = {
        "layout": key.layout,
        "experiment": key.experiment,
        "run": key.run,
        "service": key.mcp,
        "category": key.category,
        "task": key.task,
    }
    if key.implementation is not None:
        details["server_folder"] = key.implementation
    if not run.messages:
        details["empty_conversation"] = True
    details.update(
        {name: meta[name] for name in ("task_name", "mcp", "agent_execution_time") if name in meta}
    )
    verification_error = execution_result(meta).get("verification_error")
    if verification_error:
        details["verification_error"] = rewrite.optional(verification_error)
    if rewrite.prefixes:
        details["rewritten_sandbox_prefixes"] = list(rewrite.prefixes)

    return Trajectory(
        id=run.trajectory_id,
        task_id=run.task_id,
        agent=key.model,
        model=key.model,
        tool_server=key.service.server if key.service else None,
        steps=steps,
        final_response=final,
        label=label,
        stop_reason=stop_reason(
            optional_text(execution_result(meta).get("error_message")),
            final,
            turn_count,
            options.max_turns,
        ),
        turn_count=turn_count,
        usage=read_usage(meta, meta_path, options.log),
        started_at=parse_time(times.get("start"), meta_path, "time.start", options.log),
        ended_at=parse_time(times.get("end"), meta_path, "time.end", options.log),
        provenance=Provenance(
            source_format="mcpmark", source_path=str(run.folder), details=details
        ),
    )


def _safe_id(raw: str) -> str:
    cleaned = _UNSAFE_ID_CHARS.sub("-", raw).strip("-._") or "unnamed"
    if len(cleaned) > 200:
        digest = hashlib.sha256(raw.encode()).hexdigest()[:12]
        cleaned = f"{cleaned[:187]}-{digest}"
    return cleaned
