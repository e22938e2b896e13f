"""The GUI server's tools: AJ-Bench's action set, each answering with what the screen shows after.

Owns the tool table over one desktop (``DesktopContext``): ``CLICK``, ``DOUBLE_CLICK``,
``RIGHT_CLICK``, ``MOUSE_DOWN``, ``MOUSE_UP``, ``MOVE_TO``, ``DRAG_TO``, ``SCROLL``, ``TYPING``,
``PRESS``, ``KEY_DOWN``, ``KEY_UP``, ``HOTKEY`` and ``WAIT`` (OSWorld's ``computer_13`` actions,
with its parameter names), and ``OBSERVE``, which shows the screen without acting. Every answer
carries the observation in the server's modality: the screenshot as an image block, the
accessibility tree linearised as OSWorld's agents read it (tab-separated, trimmed to a token
budget), or both. Actions run one at a time, in the order they arrive (a judge's concurrent
calls would otherwise interleave their key presses), through the desktop's own action executor
(``sandboxes.desktop.actions``): values become Python literals inside the desktop, never code.
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field

from dataset.actions import Computer13Action
from mcp_servers.results import ToolArguments, ToolImage, ToolResult, ToolSpec
from mcp_servers.serving import ToolServer, with_tools_of
from sandboxes.desktop.actions import ActionOutcome, perform_action
from sandboxes.desktop.client import DesktopClient, DesktopControlError
from sandboxes.desktop.observations import (
    DEFAULT_TOKEN_BUDGET,
    HEADER,
    ObservationKind,
    observe,
)

__all__ = [
    "ACTION_TOOLS",
    "DEFAULT_SETTLE_SECONDS",
    "MAX_WAIT_SECONDS",
    "OBSERVE_TOOL",
    "SERVER_INSTRUCTIONS",
    "SERVER_NAME",
    "TOOLS",
    "DesktopContext",
    "desktop_server",
    "with_tools_of",
]

SERVER_NAME = "desktop"
OBSERVE_TOOL = "OBSERVE"

DEFAULT_SETTLE_SECONDS = 0.3
"""Seconds the server waits after an action before it looks at the screen (lets the UI draw)."""
MAX_WAIT_SECONDS = 30.0
"""The longest ``WAIT`` a caller may ask for."""

Performer = Callable[[Computer13Action], Awaitable[ActionOutcome]]
"""Runs one action on the desktop (a sandbox's ``perform``, which also remembers it)."""


@dataclass
class DesktopContext:
    """One live desktop and how the server shows it."""

    client: DesktopClient
    """The desktop's control client."""
    observation: ObservationKind = "screenshot_a11y_tree"
    """What every answer shows: ``screenshot``, ``a11y_tree``, ``screenshot_a11y_tree`` or
    ``som`` (set-of-marks: the screenshot with the tree's elements numbered)."""
    token_budget: int | None = DEFAULT_TOKEN_BUDGET
    """Tokens the linearised tree may take (None: the whole tree)."""
    settle_seconds: float = DEFAULT_SETTLE_SECONDS
    """Seconds to wait after an action before observing."""
    perform: Performer | None = None
    """Runs an action; None: the action executor on ``client`` directly."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Serialises actions and observations."""
    screen: tuple[int, int] | None = None
    """The screen's size, read once."""

    async def run(self, action: Computer13Action) -> ActionOutcome:
        """Perform ``action`` on the desktop."""
        if self.perform is not None:
            return await self.perform(action)
        return await perform_action(self.client, action)

    async def screen_size(self) -> tuple[int, int]:
        """The screen's width and height (asked once)."""
        if self.screen is None:
            self.screen = await self.client.screen_size()
        return self.screen


# --- arguments ----------------------------------------------------------------------------------

Coordinate = Annotated[float, Field(ge=0)]
Button = Literal["left", "right", "middle"]


class OptionalPointArguments(ToolArguments):
    """Where to act; both left out: at the pointer's current position."""

    x: Coordinate | None = None
    """Horizontal screen coordinate in pixels, from the left edge."""
    y: Coordinate | None = None
    """Vertical screen coordinate in pixels, from the top edge."""


class ClickArguments(OptionalPointArguments):
    """Arguments of ``CLICK``."""

    button: Button = "left"
    """The mouse button."""
    num_clicks: Annotated[int, Field(ge=1, le=3)] = 1
    """How many clicks (2: a double click, 3: a triple click)."""


class PointArguments(ToolArguments):
    """A screen position."""

    x: Coordinate
    """Horizontal screen coordinate in pixels, from the left edge."""
    y: Coordinate
    """Vertical screen coordinate in pixels, from the top edge."""


class ButtonArguments(ToolArguments):
    """A mouse button."""

    button: Button = "left"
    """The mouse button."""


class ScrollArguments(ToolArguments):
    """Arguments of ``SCROLL``."""

    dx: int = 0
    """Horizontal scroll in clicks of the wheel: positive scrolls right, negative left."""
    dy: int = 0
    """Vertical scroll in clicks of the wheel: positive scrolls up, negative down."""


class TypingArguments(ToolArguments):
    """Arguments of ``TYPING``."""

    text: Annotated[str, Field(min_length=1)]
    """The text to type at the keyboard focus (``\\n`` presses Enter)."""


class KeyArguments(ToolArguments):
    """One key."""

    key: Annotated[str, Field(min_length=1)]
    """A key name as pyautogui knows it: ``enter``, ``tab``, ``esc``, ``down``, ``f2``, ``a``."""


class HotkeyArguments(ToolArguments):
    """Arguments of ``HOTKEY``."""

    keys: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
    """Keys pressed together, in order, then released in reverse: ``["ctrl", "s"]``."""


class WaitArguments(ToolArguments):
    """Arguments of ``WAIT``."""

    seconds: Annotated[float, Field(gt=0, le=MAX_WAIT_SECONDS)] = 1.0
    """How long to wait before looking at the screen again."""


class ObserveArguments(ToolArguments):
    """``OBSERVE`` takes no arguments."""


# --- answers ------------------------------------------------------------------------------------


async def _observation(context: DesktopContext) -> tuple[str, list[ToolImage]]:
    """The screen in the server's modality: text (the tree, or a note) and images."""
    try:
        seen = await observe(context.client, context.observation, token_budget=context.token_budget)
    except DesktopControlError as error:
        return f"The screen could not be observed: {error}", []
    parts: list[str] = []
    images: list[ToolImage] = []
    if seen.screenshot is not None:
        width, height = await context.screen_size()
        marks = " with the listed elements boxed and numbered" if seen.kind == "som" else ""
        parts.append(f"Screenshot of the whole screen ({width}x{height}){marks} attached.")
        images.append(
            ToolImage(data=base64.b64encode(seen.screenshot).decode("ascii"), mime_type="image/png")
        )
    if seen.linearized_tree is not None:
        parts.append(
            "Accessibility tree, one visible element per line"
            f"{' (index: its number on the screenshot)' if seen.kind == 'som' else ''}; "
            "positions are top-left corners: click at x + width/2, y + height/2:\n"
            f"{seen.linearized_tree}"
        )
    return "\n".join(parts), images


def _describe(action: Computer13Action) -> str:
    if not action.parameters:
        return action.action_type
    shown = ", ".join(f"{key}={value!r}" for key, value in action.parameters.items())
    return f"{action.action_type}({shown})"


async def _act(context: DesktopContext, action: Computer13Action) -> ToolResult:
    """Perform ``action``, wait for the screen to settle, and answer with the observation."""
    point = [action.parameters.get(name) for name in ("x", "y")]
    async with context.lock:
        if all(isinstance(value, int | float) for value in point):
            width, height = await context.screen_size()
            x, y = float(point[0]), float(point[1])  # type: ignore[arg-type]
            if x >= width or y >= height:
                return ToolResult(
                    text=(
                        f"Error: ({x:g}, {y:g}) is off the screen; x must be below {width} and "
                        f"y below {height}. Nothing was done."
                    ),
                    is_error=True,
                )
        started = time.perf_counter()
        try:
            outcome = await context.run(action)
        except DesktopControlError as error:
            return ToolResult(
                text=f"Error: {_describe(action)} could not be sent: {error}", is_error=True
            )
        await asyncio.sleep(context.settle_seconds)
        seen, images = await _observation(context)
    took = time.perf_counter() - started
    if outcome.status == "failed":
        reason = (outcome.error or outcome.output).strip().splitlines()
        head = f"Error: {_describe(action)} failed: {reason[-1] if reason else 'no reason given'}"
        return ToolResult(text=f"{head}\n\n{seen}", is_error=True, images=images)
    return ToolResult(text=f"{_describe(action)} done ({took:.1f} s).\n\n{seen}", images=images)


def _point(arguments: OptionalPointArguments | PointArguments) -> dict[str, Any]:
    if arguments.x is None or arguments.y is None:
        return {}
    return {"x": _number(arguments.x), "y": _number(arguments.y)}


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _needs_both(arguments: OptionalPointArguments) -> ToolResult | None:
    if (arguments.x is None) != (arguments.y is None):
        return ToolResult(
            text="Error: give both x and y, or neither (to act where the pointer is).",
            is_error=True,
        )
    return None


async def click(context: DesktopContext, arguments: ClickArguments) -> ToolResult:
    """``CLICK``."""
    refused = _needs_both(arguments)
    if refused is not None:
        return refused
    parameters = {**_point(arguments), "button": arguments.button}
    if arguments.num_clicks != 1:
        parameters["num_clicks"] = arguments.num_clicks
    return await _act(context, Computer13Action(action_type="CLICK", parameters=parameters))


def _pointed(kind: Literal["DOUBLE_CLICK", "RIGHT_CLICK"]) -> Callable[..., Awaitable[ToolResult]]:
    async def handler(context: DesktopContext, arguments: OptionalPointArguments) -> ToolResult:
        refused = _needs_both(arguments)
        if refused is not None:
            return refused
        return await _act(context, Computer13Action(action_type=kind, parameters=_point(arguments)))

    return handler


def _moved(kind: Literal["MOVE_TO", "DRAG_TO"]) -> Callable[..., Awaitable[ToolResult]]:
    async def handler(context: DesktopContext, arguments: PointArguments) -> ToolResult:
        return await _act(context, Computer13Action(action_type=kind, parameters=_point(arguments)))

    return handler


def _button(kind: Literal["MOUSE_DOWN", "MOUSE_UP"]) -> Callable[..., Awaitable[ToolResult]]:
    async def handler(context: DesktopContext, arguments: ButtonArguments) -> ToolResult:
        action = Computer13Action(action_type=kind, parameters={"button": arguments.button})
        return await _act(context, action)

    return handler


def _keyed(kind: Literal["PRESS", "KEY_DOWN", "KEY_UP"]) -> Callable[..., Awaitable[ToolResult]]:
    async def handler(context: DesktopContext, arguments: KeyArguments) -> ToolResult:
        action = Computer13Action(action_type=kind, parameters={"key": arguments.key})
        return await _act(context, action)

    return handler


async def scroll(context: DesktopContext, arguments: ScrollArguments) -> ToolResult:
    """``SCROLL``."""
    if arguments.dx == 0 and arguments.dy == 0:
        return ToolResult(text="Error: give dx or dy (not both 0).", is_error=True)
    action = Computer13Action(
        action_type="SCROLL", parameters={"dx": arguments.dx, "dy": arguments.dy}
    )
    return await _act(context, action)


async def typing(context: DesktopContext, arguments: TypingArguments) -> ToolResult:
    """``TYPING``."""
    action = Computer13Action(action_type="TYPING", parameters={"text": arguments.text})
    return await _act(context, action)


async def hotkey(context: DesktopContext, arguments: HotkeyArguments) -> ToolResult:
    """``HOTKEY``."""
    keys: list[Any] = list(arguments.keys)
    return await _act(context, Computer13Action(action_type="HOTKEY", parameters={"keys": keys}))


async def wait(context: DesktopContext, arguments: WaitArguments) -> ToolResult:
    """``WAIT``: nothing is sent; the screen is looked at after the pause."""
    await asyncio.sleep(arguments.seconds)
    async with context.lock:
        seen, images = await _observation(context)
    return ToolResult(text=f"Waited {arguments.seconds:g} s.\n\n{seen}", images=images)


async def observe_now(context: DesktopContext, arguments: ObserveArguments) -> ToolResult:
    """``OBSERVE``: the screen as it is, without acting."""
    async with context.lock:
        seen, images = await _observation(context)
    return ToolResult(text=seen, images=images)


_WHERE = (
    " Coordinates are screen pixels from the top-left corner; the accessibility tree gives each "
    "element's top-left corner and size, so aim at x + width/2, y + height/2."
)
_ANSWER = " Answers with the screen as it is afterwards."


def _spec(
    name: str,
    arguments: type[ToolArguments],
    handler: Callable[..., Awaitable[ToolResult]],
    description: str,
    *,
    writes: bool = True,
) -> ToolSpec[DesktopContext]:
    return ToolSpec(
        name=name,
        arguments=arguments,
        handler=handler,
        writes=writes,
        destructive=False,
        idempotent=not writes,
        title=name.replace("_", " ").capitalize(),
        description=description,
    )


TOOLS: dict[str, ToolSpec[DesktopContext]] = {
    spec.name: spec
    for spec in (
        _spec(
            "CLICK",
            ClickArguments,
            click,
            "Click a mouse button at a screen position (or where the pointer is), once or "
            "several times (num_clicks)." + _WHERE + _ANSWER,
        ),
        _spec(
            "DOUBLE_CLICK",
            OptionalPointArguments,
            _pointed("DOUBLE_CLICK"),
            "Double-click the left button at a position (or where the pointer is), e.g. to "
            "select a word or open a cell for editing." + _WHERE + _ANSWER,
        ),
        _spec(
            "RIGHT_CLICK",
            OptionalPointArguments,
            _pointed("RIGHT_CLICK"),
            "Right-click at a position (or where the pointer is) to open a context menu."
            + _WHERE
            + _ANSWER,
        ),
        _spec(
            "MOUSE_DOWN",
            ButtonArguments,
            _button("MOUSE_DOWN"),
            "Press and hold a mouse button where the pointer is (release it with MOUSE_UP)."
            + _ANSWER,
        ),
        _spec(
            "MOUSE_UP",
            ButtonArguments,
            _button("MOUSE_UP"),
            "Release a mouse button held with MOUSE_DOWN." + _ANSWER,
        ),
        _spec(
            "MOVE_TO",
            PointArguments,
            _moved("MOVE_TO"),
            "Move the pointer to a position without clicking (e.g. to show a tooltip)."
            + _WHERE
            + _ANSWER,
        ),
        _spec(
            "DRAG_TO",
            PointArguments,
            _moved("DRAG_TO"),
            "Drag with the left button held from where the pointer is to a position (e.g. to "
            "select a range of cells)." + _WHERE + _ANSWER,
        ),
        _spec(
            "SCROLL",
            ScrollArguments,
            scroll,
            "Turn the mouse wheel where the pointer is: dy clicks up (positive) or down "
            "(negative), dx clicks right (positive) or left (negative)." + _ANSWER,
        ),
        _spec(
            "TYPING",
            TypingArguments,
            typing,
            "Type text at the keyboard focus, as if on the keyboard ('\\n' presses Enter)."
            + _ANSWER,
        ),
        _spec(
            "PRESS",
            KeyArguments,
            _keyed("PRESS"),
            "Press and release one key (enter, tab, esc, up, down, left, right, pageup, "
            "pagedown, home, end, delete, backspace, f1-f12, or a character)." + _ANSWER,
        ),
        _spec(
            "KEY_DOWN",
            KeyArguments,
            _keyed("KEY_DOWN"),
            "Press and hold one key (release it with KEY_UP), e.g. shift while clicking." + _ANSWER,
        ),
        _spec(
            "KEY_UP",
            KeyArguments,
            _keyed("KEY_UP"),
            "Release a key held with KEY_DOWN." + _ANSWER,
        ),
        _spec(
            "HOTKEY",
            HotkeyArguments,
            hotkey,
            'Press a key combination, e.g. ["ctrl", "c"] or ["ctrl", "shift", "end"]: the keys '
            "go down in order and come up in reverse." + _ANSWER,
        ),
        _spec(
            "WAIT",
            WaitArguments,
            wait,
            f"Do nothing for some seconds (at most {MAX_WAIT_SECONDS:g}), e.g. while a dialog "
            "opens, then look at the screen." + _ANSWER,
            writes=False,
        ),
        _spec(
            OBSERVE_TOOL,
            ObserveArguments,
            observe_now,
            "Show the screen as it is now, without acting: the screenshot and/or the "
            "accessibility tree. Takes no arguments.",
            writes=False,
        ),
    )
}
"""The GUI server's tools by name."""

ACTION_TOOLS = frozenset(name for name in TOOLS if name != OBSERVE_TOOL)
"""The tools that are AJ-Bench's actions (everything but ``OBSERVE``)."""

SERVER_INSTRUCTIONS = (
    "Mouse and keyboard access to a live desktop running LibreOffice, in the state the agent you "
    "are judging left it; it is your own copy, so other judges never see what you do. Each "
    f"action answers with the screen afterwards; {OBSERVE_TOOL} shows it without acting. "
    f"The accessibility tree's columns are: {HEADER.replace(chr(9), ', ')}."
)
"""What a connecting client is told about this server."""


def desktop_server(
    client: DesktopClient,
    *,
    observation: ObservationKind = "screenshot_a11y_tree",
    token_budget: int | None = DEFAULT_TOKEN_BUDGET,
    settle_seconds: float = DEFAULT_SETTLE_SECONDS,
    perform: Performer | None = None,
) -> ToolServer[DesktopContext]:
    """A GUI server over the desktop behind ``client``; ``perform`` runs each action (a
    sandbox's own, so that it remembers them; default: the action executor on ``client``)."""
    context = DesktopContext(
        client=client,
        observation=observation,
        token_budget=token_budget,
        settle_seconds=settle_seconds,
        perform=perform,
    )
    return ToolServer(SERVER_NAME, TOOLS, context, instructions=SERVER_INSTRUCTIONS)
