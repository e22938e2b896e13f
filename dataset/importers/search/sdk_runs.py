"""MCPMark's recorded search runs (its Playwright agent, reused by AJ-Bench's search pipeline).

MCPMark writes one folder per run, ``<service>__<model>/run-<n>/<task>/``, with ``messages.json``
(the OpenAI Agents SDK's item list: ``{"role": "user"}`` with the task, ``{"type": "message"}``
with the agent's text, ``{"type": "function_call", "arguments": <JSON string>, "call_id"}`` and
``{"type": "function_call_output", "output"}``) and ``meta.json`` (``task_name``,
``model_name``, ``mcp``, ``time``, ``token_usage``, ``turn_count`` and ``execution_result``:
``success`` from MCPMark's verifier, recorded as a ``verifier`` label with its
``verification_output``). There is no ``question`` field: the task is the first user message.
The items are read by the MCPMark importer's conversation reader (calls paired with outputs by
``call_id``, the doubly encoded outputs unwrapped). A record that yields no step though it holds
calls, call outputs or items of a type not understood is an error, never an empty trajectory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dataset.importers.mcpmark.conversation import ConversationReader
from dataset.importers.mcpmark.meta import optional_text, parse_time, read_usage
from dataset.importers.search.common import safe_id
from dataset.models import (
    EmptyState,
    Label,
    PageArchiveState,
    Provenance,
    Step,
    Task,
    Trajectory,
)
from dataset.problems import ProblemLog

__all__ = ["MESSAGES_FILE", "META_FILE", "is_sdk_item_list", "read_sdk_run"]

MESSAGES_FILE = "messages.json"
META_FILE = "meta.json"

_SDK_TYPES = {"function_call", "function_call_output", "message", "reasoning"}

StepMaker = Callable[..., Step]


def is_sdk_item_list(value: object) -> bool:
    """Whether ``value`` is an Agents SDK item list (not a list of runs)."""
    if not isinstance(value, list) or not value:
        return False
    for item in value:
        if not isinstance(item, dict):
            return False
        if item.get("type") in _SDK_TYPES:
            return True
    return False


def _count(items: list[Any], kind: str) -> int:
    return sum(isinstance(item, dict) and item.get("type") == kind for item in items)


def _not_understood(items: list[Any]) -> int:
    """Items that are neither messages nor a kind the conversation reader reads."""
    return sum(
        not isinstance(item, dict) or item.get("type", "message") not in _SDK_TYPES
        for item in items
    )


def read_sdk_run(
    messages_path: Path,
    items: list[Any],
    log: ProblemLog,
    make_step: StepMaker,
    *,
    archive: str | None = None,
) -> tuple[Task, Trajectory] | None:
    """One MCPMark run (its item list, and ``meta.json`` beside it when there) as a task and its
    trajectory; None when it cannot be read (every problem is in ``log``)."""
    conversation = ConversationReader(messages_path, log).read(items)
    if conversation is None:
        return None
    calls = _count(items, "function_call")
    if calls and not conversation.steps:
        log.add(messages_path, f"{calls} function_call item(s) but no step could be read")
        return None
    outputs, unknown = _count(items, "function_call_output"), _not_understood(items)
    if (outputs or unknown) and not conversation.steps:
        # Tool results without their calls, or calls in a shape not read: never a run with no
        # steps that imports as if the agent had done nothing.
        log.add(
            messages_path,
            f"no step could be read, though the run holds {outputs} function_call_output "
            f"item(s) and {unknown} item(s) of a type not understood",
        )
        return None
    meta_path = messages_path.parent / META_FILE
    meta: dict[str, Any] = {}
    if meta_path.is_file() and not meta_path.is_symlink():
        loaded = log.read_json(meta_path)
        if isinstance(loaded, dict):
            meta = loaded
        elif loaded is not None:
            log.add(meta_path, "meta.json must be a JSON object")
    steps = [
        make_step(
            number,
            pending.action.name,
            dict(pending.action.arguments),
            pending.observation.text if pending.observation else None,
            call_id=pending.action.call_id,
            is_error=pending.is_error,
            reasoning=pending.reasoning,
        )
        for number, pending in enumerate(conversation.steps, start=1)
    ]
    result = _object(meta.get("execution_result"))
    success = result.get("success")
    label = None
    if isinstance(success, bool):
        label = Label(
            value="PASS" if success else "FAIL",
            source="verifier",
            verifier_output=optional_text(result.get("verification_output")),
            error_message=optional_text(
                result.get("error_message") or result.get("verification_error")
            ),
        )
    elif meta:
        log.add(
            meta_path,
            "no boolean execution_result.success: the run is imported unlabelled",
            field="execution_result.success",
            severity="warning",
        )
    folder = messages_path.parent
    task_name = str(meta.get("task_name") or folder.name)
    task_id = _safe(task_name)
    model = meta.get("model_name") if isinstance(meta.get("model_name"), str) else None
    service = meta.get("mcp") if isinstance(meta.get("mcp"), str) else None
    agent = f"mcpmark-{service}" if service else "mcpmark"
    times = _object(meta.get("time"))
    turns = meta.get("turn_count")
    digest = hashlib.sha256(str(messages_path.resolve()).encode()).hexdigest()[:8]
    run = folder.parent.name
    final = conversation.final_response
    error_message = result.get("error_message")
    task = Task(
        id=task_id,
        domain="search",
        subdomain="deep",
        instruction=conversation.instruction,
        initial_state=PageArchiveState(path=archive) if archive else EmptyState(),
        metadata={"live_web": archive is None, "source": "mcpmark"},
    )
    trajectory = Trajectory(
        id=_safe(f"{task_id}--{model or agent}--{run}-{digest}"),
        task_id=task_id,
        agent=agent,
        model=model,
        steps=steps,
        final_response=final,
        label=label,
        stop_reason="completed" if final else ("error" if error_message else "unknown"),
        turn_count=turns if isinstance(turns, int) and turns >= 0 else None,
        usage=read_usage(meta, meta_path, log),
        started_at=parse_time(times.get("start"), meta_path, "time.start", log),
        ended_at=parse_time(times.get("end"), meta_path, "time.end", log),
        provenance=Provenance(
            source_format="mcpmark-search",
            source_path=str(folder),
            details={"run": run, **({"mcp": service} if service else {})},
        ),
    )
    return task, trajectory


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _safe(text: str) -> str:
    return safe_id(text, 190)
