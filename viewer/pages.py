"""The data behind a run page: the record, its transcript, the trajectory, its replay report.

Everything is read on request, one run at a time: the record by the byte range the index keeps,
the transcript from ``logs/<key>.jsonl``, the trajectory and its task from their own files (not
the whole dataset), the fidelity report from the replay folder (read once, then kept). Images
inside the transcript are not sent inline: each becomes a URL the server answers from the log,
so the browser loads them lazily like the trajectory's screenshots.

Nothing a results folder or dataset holds is read or sent whole when it is huge: a log event is
read one line at a time and at most ``LOG_LINE_LIMIT`` bytes, a trajectory file over
``TRAJECTORY_FILE_LIMIT`` is not parsed (the page says why), and every text sent to the page
(an observation, a tool result, a message) is cut to ``TEXT_LIMIT`` characters with a note; the
raw log (``/logs/<key>.jsonl?raw=1``) is streamed from disk and still holds everything.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pydantic import ValidationError

from bench.grid_runner import LOGS_DIR
from dataset.models import Task, Trajectory
from dataset.store import TASK_FILE, TASKS_DIR, TRAJECTORIES_DIR
from replay.report import FidelityReport
from storage.jsonl import read_jsonl
from viewer.index import RunIndex, RunRow
from viewer.source import ViewSource

__all__ = ["RunPages", "TooLargeError", "cut_texts", "step_number"]

VIEW_STEP_TOOL = "VIEW_TRAJECTORY_STEP"
"""The trajectory server's step tool (``mcp_servers.trajectory.server``), named here so the
viewer does not load the MCP SDK to link a call to its step."""


def step_number(arguments: Any) -> int | None:
    """The step a ``VIEW_TRAJECTORY_STEP`` call asked for, when it is a whole number."""
    value = arguments.get("step") if isinstance(arguments, dict) else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


TEXT_LIMIT = 200_000
"""The most characters of one text (observation, tool result, message block) a page is sent."""

TRAJECTORY_FILE_LIMIT = 64 * 2**20
"""Trajectory files larger than this are not parsed for a page (parsing costs several times the
file's size in memory, per request)."""


class TooLargeError(ValueError):
    """A file the viewer does not read whole; names it and its size."""


def cut_texts(value: Any, limit: int = TEXT_LIMIT) -> Any:
    """``value`` (parsed JSON) with every string longer than ``limit`` characters cut to its
    start and a note of how much was left out."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        return f"{value[:limit]}\n[... {len(value) - limit:,} more characters not shown]"
    if isinstance(value, list):
        return [cut_texts(item, limit) for item in value]
    if isinstance(value, dict):
        return {key: cut_texts(item, limit) for key, item in value.items()}
    return value


def _image_url(key: str, event: int, block: int) -> str:
    return f"/api/image/{quote(key)}/{event}/{block}"


def _content(content: Any, key: str, event: int) -> list[dict[str, Any]]:
    """A message's content as blocks; images replaced by their URL."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for position, block in enumerate(content or []):
        if isinstance(block, dict) and block.get("type") == "image":
            blocks.append(
                {
                    "type": "image",
                    "url": _image_url(key, event, position),
                    "mime_type": block.get("mime_type"),
                }
            )
        elif isinstance(block, dict):
            blocks.append({"type": "text", "text": str(block.get("text", ""))})
    return blocks


def _transcript_entry(key: str, position: int, event: dict[str, Any]) -> dict[str, Any] | None:
    """One log event as the page shows it (None for events it does not show)."""
    kind = event.get("event")
    entry: dict[str, Any] = {"event": kind, "t": event.get("t")}
    if kind == "start":
        entry.update(
            {name: event.get(name) for name in ("model", "mode", "tools", "limits", "task_id")}
        )
    elif kind in ("message", "model_call"):
        message = event.get("message") or {}
        entry.update(
            role=message.get("role"),
            content=_content(message.get("content"), key, position),
            reasoning=message.get("reasoning"),
            tool_calls=[
                {"id": call.get("id"), "name": call.get("name"), "arguments": call.get("arguments")}
                for call in message.get("tool_calls") or []
            ],
            tool_call_id=message.get("tool_call_id"),
        )
        if kind == "model_call":
            entry.update(
                {
                    name: event.get(name)
                    for name in ("turn", "seconds", "usage", "cost_usd", "cached", "stop_reason")
                }
            )
    elif kind == "tool_call":
        entry.update(
            {
                name: event.get(name)
                for name in ("turn", "id", "name", "arguments", "is_error", "seconds", "result")
            }
        )
        if event.get("name") == VIEW_STEP_TOOL:
            entry["step"] = step_number(event.get("arguments"))
    elif kind in ("limit", "verdict"):
        entry.update({name: event.get(name) for name in ("reason", "detail")})
    else:
        return None
    return entry


def _safe_file(root: Path, relative: str) -> Path | None:
    """``root/relative`` when it stays inside ``root`` and is a file."""
    if "\x00" in relative:
        return None
    candidate = (root / relative).resolve()
    base = root.resolve()
    if candidate != base and base not in candidate.parents:
        return None
    return candidate if candidate.is_file() else None


class RunPages:
    """Answers the run, trajectory and image requests of one viewer."""

    def __init__(self, source: ViewSource, index: RunIndex) -> None:
        self.source = source
        self.index = index
        self._fidelity: dict[str, FidelityReport] | None = None

    def record(self, row: RunRow) -> dict[str, Any] | None:
        """The run's line of ``verdicts.jsonl``, read by its byte range."""
        verdicts = self.source.verdicts
        if verdicts is None or row.kind != "judge":
            return None
        with verdicts.open("rb") as handle:
            handle.seek(row.offset)
            line = handle.read(row.length)
        try:
            record: dict[str, Any] = json.loads(line)
        except ValueError:
            return None
        return record if record.get("key") == row.key else None

    def log_file(self, key: str) -> Path | None:
        """The run's transcript file, when there is one."""
        if self.source.results is None or key not in self.index.by_key:
            return None
        path = self.source.results / LOGS_DIR / f"{key}.jsonl"
        return path if path.is_file() else None

    def transcript(self, key: str) -> list[dict[str, Any]]:
        """The run's log events as the page shows them (empty without a log)."""
        path = self.log_file(key)
        if path is None:
            return []
        entries: list[dict[str, Any]] = []
        for position, line in _log_lines(path):
            if line is None:
                continue  # too large to show; the raw log (``?raw=1``) still has it
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a line torn by a kill
            entry = _transcript_entry(key, position, event)
            if entry is not None:
                entries.append(cut_texts(entry))
        return entries

    def image(self, key: str, event: int, block: int) -> tuple[bytes, str] | None:
        """An image of the transcript: its bytes and type."""
        path = self.log_file(key)
        if path is None:
            return None
        line = next((text for position, text in _log_lines(path) if position == event), None)
        if line is None:
            return None
        try:
            message = json.loads(line).get("message") or {}
            content = message.get("content")
            found = content[block] if isinstance(content, list) else None
            if not isinstance(found, dict) or found.get("type") != "image":
                return None
            return base64.b64decode(found["data"]), str(found.get("mime_type") or "image/png")
        except (ValueError, KeyError, IndexError, TypeError):
            return None

    def trajectory(self, trajectory_id: str) -> tuple[Trajectory, Task | None] | None:
        """The trajectory and its task, read from their own files (None when the trajectory
        file is not there; a task file that does not validate counts as absent)."""
        folder = self.source.trajectories
        if folder is None or self.source.dataset is None:
            return None
        path = _safe_file(folder, f"{trajectory_id}.json")
        if path is None:
            return None
        size = path.stat().st_size
        if size > TRAJECTORY_FILE_LIMIT:
            raise TooLargeError(
                f"{path.name} holds {size / 2**20:,.0f} MiB, more than the viewer reads for a page"
                f" ({TRAJECTORY_FILE_LIMIT / 2**20:,.0f} MiB); open it with another tool"
            )
        trajectory = Trajectory.model_validate_json(path.read_bytes())
        task_path = self.source.dataset / TASKS_DIR / trajectory.task_id / TASK_FILE
        try:
            task = Task.model_validate_json(task_path.read_bytes())
        except (OSError, ValidationError):
            task = None
        return trajectory, task

    def screenshot(self, relative: str) -> Path | None:
        """A trajectory screenshot file, when the path stays inside the trajectories folder."""
        folder = self.source.trajectories
        return None if folder is None else _safe_file(folder, relative)

    def fidelity(self, trajectory_id: str) -> FidelityReport | None:
        """The trajectory's replay report (the last one in ``fidelity.jsonl``)."""
        if self._fidelity is None:
            path = self.source.fidelity
            reports = read_jsonl(path, FidelityReport) if path is not None else []
            self._fidelity = {report.trajectory_id: report for report in reports}
        return self._fidelity.get(trajectory_id)

    def trajectory_payload(self, trajectory_id: str) -> dict[str, Any] | None:
        """The trajectory page's data: task, steps (screenshots as URLs), label, replay report
        and corrections."""
        loaded = self.trajectory(trajectory_id)
        if loaded is None:
            return None
        trajectory, task = loaded
        steps = []
        for step in trajectory.steps:
            data = step.model_dump(mode="json", exclude_none=True)
            shot = step.observation.screenshot if step.observation is not None else None
            if shot is not None:
                data["screenshot_url"] = f"/files/{TRAJECTORIES_DIR}/{quote(shot)}"
            steps.append(data)
        fidelity = self.fidelity(trajectory_id)
        corrections = [
            correction.model_dump(mode="json")
            for key, correction in self.index.corrections.items()
            if key[0] == trajectory_id
        ]
        payload: dict[str, Any] = cut_texts(
            {
                "id": trajectory.id,
                "task": task.model_dump(mode="json") if task is not None else None,
                "agent": trajectory.agent,
                "model": trajectory.model,
                "label": trajectory.label.model_dump(mode="json") if trajectory.label else None,
                "items": [item.model_dump(mode="json") for item in trajectory.items],
                "final_response": trajectory.final_response,
                "stop_reason": trajectory.stop_reason,
                "initial_observation": trajectory.metadata.get("initial_observation"),
                "steps": steps,
                "fidelity": fidelity.model_dump(mode="json") if fidelity is not None else None,
                "corrections": corrections,
            }
        )
        return payload

    def run_payload(self, row: RunRow) -> dict[str, Any]:
        """The run page's data: the row, the record's verdict, the transcript, the trajectory
        (None, with ``trajectory_error`` saying why, when it cannot be shown) and the other runs
        of the same trajectory."""
        record = self.record(row)
        trajectory: dict[str, Any] | None = None
        trajectory_error: str | None = None
        try:
            trajectory = self.trajectory_payload(row.trajectory_id)
        except ValidationError as error:
            trajectory_error = f"{row.trajectory_id}.json does not validate: {error}"
        except TooLargeError as error:
            trajectory_error = str(error)
        if trajectory is None and trajectory_error is None:
            trajectory_error = (
                "the results folder's dataset was not found (open the viewer with --dataset)"
                if self.source.dataset is None
                else f"no trajectory file {row.trajectory_id}.json in {self.source.dataset}"
            )
        return {
            "row": {
                **row.model_dump(mode="json"),
                "config": row.config,
                "label_now": self.index.label_of(row),
                "wrong": self.index.is_wrong(row),
            },
            "verdict": (record or {}).get("verdict"),
            "environment": (record or {}).get("environment"),
            "transcript": self.transcript(row.key),
            "has_log": self.log_file(row.key) is not None,
            "trajectory": trajectory,
            "trajectory_error": trajectory_error,
            "siblings": [
                {
                    "key": other.key,
                    "config": other.config,
                    "run": other.run,
                    "verdict": other.verdict,
                }
                for other in self.index.runs_of(row.trajectory_id)
                if other.key != row.key and other.kind == "judge"
            ],
        }


LOG_LINE_LIMIT = 64 * 2**20
"""Log events larger than this (a huge observation) are left out of the transcript page."""


def _log_lines(path: Path) -> Iterator[tuple[int, bytes | None]]:
    """The lines of a run log with their positions, read one at a time and each at most
    ``LOG_LINE_LIMIT`` bytes (None stands for a longer line, skipped without being held), so a
    log with a huge observation never sits in memory whole."""
    with path.open("rb") as stream:
        position = 0
        while line := stream.readline(LOG_LINE_LIMIT + 1):
            if len(line) > LOG_LINE_LIMIT and not line.endswith(b"\n"):
                while (rest := stream.readline(2**20)) and not rest.endswith(b"\n"):
                    pass
                yield position, None
            else:
                yield position, line.rstrip(b"\n")
            position += 1
