"""Reading the action records of Android and web trajectory sources into the unified action union.

Owns three source shapes: AndroidWorld's JSON action objects (``{"action_type": "click",
"index": 3}``, also embedded in an agent's text after ``Action:``), call-like action strings as
SPA-Bench and A3 logs write them (``tap(540, 1200)``, ``swipe(100, 1500, 100, 400)``,
``type("milk")``, ``back()``, ...), and BrowserGym call strings (``click('a51')``) for web
trajectories, which become ``tool_call`` actions. A record that fits none becomes an ``unknown``
Android action carrying the raw text, never a guessed one.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from pydantic import JsonValue, ValidationError

from dataset.actions import Action, AndroidAction, ToolCallAction

__all__ = [
    "ActionError",
    "android_action_from_object",
    "android_action_from_text",
    "browser_action_from_text",
    "swipe_direction",
]


class ActionError(ValueError):
    """An action record that cannot be read; the message says what is wrong with it."""


_ANDROID_FIELDS = {
    "action_type",
    "index",
    "x",
    "y",
    "direction",
    "text",
    "clear_text",
    "app_name",
    "goal_status",
}
_ALIASES = {
    "tap": "click",
    "click": "click",
    "double_tap": "double_tap",
    "long_press": "long_press",
    "longpress": "long_press",
    "scroll": "scroll",
    "swipe": "swipe",
    "type": "input_text",
    "text": "input_text",
    "input": "input_text",
    "input_text": "input_text",
    "back": "navigate_back",
    "navigate_back": "navigate_back",
    "home": "navigate_home",
    "navigate_home": "navigate_home",
    "enter": "keyboard_enter",
    "keyboard_enter": "keyboard_enter",
    "open_app": "open_app",
    "launch": "open_app",
    "open": "open_app",
    "wait": "wait",
    "finish": "status",
    "done": "status",
    "complete": "status",
    "status": "status",
    "infeasible": "status",
    "answer": "answer",
}


def swipe_direction(x1: int, y1: int, x2: int, y2: int) -> str:
    """Which way a finger moving from (x1, y1) to (x2, y2) went, by its larger component."""
    dx, dy = x2 - x1, y2 - y1
    if abs(dx) > abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def android_action_from_object(record: object) -> AndroidAction:
    """An AndroidWorld JSON action (fields without a slot are kept in ``extra``)."""
    if not isinstance(record, dict):
        raise ActionError(f"an action must be a JSON object, got {type(record).__name__}")
    fields: dict[str, Any] = {}
    extra: dict[str, JsonValue] = {}
    for key, value in record.items():
        if key in _ANDROID_FIELDS:
            fields[key] = value
        else:
            extra[str(key)] = value
    kind = str(fields.get("action_type", "")).strip().lower()
    if not kind:
        raise ActionError("the action has no action_type")
    fields["action_type"] = _ALIASES.get(kind, kind)
    for key in ("x", "y", "index"):
        if isinstance(fields.get(key), float):
            fields[key] = round(fields[key])
    if fields["action_type"] == "status" and fields.get("goal_status") in ("task_complete", None):
        fields["goal_status"] = "complete" if kind != "infeasible" else "infeasible"
    try:
        return AndroidAction(**fields, extra=extra)
    except ValidationError as error:
        details = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'action'}: {e['msg']}"
            for e in error.errors(include_url=False)
        )
        raise ActionError(f"action {json.dumps(record)[:120]}: {details}") from None


_EMBEDDED = re.compile(r"Action:\s*(\{.*\})", re.DOTALL)
_CALL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)


def _arguments(text: str) -> list[Any]:
    """The literal arguments of a call string (numbers, strings, keyword values in order)."""
    if not text.strip():
        return []
    try:
        call = ast.parse(f"f({text})", mode="eval").body
    except SyntaxError:
        raise ActionError(f"cannot read the arguments {text!r}") from None
    assert isinstance(call, ast.Call)
    values: list[Any] = []
    for node in [*call.args, *(keyword.value for keyword in call.keywords)]:
        try:
            values.append(ast.literal_eval(node))
        except ValueError:
            values.append(ast.unparse(node))
    return values


def _touch(kind: str, numbers: list[int], words: list[str]) -> AndroidAction | None:
    if len(numbers) >= 2:
        return AndroidAction(action_type=kind, x=numbers[0], y=numbers[1])
    if len(numbers) == 1:
        return AndroidAction(action_type=kind, index=numbers[0])
    return None


def _motion(kind: str, numbers: list[int], words: list[str]) -> AndroidAction | None:
    if len(numbers) >= 4:
        x1, y1, x2, y2 = numbers[:4]
        return AndroidAction(
            action_type=kind,
            x=x1,
            y=y1,
            direction=swipe_direction(x1, y1, x2, y2),
            extra={"end_x": x2, "end_y": y2},
        )
    direction = next((w.lower() for w in words if w.lower() in _DIRECTIONS), None)
    if direction is None:
        return None
    at = {"x": numbers[0], "y": numbers[1]} if len(numbers) >= 2 else {}
    return AndroidAction(action_type=kind, direction=direction, **at)


def _worded(kind: str, numbers: list[int], words: list[str]) -> AndroidAction | None:
    if not words:
        return None
    field = {"input_text": "text", "answer": "text", "open_app": "app_name"}[kind]
    return AndroidAction(action_type=kind, **{field: words[0]})


def _plain(kind: str, numbers: list[int], words: list[str]) -> AndroidAction | None:
    return AndroidAction(action_type=kind)


_BUILDERS = {
    "click": _touch,
    "double_tap": _touch,
    "long_press": _touch,
    "swipe": _motion,
    "scroll": _motion,
    "input_text": _worded,
    "open_app": _worded,
    "answer": _worded,
    "navigate_back": _plain,
    "navigate_home": _plain,
    "keyboard_enter": _plain,
    "wait": _plain,
}


def android_action_from_text(text: str) -> AndroidAction:
    """An action written as AndroidWorld JSON after ``Action:``, bare JSON, or a call string;
    an ``unknown`` action with the raw text when it is none of these."""
    stripped = text.strip()
    embedded = _EMBEDDED.search(stripped)
    candidate = embedded.group(1) if embedded else stripped
    if candidate.startswith("{"):
        try:
            return android_action_from_object(json.loads(candidate))
        except json.JSONDecodeError:
            pass
    unknown = AndroidAction(action_type="unknown", extra={"raw": stripped})
    match = _CALL.match(stripped)
    verb = match.group(1).lower() if match else ""
    kind = _ALIASES.get(verb)
    if match is None or kind is None:
        return unknown
    values = _arguments(match.group(2) or "")
    numbers = [round(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    words = [v for v in values if isinstance(v, str)]
    if kind == "status":
        infeasible = verb == "infeasible" or any("infeasible" in w.lower() for w in words)
        return AndroidAction(
            action_type="status", goal_status="infeasible" if infeasible else "complete"
        )
    try:
        return _BUILDERS[kind](kind, numbers, words) or unknown
    except ValidationError:
        return unknown


_DIRECTIONS = {"up", "down", "left", "right"}


def browser_action_from_text(text: str) -> Action:
    """A BrowserGym call string (``click('a51')``, ``fill('12', 'milk')``) as a tool call whose
    arguments are the call's literal values in order (``arg1``, ``arg2``, ...)."""
    stripped = text.strip()
    match = _CALL.match(stripped)
    if match is None or not stripped:
        raise ActionError(f"not a call: {stripped[:80]!r}")
    try:
        values = _arguments(match.group(2) or "")
    except ActionError:
        values = [match.group(2)]
    arguments: dict[str, JsonValue] = {
        f"arg{position}": value if isinstance(value, str | int | float | bool) else str(value)
        for position, value in enumerate(values, start=1)
    }
    return ToolCallAction(name=match.group(1), arguments=arguments)
