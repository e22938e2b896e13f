"""AndroidWorld's JSON actions as device gestures: the plan both backends execute.

Owns ``plan_action``, which turns one ``dataset.actions.AndroidAction`` into a list of primitive
device operations (``Tap``, ``LongPress``, ``Swipe``, ``TypeText``, ``PressKey``, ``ClearText``,
``LaunchApp``, ``Wait``), following AndroidWorld's conventions: an element index means the centre
of that element's bounds in the current element list; ``input_text`` taps its target first,
clears it when asked, types, then presses Enter; ``scroll`` moves the content (the finger goes the
other way) and ``swipe`` moves the finger. Also owns ``adb_input_text``, the quoting that ``adb
shell input text`` needs. Pure: no device, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from dataset.actions import AndroidAction
from sandboxes.android.hierarchy import UIElement

__all__ = [
    "LONG_PRESS_MS",
    "SWIPE_MS",
    "WAIT_SECONDS",
    "ActionError",
    "ClearText",
    "DeviceOperation",
    "LaunchApp",
    "LongPress",
    "PressKey",
    "Swipe",
    "Tap",
    "TypeText",
    "Wait",
    "adb_input_text",
    "plan_action",
]

LONG_PRESS_MS = 1000
"""How long a long press holds, in milliseconds."""

SWIPE_MS = 300
"""How long a scroll or swipe gesture takes, in milliseconds."""

WAIT_SECONDS = 1.0
"""How long ``wait`` pauses."""

Key = Literal["home", "back", "enter"]


class ActionError(ValueError):
    """An action that cannot be carried out on the current screen (an index with no element,
    a point off the screen, text the device cannot type)."""


@dataclass(frozen=True)
class Tap:
    """A short touch at a point (pixels)."""

    x: int
    y: int


@dataclass(frozen=True)
class LongPress:
    """A touch held at a point for ``milliseconds``."""

    x: int
    y: int
    milliseconds: int = LONG_PRESS_MS


@dataclass(frozen=True)
class Swipe:
    """A finger moving from one point to another in ``milliseconds``."""

    x1: int
    y1: int
    x2: int
    y2: int
    milliseconds: int = SWIPE_MS


@dataclass(frozen=True)
class TypeText:
    """Text typed into the focused field (one line: newlines become ``PressKey("enter")``)."""

    text: str


@dataclass(frozen=True)
class PressKey:
    """A system key: home, back or enter."""

    key: Key


@dataclass(frozen=True)
class ClearText:
    """Empty the focused text field."""


@dataclass(frozen=True)
class LaunchApp:
    """Bring an app to the front by its name (``Contacts``) or package."""

    name: str


@dataclass(frozen=True)
class Wait:
    """Do nothing for a while, letting the screen settle."""

    seconds: float = WAIT_SECONDS


DeviceOperation = Tap | LongPress | Swipe | TypeText | PressKey | ClearText | LaunchApp | Wait
"""One primitive a backend executes."""


def _target(
    action: AndroidAction, elements: Sequence[UIElement], screen: tuple[int, int]
) -> tuple[int, int]:
    """The point an action aims at: its element's bounds centre, or its own x and y."""
    if action.index is not None:
        if not 0 <= action.index < len(elements):
            raise ActionError(
                f"{action.action_type}: no UI element {action.index} on this screen "
                f"(it has {len(elements)}: indexes 0 to {len(elements) - 1})"
            )
        return elements[action.index].bounds.centre
    if action.x is None or action.y is None:
        raise ActionError(f"{action.action_type} needs an element index or x and y")
    width, height = screen
    if not (0 <= action.x < width and 0 <= action.y < height):
        raise ActionError(
            f"{action.action_type}: point ({action.x}, {action.y}) is off the "
            f"{width}x{height} screen"
        )
    return action.x, action.y


def _region(
    action: AndroidAction, elements: Sequence[UIElement], screen: tuple[int, int]
) -> tuple[int, int, int, int]:
    """The rectangle a scroll or swipe works in: its element's bounds, or the whole screen."""
    if action.index is not None:
        if not 0 <= action.index < len(elements):
            raise ActionError(
                f"{action.action_type}: no UI element {action.index} on this screen "
                f"(it has {len(elements)})"
            )
        bounds = elements[action.index].bounds
        return bounds.left, bounds.top, bounds.right, bounds.bottom
    width, height = screen
    return 0, 0, width, height


def _finger_path(
    region: tuple[int, int, int, int], finger: Literal["up", "down", "left", "right"]
) -> Swipe:
    """A swipe across the middle of ``region`` with the finger moving ``finger``, keeping a
    fifth of the region as margin on both ends (edges start system gestures on real phones)."""
    left, top, right, bottom = region
    centre_x, centre_y = (left + right) // 2, (top + bottom) // 2
    near_x, far_x = left + (right - left) // 5, right - (right - left) // 5
    near_y, far_y = top + (bottom - top) // 5, bottom - (bottom - top) // 5
    if finger == "up":
        return Swipe(centre_x, far_y, centre_x, near_y)
    if finger == "down":
        return Swipe(centre_x, near_y, centre_x, far_y)
    if finger == "left":
        return Swipe(far_x, centre_y, near_x, centre_y)
    return Swipe(near_x, centre_y, far_x, centre_y)


_OPPOSITE: dict[str, Literal["up", "down", "left", "right"]] = {
    "up": "down",
    "down": "up",
    "left": "right",
    "right": "left",
}


def _typing(text: str) -> list[DeviceOperation]:
    """Typing ``text`` line by line, pressing Enter between lines."""
    operations: list[DeviceOperation] = []
    for number, line in enumerate(text.split("\n")):
        if number:
            operations.append(PressKey("enter"))
        if line:
            operations.append(TypeText(line))
    return operations


_KEYS: dict[str, Key] = {
    "navigate_home": "home",
    "navigate_back": "back",
    "keyboard_enter": "enter",
}
"""Actions that are one key press."""


def _touch(
    action: AndroidAction, elements: Sequence[UIElement], screen: tuple[int, int]
) -> list[DeviceOperation]:
    """click, double_tap and long_press at their target."""
    x, y = _target(action, elements, screen)
    if action.action_type == "double_tap":
        return [Tap(x, y), Tap(x, y)]
    if action.action_type == "long_press":
        return [LongPress(x, y)]
    return [Tap(x, y)]


def _input_text(
    action: AndroidAction, elements: Sequence[UIElement], screen: tuple[int, int]
) -> list[DeviceOperation]:
    """Tap the target (when there is one), clear it when asked, type, press Enter."""
    operations: list[DeviceOperation] = []
    if action.index is not None or action.x is not None:
        operations.append(Tap(*_target(action, elements, screen)))
    if action.clear_text:
        operations.append(ClearText())
    operations.extend(_typing(action.text or ""))
    operations.append(PressKey("enter"))  # AndroidWorld submits what it typed
    return operations


def plan_action(
    action: AndroidAction, elements: Sequence[UIElement], screen: tuple[int, int]
) -> list[DeviceOperation]:
    """The operations that carry out ``action`` on a screen of ``screen`` (width, height)
    pixels whose element list (``hierarchy.ui_elements``) is ``elements``.

    ``status`` and ``answer`` change nothing on the device (an empty plan); ``unknown`` and
    targets that do not exist raise ``ActionError``.
    """
    kind = action.action_type
    if kind in ("click", "double_tap", "long_press"):
        return _touch(action, elements, screen)
    if kind == "input_text":
        return _input_text(action, elements, screen)
    if kind in ("scroll", "swipe"):
        assert action.direction is not None  # checked by the action model
        finger = _OPPOSITE[action.direction] if kind == "scroll" else action.direction
        return [_finger_path(_region(action, elements, screen), finger)]
    if kind in _KEYS:
        return [PressKey(_KEYS[kind])]
    simple: dict[str, list[DeviceOperation]] = {
        "open_app": [LaunchApp(action.app_name or "")],
        "wait": [Wait()],
        "status": [],
        "answer": [],
    }
    if kind in simple:
        return simple[kind]
    raise ActionError(f"action type {kind!r} has no meaning on a device")


_SHELL_SPECIAL = set("\\\"'`$&|;<>()*?~#[]{}!^")


def adb_input_text(text: str) -> list[str]:
    """``text`` as the arguments of one or more ``adb shell input text`` commands, typed one
    after the other. Spaces become ``%s`` (the tool's own notation for a space) and shell
    metacharacters are backslash-escaped; a literal ``%`` followed by ``s`` would read as a
    space, so the text is split between them. Raises ``ActionError`` for what ``input text``
    cannot type: non-ASCII and control characters (``plan_action`` splits newlines off first)."""
    chunks: list[str] = []
    out: list[str] = []
    for position, character in enumerate(text):
        if ord(character) > 126 or ord(character) < 32:
            raise ActionError(
                f"adb input text cannot type {character!r} (position {position}): only "
                "printable ASCII can be typed this way"
            )
        if character == "s" and position > 0 and text[position - 1] == "%":
            chunks.append("".join(out))
            out = []
        if character == " ":
            out.append("%s")
        elif character in _SHELL_SPECIAL:
            out.append("\\" + character)
        else:
            out.append(character)
    chunks.append("".join(out))
    return [chunk for chunk in chunks if chunk]
