"""Reading an MCPMark ``messages.json`` (OpenAI Agents SDK items) into pending steps.

Owns pairing each ``function_call`` with its ``function_call_output`` by ``call_id``, unwrapping
the doubly JSON-encoded tool results, flagging failed calls, and keeping assistant text as step
reasoning. Knows nothing about ``meta.json``, task folders or path rewriting.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from dataset.actions import ToolCallAction
from dataset.importers.mcpmark.services import reads_as_unflagged_error
from dataset.models import Observation
from dataset.problems import ProblemLog

# Plain-text results that report a failed call: MCP servers' "Error: ..." and the Agents SDK's
# own wrapper for exceptions raised by a tool.
_ERROR_TEXT = re.compile(r"^\s*(Error\b|An error occurred while running the tool)")


@dataclass
class PendingStep:
    """A tool call as recorded, waiting for its output (paths not yet rewritten)."""

    action: ToolCallAction
    reasoning: str | None
    position: int
    observation: Observation | None = None
    is_error: bool = False
    has_output: bool = False


@dataclass
class Conversation:
    """What a ``messages.json`` holds: the first user message, the calls, the final text."""

    instruction: str
    steps: list[PendingStep]
    final_response: str | None

    def texts(self) -> Iterator[str]:
        """Every text of the conversation, for scanning recorded paths."""
        yield self.instruction
        if self.final_response:
            yield self.final_response
        for step in self.steps:
            if step.reasoning:
                yield step.reasoning
            yield from strings(step.action.arguments)
            if step.observation is not None and step.observation.text:
                yield step.observation.text


class ConversationReader:
    """Walks the Agents SDK items of one ``messages.json``, turning tool calls into steps."""

    def __init__(self, path: Path, log: ProblemLog, server: str | None = None) -> None:
        self.path = path
        self.log = log
        self.server = server
        self.instruction: str | None = None
        self.steps: list[PendingStep] = []
        self.by_call_id: dict[str, PendingStep] = {}
        self.pending_text: list[str] = []
        self.handlers: dict[str, Callable[[dict[str, Any], int], None]] = {
            "user": self._on_user,
            "assistant": self._on_assistant,
            "reasoning": self._on_reasoning,
            "function_call": self._on_call,
            "function_call_output": self._on_output,
        }

    def read(self, messages: list[Any]) -> Conversation | None:
        """The conversation of ``messages``; None (logged) when it has no user message."""
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
        return Conversation(self.instruction, self.steps, self._take_text())

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
        step = PendingStep(action=action, reasoning=self._take_text(), position=position)
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
        text, is_error = decode_tool_output(item.get("output"), self.server)
        step.observation = Observation(text=text)
        step.is_error = is_error
        step.has_output = True


def decode_tool_output(raw: object, server: str | None = None) -> tuple[str, bool]:
    """Unwrap a recorded tool result into ``(text, is_error)``.

    MCPMark stores a JSON string of ``{"type": "text", "text": <JSON of a CallToolResult>}``;
    failed calls may instead be plain ``"Error: ..."`` text. Each layer is unwrapped only if it
    parses, so partially encoded or plain outputs come through as the text they are. A
    CallToolResult flagged ``isError`` is an error; so is one of a ``server`` that reports
    failures as ordinary content when its single text block reads as such a failure
    (``services.reads_as_unflagged_error``). Plain text counts as an error when it reads as one.
    """
    value: object = raw
    for _ in range(4):  # a few layers at most; stop as soon as nothing more unwraps
        unwrapped = _unwrap_once(value)
        if unwrapped is None:
            break
        value = unwrapped
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        content: list[Any] = value["content"]
        text = _content_text(content)
        if value.get("isError"):
            return text, True
        single_text = len(content) == 1 and isinstance(content[0], dict)
        single_text = single_text and content[0].get("type") == "text"
        return text, single_text and reads_as_unflagged_error(server, text)
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


def strings(value: object) -> Iterator[str]:
    """Every string in a JSON value, however deeply nested."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
