"""OSWorld's ``traj.jsonl`` as steps, for both action spaces.

Owns reading the file line by line (a bad line is reported with its number and the others kept),
turning each recorded action into a ``Computer13Action`` or ``PyAutoGuiAction``, the step's
screenshot file, time and reasoning, and the facts about how the run ended that the file holds
(an ``Error`` line, the ``done`` flag, the agent's last signal). OSWorld records one line per
executed action; actions parsed from one model answer share that answer's ``response``, which is
kept on the first of them and referred to from the others.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from dataset.actions import Computer13Action, PyAutoGuiAction
from dataset.problems import ProblemLog

__all__ = [
    "CONTROL_SIGNALS",
    "OSWORLD_SCREEN",
    "RecordedStep",
    "RecordedSteps",
    "parse_action_timestamp",
    "read_steps",
]

CONTROL_SIGNALS = frozenset({"WAIT", "FAIL", "DONE"})
"""The bare signals both action spaces share."""

ActionSpace = Literal["computer_13", "pyautogui"]

OSWORLD_SCREEN = (1920, 1080)
"""The screen of OSWorld's VM (width, height): a recorded point outside it is reported."""

_POINTED = frozenset({"CLICK", "DOUBLE_CLICK", "RIGHT_CLICK", "MOUSE_DOWN", "MOUSE_UP"})
_BUTTONS = frozenset({"left", "right", "middle"})

_TIMESTAMP = re.compile(r"^(\d{8})@(\d{6})(\d{0,6})$")


@dataclass
class RecordedStep:
    """One line of ``traj.jsonl``, converted."""

    action: Computer13Action | PyAutoGuiAction
    """The action in the dataset's action union."""
    screenshot: Path | None
    """The screen after the action, when the file exists."""
    started_at: datetime | None
    """OSWorld's ``action_timestamp`` (taken just before the action ran)."""
    response: str | None
    """The model's answer the action came from."""
    reward: float | None
    """The reward OSWorld recorded with the step (its evaluator runs only at the end)."""
    done: bool
    """Whether OSWorld's environment considered the episode over after this step."""
    line: int
    """The line of ``traj.jsonl`` it came from."""


@dataclass
class RecordedSteps:
    """What ``traj.jsonl`` holds: the steps and how the run ended."""

    steps: list[RecordedStep] = field(default_factory=list)
    """The converted steps, in file order."""
    error: str | None = None
    """The message of an ``{"Error": ...}`` line (the run crashed), when there is one."""
    action_space: ActionSpace | None = None
    """The space the actions were in (dicts: ``computer_13``; code strings: ``pyautogui``)."""
    missing_screenshots: list[int] = field(default_factory=list)
    """Lines whose named screenshot file is not in the folder."""


def parse_action_timestamp(value: object) -> datetime | None:
    """OSWorld's ``%Y%m%d@%H%M%S`` stamp (microseconds optional) as a datetime, else None."""
    if not isinstance(value, str):
        return None
    match = _TIMESTAMP.match(value.strip())
    if match is None:
        return None
    day, clock, fraction = match.groups()
    try:
        stamp = datetime.strptime(f"{day}{clock}", "%Y%m%d%H%M%S")
    except ValueError:
        return None
    return stamp.replace(microsecond=int(fraction.ljust(6, "0"))) if fraction else stamp


def _space_of(action: object, hint: str | None) -> ActionSpace | None:
    if isinstance(action, dict):
        if "action_type" in action and not isinstance(action.get("command"), str):
            return "computer_13"
        return "pyautogui"
    if isinstance(action, str):
        if action.strip() in CONTROL_SIGNALS:
            return hint if hint in ("computer_13", "pyautogui") else None  # type: ignore[return-value]
        return "pyautogui"
    return None


def _convert_action(action: object, space: ActionSpace) -> Computer13Action | PyAutoGuiAction | str:
    """The action in the dataset's model, or why it cannot be read."""
    if isinstance(action, str):
        return _convert_string(action, space)
    if not isinstance(action, dict):
        return f"action must be an object or a string, not {type(action).__name__}"
    command = action.get("command")
    if isinstance(command, str):
        # Agents that wrap pyautogui code in an object (``{"action_type": ..., "command": ...}``).
        return PyAutoGuiAction(code=command)
    parameters = action.get("parameters") or {}
    if not isinstance(parameters, dict):
        return "parameters must be an object"
    try:
        converted = Computer13Action(action_type=action.get("action_type"), parameters=parameters)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "action"
        return f"{where}: {first['msg'].removeprefix('Value error, ')}"
    problem = computer13_argument_error(converted)
    return converted if problem is None else problem


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number_fault(parameters: dict[str, Any], names: tuple[str, ...]) -> str | None:
    for name in names:
        if name in parameters and not _is_number(parameters[name]):
            return f"parameters.{name}: must be a number, not {parameters[name]!r}"
    return None


def _point_fault(kind: str, parameters: dict[str, Any]) -> str | None:
    if kind not in _POINTED and kind not in ("MOVE_TO", "DRAG_TO"):
        return None
    has_x, has_y = "x" in parameters, "y" in parameters
    if has_x != has_y:
        given, absent = ("x", "y") if has_x else ("y", "x")
        return f"parameters.{absent}: {kind} has {given} without {absent}"
    return _number_fault(parameters, ("x", "y"))


def _mouse_fault(kind: str, parameters: dict[str, Any]) -> str | None:
    if "button" in parameters and parameters["button"] not in _BUTTONS:
        return f"parameters.button: must be left, right or middle, not {parameters['button']!r}"
    clicks = parameters.get("num_clicks", 1)
    if not (isinstance(clicks, int) and not isinstance(clicks, bool) and 1 <= clicks <= 3):
        return f"parameters.num_clicks: must be 1, 2 or 3, not {clicks!r}"
    return _number_fault(parameters, ("dx", "dy")) if kind == "SCROLL" else None


def _keyboard_fault(kind: str, parameters: dict[str, Any]) -> str | None:
    if kind == "TYPING" and not isinstance(parameters["text"], str):
        return f"parameters.text: must be text, not {parameters['text']!r}"
    key = parameters.get("key", "")
    if kind in ("PRESS", "KEY_DOWN", "KEY_UP") and not (isinstance(key, str) and key):
        return f"parameters.key: must be a key name, not {key!r}"
    keys = parameters.get("keys", [])
    if kind == "HOTKEY" and not all(isinstance(k, str) and k for k in keys):
        return "parameters.keys: must be a list of key names"
    return None


def computer13_argument_error(action: Computer13Action) -> str | None:
    """Why a ``computer_13`` action's arguments could not have run, as ``parameters.<name>:
    reason`` (OSWorld's controller raised for them, so the step did nothing); None when they
    could. A point off the screen is not such an error (see ``off_screen``)."""
    parameters: dict[str, Any] = dict(action.parameters)
    for check in (_point_fault, _mouse_fault, _keyboard_fault):
        fault = check(action.action_type, parameters)
        if fault is not None:
            return fault
    return None


def off_screen(action: Computer13Action, screen: tuple[int, int] = OSWORLD_SCREEN) -> str | None:
    """``parameters.x: 5000 is off the 1920x1080 screen`` for a point outside ``screen``."""
    for name, size in zip(("x", "y"), screen, strict=True):
        value = action.parameters.get(name)
        if _is_number(value) and not 0 <= value < size:  # type: ignore[operator]
            return (
                f"parameters.{name}: {value} is off OSWorld's {screen[0]}x{screen[1]} screen "
                "(a pointer sent there stops at the edge)"
            )
    return None


def _convert_string(action: str, space: ActionSpace) -> Computer13Action | PyAutoGuiAction | str:
    text = action.strip()
    if not text:
        return "empty action"
    if space == "pyautogui":
        return PyAutoGuiAction(code=text if text in CONTROL_SIGNALS else action)
    if text not in CONTROL_SIGNALS:
        return f"computer_13 action is a string that is not WAIT, FAIL or DONE: {text!r}"
    return Computer13Action.model_validate({"action_type": text})


def read_steps(
    path: Path, log: ProblemLog, *, space_hint: str | None = None
) -> RecordedSteps | None:
    """Read ``traj.jsonl`` at ``path``; None (logged) when the file cannot be read at all.

    ``space_hint`` is the action space the results tree names, used for the bare
    WAIT/FAIL/DONE strings that fit either space. Bad lines are logged with their number.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        log.add(path, f"cannot be read: {error}")
        return None
    recorded = RecordedSteps()
    folder = path.parent
    records: list[tuple[int, dict[str, Any]]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as error:
            log.add(path, f"line {number}: invalid JSON at column {error.colno}: {error.msg}")
            continue
        if not isinstance(record, dict):
            log.add(path, f"line {number}: expected an object, got {type(record).__name__}")
            continue
        if "Error" in record and "action" not in record:
            recorded.error = str(record["Error"])
            continue
        if "action" not in record:
            log.add(path, f"line {number}: no 'action' field", field="action")
            continue
        records.append((number, record))

    hint = space_hint if space_hint in ("computer_13", "pyautogui") else None
    spaces = {_space_of(record["action"], None) for _, record in records} - {None}
    if len(spaces) > 1:
        log.add(
            path,
            "mixes computer_13 objects and pyautogui code; each line read on its own",
            severity="warning",
        )
    recorded.action_space = (
        next(iter(spaces)) if len(spaces) == 1 else hint if hint else None  # type: ignore[assignment]
    )
    default_space: ActionSpace = recorded.action_space or "pyautogui"
    for number, record in records:
        space = _space_of(record["action"], default_space) or default_space
        action = _convert_action(record["action"], space)
        if isinstance(action, str):
            log.add(path, f"line {number}: {action} (the step is left out)", field="action")
            continue
        outside = off_screen(action) if isinstance(action, Computer13Action) else None
        if outside is not None:
            log.add(path, f"line {number}: {outside}", field="action", severity="warning")
        screenshot = _screenshot(folder, record.get("screenshot_file"))
        if record.get("screenshot_file") and screenshot is None:
            recorded.missing_screenshots.append(number)
        reward = record.get("reward")
        response = record.get("response")
        recorded.steps.append(
            RecordedStep(
                action=action,
                screenshot=screenshot,
                started_at=parse_action_timestamp(record.get("action_timestamp")),
                response=response if isinstance(response, str) and response.strip() else None,
                reward=float(reward) if isinstance(reward, int | float) else None,
                done=record.get("done") is True,
                line=number,
            )
        )
    return recorded


def _screenshot(folder: Path, name: object) -> Path | None:
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name in {".", ".."}:
        return None
    candidate = folder / name
    # A link leading out of the run folder is not the run's screenshot: never copy it in.
    inside = candidate.resolve().is_relative_to(folder.resolve())
    return candidate if inside and candidate.is_file() else None
