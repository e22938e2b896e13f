"""AJ-Bench's one-action-per-answer form: an ``ACTION: {...}`` line read as a tool call.

AJ-Bench's GUI judges answer with one JSON action per turn, in OSWorld's ``computer_13`` shape
(``ACTION: {"action_type": "CLICK", "parameters": {"x": 640, "y": 212}}``), until they give
their verdict. Owns recognising such a line in a model's answer and turning it into the name and
arguments of a call of the judge's tools: the action type names the tool (matched without
regard to case against the tools offered: ``click`` calls ``CLICK``), and the arguments are the
``parameters`` object, or the object's other keys when it is flat
(``{"action_type": "CLICK", "x": 640, "y": 212}``). ``action``, ``tool`` and ``name`` are
accepted in place of ``action_type``; a code fence around the object is tolerated. Must not run
anything: the conversations (``judge_agent.conversation``) do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass

from pydantic import JsonValue

__all__ = ["ActionLine", "ActionLineError", "find_action_line", "has_action_line"]

_LINE = re.compile(
    r"^[ \t>]*[*_`]*\s*action\s*[*_`]*\s*:[*_`]*[ \t]*(?:```[A-Za-z0-9_-]*\s*)?(?=\{)",
    re.IGNORECASE | re.MULTILINE,
)
_NAME_KEYS = ("action_type", "action", "tool", "name")


@dataclass(frozen=True)
class ActionLine:
    """A tool call read from an ``ACTION: {...}`` line."""

    tool: str
    """The tool's name, as offered (its case restored)."""
    arguments: dict[str, JsonValue]
    """The call's arguments."""


@dataclass(frozen=True)
class ActionLineError:
    """An ``ACTION:`` line that cannot be used; ``message`` is worded for the model."""

    message: str
    """Why, and what to write instead."""


def has_action_line(text: str) -> bool:
    """Whether ``text`` holds an ``ACTION:`` line followed by a JSON object."""
    return _LINE.search(text) is not None


def find_action_line(
    text: str, tool_names: Collection[str] | None
) -> ActionLine | ActionLineError | None:
    """The call an answer's ``ACTION: {...}`` line asks for; None when it has no such line.

    ``tool_names`` are the tools the model may call (None: any name is taken as written)."""
    matches = list(_LINE.finditer(text))
    if not matches:
        return None
    if len(matches) > 1:
        return ActionLineError(
            "Your answer holds more than one ACTION line. Give exactly one action per answer "
            "and wait for the observation it returns."
        )
    start = matches[0].end()
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as error:
        return ActionLineError(
            f"The JSON object after ACTION: is not valid ({error.msg} at character {error.pos})."
        )
    if not isinstance(value, dict):
        return ActionLineError("ACTION: must be followed by one JSON object.")
    return _as_call(value, tool_names)


def _as_call(
    value: dict[str, JsonValue], tool_names: Collection[str] | None
) -> ActionLine | ActionLineError:
    key = next((k for k in _NAME_KEYS if isinstance(value.get(k), str) and value[k]), None)
    if key is None:
        return ActionLineError(
            'The ACTION object names no action: write it as {"action_type": "CLICK", '
            '"parameters": {"x": 100, "y": 200}}.'
        )
    written = str(value[key]).strip()
    parameters = value.get("parameters")
    arguments: dict[str, JsonValue] = dict(parameters) if isinstance(parameters, dict) else {}
    for name, item in value.items():
        if name not in (key, "parameters"):
            arguments.setdefault(name, item)
    if tool_names is None:
        return ActionLine(tool=written, arguments=arguments)
    by_case = {name.casefold(): name for name in tool_names}
    tool = by_case.get(written.casefold())
    if tool is None:
        return ActionLineError(
            f"There is no action or tool named {written!r}. The tools are: "
            f"{', '.join(sorted(tool_names))}."
        )
    return ActionLine(tool=tool, arguments=arguments)
