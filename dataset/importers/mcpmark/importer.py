"""Converting MCPMark runs into tasks and trajectories, and writing them as a dataset.

Owns the import as a whole: which runs are imported (supported services only; one bad run never
stops the others), the ids of tasks and trajectories, building a ``Task`` and a ``Trajectory``
from what the other modules of this package read, and writing each record as soon as it is made.
"""

from __future__ import annotations

import hashlib
import re
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
from dataset.importers.mcpmark.task_files import TaskFiles, TaskFolders, bundle_task_files
from dataset.models import (
    ExternalState,
    Observation,
    Provenance,
    Step,
    Task,
    Trajectory,
)
from dataset.problems import Problem, ProblemLog
from dataset.store import (
    MANIFEST_FILE,
    Manifest,
    write_manifest,
    write_task,
    write_trajectory,
)

SUPPORTED_SERVICES = {"filesystem": ("ds", "filesystem"), "postgres": ("ds", "postgres")}
"""MCPMark services this importer understands, with the (domain, subdomain) they map to."""

_UNSAFE_ID_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class ImportReport:
    """What an import wrote and what it found wrong."""

    tasks: list[str] = field(default_factory=list)
    """Ids of the tasks written."""

    trajectories: list[str] = field(default_factory=list)
    """Ids of the trajectories written."""

    problems: list[Problem] = field(default_factory=list)
    """Every problem met, with the run folder and field it concerns."""


@dataclass
class _Options:
    log: ProblemLog
    task_folders: TaskFolders
    sandbox_prefixes: list[str]
    max_turns: int


def import_mcpmark(
    sources: list[Path],
    destination: Path,
    *,
    tasks_root: Path | None = None,
    environments_root: Path | None = None,
    sandbox_prefixes: list[str] | None = None,
    max_turns: int = 100,
) -> ImportReport:
    """Convert every MCPMark run folder under ``sources`` into the dataset at ``destination``.

    ``tasks_root`` is MCPMark's ``tasks/`` folder (for ``description.md`` and ``verify.py``);
    ``environments_root`` holds initial states (``<category>/`` trees for filesystem,
    ``<category>.sql`` seeds for Postgres). ``sandbox_prefixes`` adds recorded root folders to
    rewrite besides the ``backup_filesystem_*`` ones found automatically. A run whose turn count
    reaches ``max_turns`` without a final answer is recorded as stopped by its turn limit.
    Each record is written as soon as it is converted; one bad run never stops the others.
    """
    report = ImportReport()
    log = ProblemLog(Path.cwd())
    options = _Options(
        log=log,
        task_folders=TaskFolders(tasks_root, log),
        sandbox_prefixes=list(sandbox_prefixes or []),
        max_turns=max_turns,
    )
    run_dirs = find_run_dirs(*sources)
    if not run_dirs:
        for source in sources:
            log.add(source, "no MCPMark run folders (with messages.json and meta.json) found")
    written_tasks: dict[str, Task] = {}
    for run_dir in run_dirs:
        try:
            converted = _convert_run(run_dir, options)
        except Exception as error:  # a corrupt run must not stop the batch
            log.add(run_dir, f"could not be imported: {type(error).__name__}: {error}")
            continue
        if converted is None:
            continue
        task, trajectory, task_files = converted
        if not (destination / MANIFEST_FILE).exists():
            write_manifest(
                destination,
                Manifest(
                    name=destination.name,
                    description="Trajectories imported from MCPMark run folders.",
                    generator="agentjudge datasets import-mcpmark",
                ),
            )
        previous = written_tasks.get(task.id)
        if previous is None:
            task = bundle_task_files(task, task_files, destination, environments_root, log)
            write_task(destination, task)
            written_tasks[task.id] = task
            report.tasks.append(task.id)
        elif previous.instruction != task.instruction and task_files.description is None:
            log.add(
                run_dir / "messages.json",
                f"instruction differs from another run of task {task.id!r}; kept the first",
                field="[0].content",
                severity="warning",
            )
        write_trajectory(destination, trajectory)
        report.trajectories.append(trajectory.id)
    report.problems = log.problems
    return report


def _convert_run(run_dir: Path, options: _Options) -> tuple[Task, Trajectory, TaskFiles] | None:
    log = options.log
    files_read = read_run_files(run_dir, log)
    if files_read is None:
        return None
    meta, messages = files_read
    meta_path, messages_path = run_dir / "meta.json", run_dir / "messages.json"
    key = run_key(run_dir, meta)
    if key.service not in SUPPORTED_SERVICES:
        log.add(
            meta_path,
            f"service {key.service!r} is not supported; only "
            f"{', '.join(sorted(SUPPORTED_SERVICES))} runs are imported",
            field="mcp",
        )
        return None

    conversation = ConversationReader(messages_path, log).read(messages)
    if conversation is None:
        return None

    prefixes = list(options.sandbox_prefixes)
    if key.service == "filesystem":
        found = backup_folders(chain(conversation.texts(), strings(meta.get("execution_result"))))
        prefixes += sorted(found)
        if not prefixes:
            log.add(
                messages_path,
                "no backup_filesystem_* sandbox folder found in the paths; kept them as recorded "
                "(pass --sandbox-prefix to rewrite another root)",
                severity="warning",
            )
    rewrite = PathRewriter(prefixes)

    task_id = _safe_id(f"{key.service}__{key.category}__{key.task}")
    files = options.task_folders.files_for(key)
    try:
        task = _build_task(task_id, key, files, rewrite.text(conversation.instruction), log)
        trajectory = _build_trajectory(run_dir, key, task_id, meta, conversation, rewrite, options)
    except ValidationError as error:
        log.add_validation_error(run_dir, error)
        return None
    return task, trajectory, files


def _build_task(
    task_id: str, key: RunKey, files: TaskFiles, instruction: str, log: ProblemLog
) -> Task:
    metadata: dict[str, JsonValue] = {
        "source": "mcpmark",
        "mcpmark_service": key.service,
        "mcpmark_category": key.category,
        "mcpmark_task": key.task,
    }
    if files.description is not None:
        instruction = files.description.read_text(encoding="utf-8").strip() or instruction
        task_meta_path = files.description.parent / "meta.json"
        task_meta = log.read_json(task_meta_path) if task_meta_path.is_file() else None
        if isinstance(task_meta, dict):
            metadata["mcpmark_meta"] = task_meta
    domain, subdomain = SUPPORTED_SERVICES[key.service]
    return Task.model_validate(
        {
            "id": task_id,
            "domain": domain,
            "subdomain": subdomain,
            "instruction": instruction,
            "initial_state": ExternalState(
                reference=f"MCPMark {key.service} environment {key.category!r}"
            ),
            "metadata": metadata,
        }
    )


def _build_trajectory(
    run_dir: Path,
    key: RunKey,
    task_id: str,
    meta: dict[str, Any],
    conversation: Conversation,
    rewrite: PathRewriter,
    options: _Options,
) -> Trajectory:
    meta_path = run_dir / "meta.json"
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
    label = read_label(meta, meta_path, rewrite, options.log)
    turn_count = meta.get("turn_count")
    if not (isinstance(turn_count, int) and turn_count >= 0):
        turn_count = None
    times = meta.get("time") if isinstance(meta.get("time"), dict) else {}
    assert isinstance(times, dict)

    details: dict[str, JsonValue] = {
        "experiment": key.experiment,
        "run": key.run,
        "service": key.service,
        "category": key.category,
        "task": key.task,
    }
    details.update(
        {name: meta[name] for name in ("task_name", "mcp", "agent_execution_time") if name in meta}
    )
    if rewrite.prefixes:
        details["rewritten_sandbox_prefixes"] = list(rewrite.prefixes)

    parts = (task_id, key.model, key.experiment or "", key.run or "")
    return Trajectory(
        id=_safe_id("__".join(part for part in parts if part)),
        task_id=task_id,
        agent=key.model,
        model=key.model,
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
        provenance=Provenance(source_format="mcpmark", source_path=str(run_dir), details=details),
    )


def _safe_id(raw: str) -> str:
    cleaned = _UNSAFE_ID_CHARS.sub("-", raw).strip("-._") or "unnamed"
    if len(cleaned) > 200:
        digest = hashlib.sha256(raw.encode()).hexdigest()[:12]
        cleaned = f"{cleaned[:187]}-{digest}"
    return cleaned
