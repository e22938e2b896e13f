"""What a mobile suite task is: its instruction, starting app data, check, and scripted runs.

A scripted run is a list of ``Move``s. A move names its target the way a person reading the
screen would (an element's resource id, its text or its description); when the run is recorded,
the target is looked up in the element list the device server last answered with, and the move
becomes an AndroidWorld action with that element's index, as an agent's action would be.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from dataset.actions import AndroidAction
from dataset.models import Task

__all__ = ["MobilePolicy", "MobileTask", "Move", "MoveError", "find_element", "parse_listing"]

HardCase = Literal[
    "success-mid-trajectory",
    "change-not-on-last-screen",
    "last-screen-misleads",
]
"""The paper's hard cases a run exercises: success visible only in the middle of the run, a
state change the last screen does not show, a last screen that looks right but is not."""


class MoveError(LookupError):
    """A move's target is not on the screen the run was shown."""


def parse_listing(listing: str) -> list[dict[str, Any]]:
    """The element list a device server answered with (``UI element <i>: {json}`` lines)."""
    elements = []
    for line in listing.splitlines():
        if line.startswith("UI element ") and ": " in line:
            elements.append(json.loads(line.split(": ", 1)[1]))
    return elements


def find_element(
    elements: list[dict[str, Any]], target: str, by: Literal["id", "text", "desc"]
) -> int:
    """The index of the first element whose resource id ends in ``:id/<target>``, whose text is
    ``target`` or whose description is ``target``."""
    for element in elements:
        if by == "id" and str(element.get("resource_name", "")).endswith(f":id/{target}"):
            return int(element["index"])
        if by == "text" and element.get("text") == target:
            return int(element["index"])
        if by == "desc" and element.get("content_description") == target:
            return int(element["index"])
    shown = ", ".join(
        str(element.get("resource_name") or element.get("text") or "?") for element in elements
    )
    raise MoveError(f"no element with {by} {target!r} on the screen (shown: {shown})")


@dataclass(frozen=True)
class Move:
    """One step of a scripted agent: its reasoning and its action."""

    reasoning: str
    """What the agent says it is doing."""
    action: str
    """The AndroidWorld ``action_type``."""
    target: str | None = None
    """The element acted on, found by ``by``; None for actions without a target."""
    by: Literal["id", "text", "desc"] = "id"
    """How ``target`` names the element."""
    fields: dict[str, Any] = field(default_factory=dict)
    """The action's other fields (``text``, ``direction``, ``app_name``, ``goal_status``...)."""

    def resolve(self, listing: str) -> AndroidAction:
        """The action, with the target's index in the element list ``listing``."""
        index = None
        if self.target is not None:
            index = find_element(parse_listing(listing), self.target, self.by)
        return AndroidAction(action_type=self.action, index=index, **self.fields)


def tap(reasoning: str, target: str, by: Literal["id", "text", "desc"] = "id") -> Move:
    """Tap an element."""
    return Move(reasoning, "click", target, by)


def type_into(reasoning: str, target: str, text: str, *, clear: bool = False) -> Move:
    """Type into the element with resource id ``target``."""
    return Move(reasoning, "input_text", target, "id", {"text": text, "clear_text": clear})


def open_app(reasoning: str, name: str) -> Move:
    """Open an app by its name."""
    return Move(reasoning, "open_app", fields={"app_name": name})


def key(reasoning: str, action: Literal["navigate_home", "navigate_back"]) -> Move:
    """Home or back."""
    return Move(reasoning, action)


def scroll(reasoning: str, direction: Literal["up", "down"]) -> Move:
    """Scroll the whole screen."""
    return Move(reasoning, "scroll", fields={"direction": direction})


def done(reasoning: str, status: Literal["complete", "infeasible"] = "complete") -> Move:
    """End the episode."""
    return Move(reasoning, "status", fields={"goal_status": status})


@dataclass(frozen=True)
class MobilePolicy:
    """One scripted run of a task."""

    name: str
    """Short id, unique within the task; the trajectory id is ``<task id>--<name>``."""
    agent: str
    """The scripted agent's name (several tasks' runs share one, so agents can be ranked)."""
    moves: list[Move]
    """The script."""
    intent: Literal["PASS", "FAIL"]
    """What the script means to achieve; the build stops when the verifier disagrees."""
    note: str
    """What the run does, in one line."""
    hard_case: HardCase | None = None
    """The hard case it exercises, if any."""
    final_response: str | None = None
    """What the agent tells the user at the end."""


@dataclass(frozen=True)
class MobileTask:
    """A task with its starting data, its check and its scripted runs."""

    task: Task
    """The record (initial state: the web snapshot folder ``device``)."""
    storage: dict[str, dict[str, Any]]
    """Each app's starting state (app id -> the JSON its ``state`` key holds)."""
    check: Callable[[dict[str, Any]], bool]
    """The check on the phone's final state (copied into ``verify.py``)."""
    policies: list[MobilePolicy]
    """The scripted runs."""
