"""Recorded search-agent runs (tool calls with URLs, a final answer) into search trajectories.

One run is a JSON object (a ``.json`` file holds one or a list, a ``.jsonl`` file one a line):

- ``question`` (or ``instruction``, ``query``, ``task``): what the agent was asked;
- ``task_id`` (optional: derived from the question), ``id`` (optional), ``agent``, ``model``,
  ``subdomain`` (``deep`` or ``wide``, default ``deep``);
- the calls, either as ``messages`` in the OpenAI chat form (assistant ``tool_calls`` with
  ``function.name`` and JSON ``function.arguments``, answered by ``tool`` messages with the same
  ``tool_call_id``) or as ``steps`` (``{"tool", "arguments", "output", "url"}``);
- ``final_answer`` (or ``answer``, ``response``; else the last assistant text after the last call);
- ``label`` (PASS/FAIL, 1/0, true/false; optional) with ``label_source`` (who decided it:
  ``human``, ``vote``, ``verifier``, ``evaluator``; ``unknown`` when not given) and ``items``
  (single-item claims: ``{"id"?, "text", "label"?, "sources"?}``; optional).

MCPMark's own run folders (``messages.json``, the Agents SDK's item list, with ``meta.json``) are
read by ``dataset.importers.search.sdk_runs``; ``messages`` given as such an item list is read
the same way. The address a step looked at is taken from a ``url`` argument, else from a ``Page
URL:`` line of the tool's output (what Playwright MCP's browser tools print). A run that cannot
be read is reported with its file (and line) and the field at fault; a run whose calls yield no
step is such an error, never an empty trajectory; the other runs still import.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from dataset.actions import ToolCallAction
from dataset.importers.search.common import (
    ImportReport,
    archive_name,
    first_of,
    label_value,
    read_records,
    safe_id,
    write_search_dataset,
)
from dataset.importers.search.sdk_runs import MESSAGES_FILE, is_sdk_item_list, read_sdk_run
from dataset.models import (
    LABEL_SOURCES,
    ClaimItem,
    EmptyState,
    Label,
    LabelSource,
    Observation,
    PageArchiveState,
    Provenance,
    Step,
    Task,
    Trajectory,
)
from dataset.problems import Problem, ProblemLog
from dataset.urls import normalise_url

__all__ = ["import_search_runs", "read_search_run"]

_PAGE_URL = re.compile(r"Page URL:\s*(\S+)")


class RunError(ValueError):
    """A run that cannot be imported; the message names the field."""


def _arguments(raw: object, where: str) -> dict[str, Any]:
    if isinstance(raw, dict):
        return dict(raw)
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw or "{}")
        except json.JSONDecodeError as error:
            raise RunError(f"{where}: arguments are not JSON: {error.msg}") from None
        if isinstance(parsed, dict):
            return parsed
    raise RunError(f"{where}: arguments must be a JSON object")


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part.get("text", "") for part in content if isinstance(part, dict) and "text" in part
        )
    return ""


def _observed_url(arguments: Mapping[str, Any], output: str | None) -> str | None:
    url = arguments.get("url")
    if isinstance(url, str) and url.startswith(("http://", "https://")):
        return normalise_url(url)
    found = _PAGE_URL.findall(output or "")
    return normalise_url(found[-1]) if found else None


def _step(
    index: int, name: str, arguments: dict[str, Any], output: str | None, **extra: Any
) -> Step:
    url = extra.pop("url", None) or _observed_url(arguments, output)
    return Step(
        index=index,
        action=ToolCallAction(name=name, arguments=arguments, call_id=extra.pop("call_id", None)),
        observation=Observation(text=output, url=url) if output is not None or url else None,
        is_error=bool(extra.pop("is_error", False)),
        reasoning=extra.pop("reasoning", None) or None,
    )


def _steps_from_messages(messages: Sequence[Any]) -> tuple[list[Step], str | None]:
    outputs: dict[str, str] = {}
    for position, message in enumerate(messages):
        if not isinstance(message, dict):
            raise RunError(f"messages[{position}]: expected an object")
        if message.get("role") == "tool" and message.get("tool_call_id") is not None:
            outputs[str(message["tool_call_id"])] = _text(message.get("content"))
    steps: list[Step] = []
    last_text: str | None = None
    for position, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        text = _text(message.get("content")).strip() or None
        calls = message.get("tool_calls") or []
        if not calls:
            last_text = text or last_text
            continue
        last_text = None
        for number, call in enumerate(calls):
            where = f"messages[{position}].tool_calls[{number}]"
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise RunError(f"{where}: needs function.name")
            call_id = str(call.get("id")) if call.get("id") is not None else None
            steps.append(
                _step(
                    len(steps) + 1,
                    function["name"],
                    _arguments(function.get("arguments"), where),
                    outputs.get(call_id or ""),
                    call_id=call_id,
                    reasoning=text if number == 0 else None,
                )
            )
    return steps, last_text


def _steps_from_list(raw_steps: Sequence[Any]) -> list[Step]:
    steps: list[Step] = []
    for position, raw in enumerate(raw_steps):
        where = f"steps[{position}]"
        if not isinstance(raw, dict) or not isinstance(first_of(raw, "tool", "name"), str):
            raise RunError(f"{where}: needs a tool name ('tool')")
        output = first_of(raw, "output", "result", "observation")
        steps.append(
            _step(
                len(steps) + 1,
                first_of(raw, "tool", "name"),
                _arguments(raw.get("arguments", {}), where),
                output if isinstance(output, str) else None,
                url=raw.get("url"),
                is_error=raw.get("is_error", False),
                reasoning=raw.get("reasoning"),
            )
        )
    return steps


def _steps_from_sdk_items(items: list[Any], where: str) -> tuple[list[Step], str | None]:
    log = ProblemLog(Path.cwd())
    result = read_sdk_run(Path(where.split("[", maxsplit=1)[0]), items, log, _step)
    errors = [problem for problem in log.problems if problem.severity == "error"]
    if result is None or errors:
        reasons = "; ".join(problem.message for problem in errors) or "unreadable items"
        raise RunError(f"messages: {reasons}")
    trajectory = result[1]
    return trajectory.steps, trajectory.final_response


def _items(raw: object) -> list[ClaimItem]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise RunError("items: expected a list of claims")
    items: list[ClaimItem] = []
    for position, given in enumerate(raw, start=1):
        entry = {"text": given} if isinstance(given, str) else given
        if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
            raise RunError(f"items[{position - 1}]: needs 'text'")
        sources = first_of(entry, "sources", "urls", "url") or []
        items.append(
            ClaimItem(
                id=str(entry.get("id") or f"i{position}"),
                text=entry["text"],
                label=label_value(entry.get("label")),
                sources=[sources] if isinstance(sources, str) else [str(s) for s in sources],
            )
        )
    return items


def _label_source(record: Mapping[str, Any]) -> LabelSource:
    given = record.get("label_source", "unknown")
    if given not in LABEL_SOURCES:
        raise RunError(f"label_source: {given!r} is not one of {', '.join(LABEL_SOURCES)}")
    return given  # type: ignore[no-any-return]


def read_search_run(
    record: Mapping[str, Any], where: str, *, archive: str | None = None
) -> tuple[Task, Trajectory]:
    """One run as a task and its trajectory; ``RunError`` (or pydantic's) names the field.

    ``archive`` (a path relative to the task folder) makes the task start from a page archive
    instead of the live web."""
    question = first_of(record, "question", "instruction", "query", "task")
    if not isinstance(question, str) or not question.strip():
        raise RunError("question: missing (also looked for instruction, query, task)")
    task_id = safe_id(
        str(record.get("task_id") or "search-" + hashlib.sha256(question.encode()).hexdigest()[:12])
    )
    subdomain = str(record.get("subdomain") or "deep")
    if is_sdk_item_list(record.get("messages")):
        steps, last_text = _steps_from_sdk_items(record["messages"], where)
    elif isinstance(record.get("messages"), list):
        steps, last_text = _steps_from_messages(record["messages"])
        if not steps and any(
            isinstance(m, dict) and m.get("tool_calls") for m in record["messages"]
        ):
            raise RunError("messages: tool calls are recorded but no step could be read")
    elif isinstance(record.get("steps"), list):
        steps, last_text = _steps_from_list(record["steps"]), None
    else:
        raise RunError("messages or steps: a run needs its tool calls")
    final = first_of(record, "final_answer", "answer", "response")
    final_response = final if isinstance(final, str) else last_text
    agent = str(record.get("agent") or record.get("model") or "unknown-agent")
    digest = hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()
    trajectory_id = safe_id(
        str(record.get("id") or f"{task_id}--{safe_id(agent, 40)}-{digest[:8]}")
    )
    label = label_value(record.get("label"))
    raw_label = record.get("label")
    if raw_label is not None and label is None:
        raise RunError(f"label: {raw_label!r} is not PASS/FAIL, 1/0 or true/false")
    initial = PageArchiveState(path=archive) if archive else EmptyState()
    task = Task(
        id=task_id,
        domain="search",
        subdomain=subdomain,
        instruction=question.strip(),
        initial_state=initial,
        metadata={"live_web": archive is None},
    )
    trajectory = Trajectory(
        id=trajectory_id,
        task_id=task_id,
        agent=agent,
        model=record.get("model") if isinstance(record.get("model"), str) else None,
        steps=steps,
        final_response=final_response,
        label=Label(value=label, source=_label_source(record)) if label else None,
        items=_items(record.get("items")),
        stop_reason="completed" if final_response else "unknown",
        provenance=Provenance(source_format="search-run", source_path=where),
    )
    return task, trajectory


def _read_sdk_file(path: Path, report: ImportReport, archive: Path | None) -> bool:
    """Import ``path`` as an MCPMark run when it holds an Agents SDK item list; whether it did
    (a file holding anything else is left to the other readers)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False  # read_records reports it
    if not is_sdk_item_list(value):
        return False
    log = ProblemLog(Path.cwd())
    name = archive_name(archive) if archive else None
    result = read_sdk_run(path, value, log, _step, archive=name)
    report.problems.extend(Problem.model_validate(p.model_dump()) for p in log.problems)
    if result is not None:
        task, trajectory = result
        if trajectory.id in report.trajectories:
            report.problem(str(path), f"a second run with id {trajectory.id}", "id")
        else:
            report.tasks.setdefault(task.id, task)
            report.trajectories[trajectory.id] = trajectory
    return True


def import_search_runs(
    sources: Sequence[Path], destination: Path, *, archive: Path | None = None
) -> ImportReport:
    """Import every run in ``sources`` (files, or folders searched for ``*.json``/``*.jsonl``)
    into the dataset at ``destination``, with ``urls.txt``; bad runs are reported, not fatal.
    ``archive`` (a page folder or a WARC file, e.g. made by ``agentjudge archive`` from the
    list) is copied into every task folder, and the tasks start from it instead of the live
    web."""
    report = ImportReport()
    files: list[Path] = []
    for source in sources:
        if source.is_dir():
            run_folders = {p.parent for p in source.rglob(MESSAGES_FILE) if p.is_file()}
            files.extend(p / MESSAGES_FILE for p in sorted(run_folders))
            files.extend(
                sorted(
                    p
                    for p in source.rglob("*")
                    if p.suffix in (".json", ".jsonl") and p.parent not in run_folders
                )
            )
        else:
            files.append(source)
    for path in files:
        if path.is_symlink():
            report.problem(str(path), "a link; only regular files are read")
            continue
        if path.suffix == ".json" and _read_sdk_file(path, report, archive):
            continue
        for where, record in read_records(path, report):
            try:
                task, trajectory = read_search_run(
                    record, where, archive=archive_name(archive) if archive else None
                )
            except RunError as error:
                field, _, message = str(error).partition(": ")
                report.problem(where, message or str(error), field if message else None)
                continue
            except ValidationError as error:
                report.problem(
                    where, str(error).splitlines()[0] + ": " + str(error.errors()[0]["msg"])
                )
                continue
            if trajectory.id in report.trajectories:
                report.problem(where, f"a second run with id {trajectory.id}", "id")
                continue
            report.tasks.setdefault(task.id, task)
            report.trajectories[trajectory.id] = trajectory
    write_search_dataset(
        destination,
        report,
        name=destination.name,
        description="Recorded search-agent runs imported with `agentjudge datasets import-search`.",
        generator="agentjudge datasets import-search",
        archive=archive,
    )
    return report
