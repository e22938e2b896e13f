"""What a GUI suite task is: its starting document, its check, and its scripted runs.

A scripted run is a list of ``Move``s, each the agent's reasoning and one keyboard action in
``computer_13`` terms. A policy records in one action space: ``computer_13`` (the move as a
structured action) or ``pyautogui`` (the move written as the code an agent would emit). Both are
performed by the desktop kind's action executor, the one replay uses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from dataset.actions import Computer13Action, PyAutoGuiAction
from dataset.models import Task

__all__ = [
    "ActionSpace",
    "FailureKind",
    "GuiPolicy",
    "GuiTask",
    "Move",
    "done",
    "hotkey",
    "press",
    "type_text",
    "wait",
]

ActionSpace = Literal["computer_13", "pyautogui"]
"""How a policy writes its actions."""

FailureKind = Literal[
    "not-saved",
    "wrong-target",
    "visible-rows-only",
    "silent-failure",
    "partial",
]
"""How an intended failure fails, each hard to see from the screens but plain in the saved
file: changes never saved; the right change on the wrong paragraph, sheet or slide; a formula
that covers only the rows on screen; success claimed after a step that silently did nothing
useful; the change applied to part of what was asked."""


@dataclass(frozen=True)
class Move:
    """One step of a scripted agent: its reasoning and one ``computer_13`` action."""

    reasoning: str
    """What the agent says it is doing."""
    action_type: str
    """``HOTKEY``, ``PRESS``, ``TYPING``, ``WAIT`` or ``DONE``."""
    keys: tuple[str, ...] = ()
    """HOTKEY's keys, or PRESS's one key."""
    text: str = ""
    """TYPING's text."""
    presses: int = 1
    """How many times a PRESS or HOTKEY is repeated: one ``pyautogui`` call; ``computer_13``
    has no repeat, so such a move exists only in ``pyautogui`` policies."""

    def action(self, space: ActionSpace) -> Computer13Action | PyAutoGuiAction:
        """The move as an action of ``space``."""
        if space == "computer_13":
            if self.presses != 1:
                raise ValueError(f"computer_13 has no repeated {self.action_type}")
            parameters: dict[str, object] = {}
            if self.action_type == "HOTKEY":
                parameters = {"keys": list(self.keys)}
            elif self.action_type == "PRESS":
                parameters = {"key": self.keys[0]}
            elif self.action_type == "TYPING":
                parameters = {"text": self.text}
            return Computer13Action(action_type=self.action_type, parameters=parameters)
        if self.action_type in ("WAIT", "DONE", "FAIL"):
            return PyAutoGuiAction(code=self.action_type)
        if self.action_type == "HOTKEY":
            call = f"pyautogui.hotkey({', '.join(repr(key) for key in self.keys)})"
            if self.presses != 1:
                call = f"for _ in range({self.presses}):\n    {call}"
        elif self.action_type == "PRESS":
            count = f", presses={self.presses}" if self.presses != 1 else ""
            call = f"pyautogui.press({self.keys[0]!r}{count})"
        elif self.action_type == "TYPING":
            call = f"pyautogui.typewrite({self.text!r})"
        else:
            raise ValueError(f"no pyautogui form for {self.action_type}")
        return PyAutoGuiAction(code=f"import pyautogui\n{call}")


def hotkey(reasoning: str, *keys: str, times: int = 1) -> Move:
    """A key combination, e.g. ``hotkey("...", "ctrl", "b")``, ``times`` over."""
    return Move(reasoning, "HOTKEY", keys=keys, presses=times)


def press(reasoning: str, key: str, times: int = 1) -> Move:
    """One key, ``times`` over."""
    return Move(reasoning, "PRESS", keys=(key,), presses=times)


def type_text(reasoning: str, text: str) -> Move:
    """Type ``text`` at the keyboard focus."""
    return Move(reasoning, "TYPING", text=text)


def wait(reasoning: str) -> Move:
    """Wait and look."""
    return Move(reasoning, "WAIT")


def done(reasoning: str) -> Move:
    """End the run."""
    return Move(reasoning, "DONE")


SAVE_KEEP_FORMAT: tuple[Move, ...] = (
    hotkey("Save the document with ctrl+s.", "ctrl", "s"),
    press("LibreOffice asks whether to keep the Office format; keep it.", "enter"),
)
"""Saving an Office file in LibreOffice: ctrl+s, then Enter on "Use ... Format!"."""


@dataclass(frozen=True)
class GuiPolicy:
    """One scripted run of a task."""

    name: str
    """Short id, unique within the task; the trajectory id is ``<task id>--<name>``."""
    agent: str
    """The scripted agent's style (shared across tasks)."""
    moves: Sequence[Move]
    """The script (ending with ``done`` or not)."""
    intent: Literal["PASS", "FAIL"]
    """What the script means to achieve; the build stops when the verifier disagrees."""
    final_response: str
    """What the agent tells the user at the end."""
    space: ActionSpace = "computer_13"
    """The action space it records in."""
    failure: FailureKind | None = None
    """For intended failures: how it fails."""
    messy: bool = False
    """For successes: whether it takes detours (wrong key, undo) on the way."""
    note: str = ""
    """What the run does, in one line."""


@dataclass(frozen=True)
class GuiTask:
    """A task with its starting document, its check and its scripted runs."""

    task: Task
    """The record (initial state: ``document``)."""
    document: Callable[[], bytes]
    """Builds the starting document (deterministic bytes)."""
    check: Callable[[str], bool]
    """The check on the saved document's path (copied into ``verify.py``)."""
    checks: str
    """One line on what the verifier checks (for the README table)."""
    policies: list[GuiPolicy] = field(default_factory=list)
    """The scripted runs."""
