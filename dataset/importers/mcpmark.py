"""Import MCPMark run folders (filesystem and Postgres services) into the unified format.

An MCPMark results tree holds one folder per attempt,
``<exp>/<model>__<service>/run-N/<category>__<task>/``, each with ``meta.json`` (the verifier's
outcome, token usage, turn count) and ``messages.json`` (the conversation in the OpenAI Agents SDK
item style). This module pairs each ``function_call`` with its ``function_call_output`` by
``call_id``, unwraps the doubly JSON-encoded tool results, flags failed calls, keeps assistant text
as step reasoning, and rewrites the per-run sandbox directory of filesystem runs to
``SANDBOX_ROOT_PLACEHOLDER`` so that the paths mean something on replay.

MCPMark's task folders (``description.md``, ``verify.py``) and initial environments are optional
inputs: with them the tasks are bundled; without them the task's instruction is the recorded user
message and its initial state is an ``ExternalState`` naming the environment to supply.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import chain
from pathlib import Path
from typing import Any

from pydantic import JsonValue, ValidationError

from dataset.actions import ToolCallAction
from dataset.models import (
    SANDBOX_ROOT_PLACEHOLDER,
    AgentStopReason,
    AgentUsage,
    DirectoryTreeState,
    ExternalState,
    InitialState,
    Label,
    Observation,
    Provenance,
    SqlSeedState,
    Step,
    Task,
    Trajectory,
    VerifierRef,
)
from dataset.problems import Problem, ProblemLog
from dataset.store import (
    MANIFEST_FILE,
    Manifest,
    write_manifest,
    write_task,
    write_trajectory,
)

__all__ = [
    "SUPPORTED_SERVICES",
    "ImportReport",
    "decode_tool_output",
    "find_run_dirs",
    "import_mcpmark",
]

SUPPORTED_SERVICES = {"filesystem": ("ds", "filesystem"), "postgres": ("ds", "postgres")}
"""MCPMark services this importer understands, with the (domain, subdomain) they map to."""

# The folder name must end in a word character or "-", so that punctuation after a path in prose
# ("the vault is at /tmp/backup_filesystem_x_1.") is not taken as part of the folder name.
_BACKUP_DIR = re.compile(
    r"(?<![\w.~-])((?:/[^/\s\"'`\\]+)*/backup_filesystem_(?:[^/\s\"'`\\]*[\w-])?)"
)
_TURN_LIMIT = re.compile(r"max(imum)?[\s_-]*turns?|turn[\s_-]*limit|too many turns", re.I)
# Plain-text results that report a failed call: MCP servers' "Error: ..." and the Agents SDK's
# own wrapper for exceptions raised by a tool.
_ERROR_TEXT = re.compile(r"^\s*(Error\b|An error occurred while running the tool)")
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


def find_run_dirs(*sources: Path) -> list[Path]:
    """Every folder at or below the sources holding ``messages.json`` and ``meta.json``, sorted."""
    found: set[Path] = set()
    for source in sources:
        for meta in [source / "meta.json", *source.rglob("meta.json")]:
            if meta.is_file() and (meta.parent / "messages.json").is_file():
                found.add(meta.parent)
    return sorted(found)


@dataclass
class _Options:
    log: ProblemLog
    tasks_root: Path | None
    sandbox_prefixes: list[str]
    max_turns: int
    task_folders: dict[tuple[str, str, str], Path | None] = field(default_factory=dict)


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
    options = _Options(
        log=ProblemLog(Path.cwd()),
        tasks_root=tasks_root,
        sandbox_prefixes=list(sandbox_prefixes or []),
        max_turns=max_turns,
    )
    log = options.log
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
            task = _bundle_task_files(task, task_files, destination, environments_root, log)
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


# --- one run -------------------------------------------------------------------------------------


@dataclass
class _RunKey:
    experiment: str | None
    model: str
    service: str
    run: str | None
    category: str
    task: str


@dataclass
class _TaskFiles:
    service: str
    category: str
    verifier: Path | None = None
    description: Path | None = None


def _convert_run(run_dir: Path, options: _Options) -> tuple[Task, Trajectory, _TaskFiles] | None:
    log = options.log
    files_read = _read_run_files(run_dir, log)
    if files_read is None:
        return None
    meta, messages = files_read
    meta_path, messages_path = run_dir / "meta.json", run_dir / "messages.json"
    key = _run_key(run_dir, meta)
    if key.service not in SUPPORTED_SERVICES:
        log.add(
            meta_path,
            f"service {key.service!r} is not supported; only "
            f"{', '.join(sorted(SUPPORTED_SERVICES))} runs are imported",
            field="mcp",
        )
        return None

    conversation = _ConversationReader(messages_path, log).read(messages)
    if conversation is None:
        return None

    prefixes = list(options.sandbox_prefixes)
    if key.service == "filesystem":
        texts = chain(conversation.texts(), _strings(meta.get("execution_result")))
        found = {match for text in texts for match in _BACKUP_DIR.findall(text)}
        prefixes += sorted(found)
        if not prefixes:
            log.add(
                messages_path,
                "no backup_filesystem_* sandbox folder found in the paths; kept them as recorded "
                "(pass --sandbox-prefix to rewrite another root)",
                severity="warning",
            )
    rewrite = _PathRewriter(prefixes)

    task_id = _safe_id(f"{key.service}__{key.category}__{key.task}")
    files = _task_files(key, options)
    try:
        task = _build_task(task_id, key, files, rewrite.text(conversation.instruction), log)
        trajectory = _build_trajectory(run_dir, key, task_id, meta, conversation, rewrite, options)
    except ValidationError as error:
        log.add_validation_error(run_dir, error)
        return None
    return task, trajectory, files


def _read_run_files(run_dir: Path, log: ProblemLog) -> tuple[dict[str, Any], list[Any]] | None:
    meta_path, messages_path = run_dir / "meta.json", run_dir / "messages.json"
    meta = log.read_json(meta_path)
    messages = log.read_json(messages_path)
    if meta is None or messages is None:
        return None
    if not isinstance(meta, dict):
        log.add(meta_path, f"must be a JSON object, got {type(meta).__name__}")
        return None
    if not isinstance(messages, list):
        log.add(messages_path, f"must be a JSON list of items, got {type(messages).__name__}")
        return None
    return meta, messages


def _build_task(
    task_id: str, key: _RunKey, files: _TaskFiles, instruction: str, log: ProblemLog
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


# --- messages.json -------------------------------------------------------------------------------


@dataclass
class _PendingStep:
    action: ToolCallAction
    reasoning: str | None
    position: int
    observation: Observation | None = None
    is_error: bool = False
    has_output: bool = False


@dataclass
class _Conversation:
    instruction: str
    steps: list[_PendingStep]
    final_response: str | None

    def texts(self) -> Iterator[str]:
        """Every text of the conversation, for scanning recorded paths."""
        yield self.instruction
        if self.final_response:
            yield self.final_response
        for step in self.steps:
            if step.reasoning:
                yield step.reasoning
            yield from _strings(step.action.arguments)
            if step.observation is not None and step.observation.text:
                yield step.observation.text


class _ConversationReader:
    """Walks the Agents SDK items of one ``messages.json``, turning tool calls into steps."""

    def __init__(self, path: Path, log: ProblemLog) -> None:
        self.path = path
        self.log = log
        self.instruction: str | None = None
        self.steps: list[_PendingStep] = []
        self.by_call_id: dict[str, _PendingStep] = {}
        self.pending_text: list[str] = []
        self.handlers: dict[str, Callable[[dict[str, Any], int], None]] = {
            "user": self._on_user,
            "assistant": self._on_assistant,
            "reasoning": self._on_reasoning,
            "function_call": self._on_call,
            "function_call_output": self._on_output,
        }

    def read(self, messages: list[Any]) -> _Conversation | None:
        for position, item in enumerate(messages):
            where = f"[{position}]"
            if not isinstance(item, dict):
                self._warn(f"item is a {type(item).__name__}, not an object; skipped", where)
                continue
            kind = item.get("type", "message")
            role = item.get("role")
            if kind == "message" and role in {"system", "developer"}:
                continue  # instructions to the agent, not part of its trajectory
            handler = self.handlers.get(str(role) if kind == "message" else str(kind))
            if handler is None:
                self._warn(f"item of type {kind!r} is not understood; skipped", f"{where}.type")
                continue
            handler(item, position)
        if self.instruction is None:
            self.log.add(self.path, "no user message: the task instruction is unknown")
            return None
        for step in self.steps:
            if not step.has_output:
                self._warn(
                    f"call {step.action.name!r} (call_id {step.action.call_id!r}) has no recorded "
                    "output; the run may have stopped during it",
                    f"[{step.position}]",
                )
        return _Conversation(self.instruction, self.steps, self._take_text())

    def _warn(self, message: str, where: str) -> None:
        self.log.add(self.path, message, field=where, severity="warning")

    def _take_text(self) -> str | None:
        text = "\n\n".join(self.pending_text) if self.pending_text else None
        self.pending_text = []
        return text

    def _on_user(self, item: dict[str, Any], position: int) -> None:
        text = _message_text(item.get("content"))
        if self.instruction is None:
            self.instruction = text
        elif text:
            self.pending_text.append(f"[user] {text}")

    def _on_assistant(self, item: dict[str, Any], position: int) -> None:
        text = _message_text(item.get("content"))
        if text:
            self.pending_text.append(text)

    def _on_reasoning(self, item: dict[str, Any], position: int) -> None:
        summary = item.get("summary") or []
        texts = [str(part.get("text", "")) for part in summary if isinstance(part, dict)]
        if any(texts):
            self.pending_text.append("\n".join(text for text in texts if text))

    def _on_call(self, item: dict[str, Any], position: int) -> None:
        where = f"[{position}]"
        name = item.get("name")
        if not isinstance(name, str) or not name:
            self.log.add(
                self.path, "function_call without a tool name; skipped", field=f"{where}.name"
            )
            return
        call_id = item.get("call_id")
        action = ToolCallAction(
            name=name,
            arguments=self._arguments(item.get("arguments", "{}"), where),
            call_id=call_id if isinstance(call_id, str) else None,
        )
        step = _PendingStep(action=action, reasoning=self._take_text(), position=position)
        self.steps.append(step)
        if action.call_id is not None:
            if action.call_id in self.by_call_id:
                self.log.add(self.path, f"call_id {action.call_id!r} is used twice", field=where)
            self.by_call_id[action.call_id] = step

    def _arguments(self, raw: object, where: str) -> dict[str, JsonValue]:
        arguments: object = raw
        if isinstance(raw, str):
            try:
                arguments = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError as error:
                self._warn(
                    f"arguments are not valid JSON ({error.msg}); kept as raw text",
                    f"{where}.arguments",
                )
                return {"_unparsed_arguments": raw}
        if not isinstance(arguments, dict):
            self._warn(
                f"arguments decode to a {type(arguments).__name__}, not an object; wrapped",
                f"{where}.arguments",
            )
            return {"_unparsed_arguments": arguments}  # type: ignore[dict-item]
        return arguments

    def _on_output(self, item: dict[str, Any], position: int) -> None:
        where = f"[{position}]"
        call_id = item.get("call_id")
        step = self.by_call_id.get(call_id) if isinstance(call_id, str) else None
        if step is None:
            self._warn(
                f"output for call_id {call_id!r} has no matching function_call; skipped",
                f"{where}.call_id",
            )
            return
        if step.has_output:
            self._warn(f"second output for call_id {call_id!r}; kept the first", where)
            return
        if item.get("output") is None:
            self._warn(f"output for call_id {call_id!r} is empty", f"{where}.output")
        text, is_error = decode_tool_output(item.get("output"))
        step.observation = Observation(text=text)
        step.is_error = is_error
        step.has_output = True


def decode_tool_output(raw: object) -> tuple[str, bool]:
    """Unwrap a recorded tool result into ``(text, is_error)``.

    MCPMark stores a JSON string of ``{"type": "text", "text": <JSON of a CallToolResult>}``;
    failed calls may instead be plain ``"Error: ..."`` text. Each layer is unwrapped only if it
    parses, so partially encoded or plain outputs come through as the text they are. A
    CallToolResult's own ``isError`` decides; plain text counts as an error only when it reads
    as one.
    """
    value: object = raw
    for _ in range(4):  # a few layers at most; stop as soon as nothing more unwraps
        unwrapped = _unwrap_once(value)
        if unwrapped is None:
            break
        value = unwrapped
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        return _content_text(value["content"]), bool(value.get("isError", False))
    if isinstance(value, list) and value and all(isinstance(part, dict) for part in value):
        return _content_text(value), False
    if value is None:
        return "", False
    if isinstance(value, str):
        return value, bool(_ERROR_TEXT.match(value))
    return json.dumps(value, ensure_ascii=False), False


def _unwrap_once(value: object) -> object | None:
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped or stripped[0] not in '{["':
            return None
        try:
            parsed: object = json.loads(stripped)
        except json.JSONDecodeError:
            return None
        return parsed
    if isinstance(value, dict) and value.get("type") == "text" and "text" in value:
        inner: object = value["text"]
        return inner
    return None


def _content_text(content: list[Any]) -> str:
    parts: list[str] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(block, dict):
            parts.append(str(block))
        elif kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind in {"image", "audio"}:
            parts.append(f"[{kind} content: {block.get('mimeType', 'unknown type')}]")
        elif kind == "resource":
            resource = block.get("resource") or {}
            parts.append(str(resource.get("text") or f"[resource {resource.get('uri', '')}]"))
        else:
            parts.append(json.dumps(block, ensure_ascii=False))
    return "\n".join(parts)


def _message_text(content: object) -> str:
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        texts = [
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") in {"output_text", "input_text", "text"}
        ]
        return "\n".join(text for text in texts if text).strip()
    return ""


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


class _PathRewriter:
    """Replaces recorded sandbox roots by the placeholder, in strings and nested JSON."""

    def __init__(self, prefixes: list[str]) -> None:
        cleaned = {prefix.rstrip("/") for prefix in prefixes if prefix.strip("/")}
        self.prefixes = sorted(cleaned, key=len, reverse=True)

    def text(self, value: str) -> str:
        for prefix in self.prefixes:
            value = value.replace(prefix, SANDBOX_ROOT_PLACEHOLDER)
        return value

    def optional(self, value: object) -> str | None:
        """Rewrite a value that may be absent or not text (JSON is serialised first)."""
        if value is None or value == "":
            return None
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return self.text(text)

    def json(self, value: JsonValue) -> JsonValue:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, dict):
            return {key: self.json(item) for key, item in value.items()}
        return value


# --- meta.json -----------------------------------------------------------------------------------


def _build_trajectory(
    run_dir: Path,
    key: _RunKey,
    task_id: str,
    meta: dict[str, Any],
    conversation: _Conversation,
    rewrite: _PathRewriter,
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
    label = _read_label(meta, meta_path, rewrite, options.log)
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
        stop_reason=_stop_reason(
            _optional_text(_execution_result(meta).get("error_message")),
            final,
            turn_count,
            options.max_turns,
        ),
        turn_count=turn_count,
        usage=_read_usage(meta, meta_path, options.log),
        started_at=_parse_time(times.get("start"), meta_path, "time.start", options.log),
        ended_at=_parse_time(times.get("end"), meta_path, "time.end", options.log),
        provenance=Provenance(source_format="mcpmark", source_path=str(run_dir), details=details),
    )


def _execution_result(meta: dict[str, Any]) -> dict[str, Any]:
    result = meta.get("execution_result")
    return result if isinstance(result, dict) else {}


def _read_label(
    meta: dict[str, Any], meta_path: Path, rewrite: _PathRewriter, log: ProblemLog
) -> Label | None:
    result = _execution_result(meta)
    if not isinstance(result.get("success"), bool):
        log.add(
            meta_path,
            "no boolean execution_result.success: the trajectory is imported unlabelled",
            field="execution_result.success",
            severity="warning",
        )
        return None
    return Label(
        value="PASS" if result["success"] else "FAIL",
        source="verifier",
        verifier_output=rewrite.optional(result.get("verification_output")),
        error_message=rewrite.optional(result.get("error_message")),
    )


def _stop_reason(
    error_message: str | None, final: str | None, turn_count: int | None, max_turns: int
) -> AgentStopReason:
    if error_message and _TURN_LIMIT.search(error_message):
        return "turn_limit"
    if final is None and turn_count is not None and turn_count >= max_turns:
        return "turn_limit"
    if final is not None:
        return "completed"
    return "error" if error_message else "unknown"


def _read_usage(meta: dict[str, Any], meta_path: Path, log: ProblemLog) -> AgentUsage | None:
    raw = meta.get("token_usage")
    if not isinstance(raw, dict):
        return None
    try:
        return AgentUsage.model_validate(
            {k: v for k, v in raw.items() if k in AgentUsage.model_fields}
        )
    except ValidationError as error:
        log.add_validation_error(meta_path, error, prefix="token_usage")
        return None


def _run_key(run_dir: Path, meta: dict[str, Any]) -> _RunKey:
    """Read experiment, model, service, run and task names from the folder path and meta.json.

    The folder layout names the category and task; meta.json names the model and service when
    it has them, the folder names otherwise.
    """
    category, _, task = run_dir.name.partition("__")
    if not task:
        name = str(meta.get("task_name") or run_dir.name)
        category, _, task = name.replace("/", "__").partition("__")
        task = task or category
    run = run_dir.parent.name if run_dir.parent.name.startswith("run-") else None
    model_service = run_dir.parent.parent.name if run else run_dir.parent.name
    model, _, service = model_service.rpartition("__")
    meta_service = meta.get("mcp")
    if isinstance(meta_service, dict):
        meta_service = meta_service.get("service") or meta_service.get("name")
    if isinstance(meta_service, str) and meta_service:
        service = meta_service
    meta_model = meta.get("model_name")
    if isinstance(meta_model, str) and meta_model:
        model = meta_model
    experiment_dir = run_dir.parent.parent.parent if run else run_dir.parent.parent
    return _RunKey(
        experiment=experiment_dir.name or None,
        model=model or "unknown-model",
        service=service.lower(),
        run=run,
        category=category,
        task=task,
    )


# --- task folders and initial states -------------------------------------------------------------


def _task_files(key: _RunKey, options: _Options) -> _TaskFiles:
    files = _TaskFiles(service=key.service, category=key.category)
    if options.tasks_root is None:
        return files
    cache_key = (key.service, key.category, key.task)
    if cache_key not in options.task_folders:  # look up (and warn) once per task, not per run
        options.task_folders[cache_key] = _find_task_folder(options.tasks_root, key, options.log)
    folder = options.task_folders[cache_key]
    if folder is not None:
        if (folder / "description.md").is_file():
            files.description = folder / "description.md"
        if (folder / "verify.py").is_file():
            files.verifier = folder / "verify.py"
    return files


def _find_task_folder(tasks_root: Path, key: _RunKey, log: ProblemLog) -> Path | None:
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


def _bundle_task_files(
    task: Task,
    files: _TaskFiles,
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
    files: _TaskFiles, environments_root: Path, folder: Path
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


# --- small readers -------------------------------------------------------------------------------


def _parse_time(value: object, path: Path, field_name: str, log: ProblemLog) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, tz=UTC)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            pass
    log.add(path, f"unreadable timestamp {value!r}; left out", field=field_name, severity="warning")
    return None


def _optional_text(value: object) -> str | None:
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _safe_id(raw: str) -> str:
    cleaned = _UNSAFE_ID_CHARS.sub("-", raw).strip("-._") or "unnamed"
    if len(cleaned) > 200:
        digest = hashlib.sha256(raw.encode()).hexdigest()[:12]
        cleaned = f"{cleaned[:187]}-{digest}"
    return cleaned
