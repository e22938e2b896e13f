"""The device server's tools: AndroidWorld's action set on a live device, each answering with
the configured observation, plus ``get_screen`` and (over a recording) ``VIEW_TRAJECTORY_STEP``.

Owns the tool table over one device (``DeviceContext``), the argument models of the actions, how
an answer is worded (what was done, then the screen: its element list, its screenshot, or both),
and ``device_server``, which binds the table to a device as a ``ToolServer``. The tools are named
after AndroidWorld's ``action_type`` values and take the same fields, so a recorded action and a
judge's call read alike. An element ``index`` counts the element list of the screen the caller
was last shown (as an agent's index counts the list in its prompt); before any answer, the
current screen's. Calls run one at a time: a device has one screen.
"""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from dataset.actions import AndroidAction
from dataset.models import Task, Trajectory
from mcp_servers.results import ToolArgumentError, ToolArguments, ToolImage, ToolResult, ToolSpec
from mcp_servers.serving import ToolServer
from mcp_servers.trajectory.server import (
    VIEW_STEP_TOOL,
    TrajectoryContext,
    ViewStepArguments,
    view_trajectory_step,
)
from sandboxes.android.actions import ActionError, DeviceOperation
from sandboxes.android.device import Device, perform_action
from sandboxes.android.hierarchy import UIElement, render_elements
from sandboxes.base import SandboxError

__all__ = [
    "ACTION_TOOLS",
    "GET_SCREEN_TOOL",
    "SERVER_NAME",
    "DeviceContext",
    "ObservationMode",
    "device_server",
]

SERVER_NAME = "device"
GET_SCREEN_TOOL = "get_screen"

ObservationMode = Literal["screenshot", "ui_elements", "both"]
"""What every answer shows of the screen after the call."""

SERVER_INSTRUCTIONS = (
    "Control of a phone holding the state an agent left behind (or a copy of it). Each tool is "
    "one action of the AndroidWorld action set; each answer says what was done and shows the "
    f"screen afterwards. Call {GET_SCREEN_TOOL} to look without acting. Element indexes count "
    "the numbered UI element list of the screen you were shown last."
)


@dataclass
class DeviceContext:
    """One device, how answers show it, and what the caller was last shown."""

    device: Device
    """The phone the tools act on."""
    observation: ObservationMode = "both"
    """What each answer shows: a screenshot, the UI element list, or both."""
    recording: TrajectoryContext | None = None
    """The recorded run, when ``VIEW_TRAJECTORY_STEP`` is served too."""
    shown: list[UIElement] | None = None
    """The element list of the last answer (what indexes count); None before any answer."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Serialises calls: one screen, one caller at a time."""


# -- arguments -------------------------------------------------------------------------------


class TargetArguments(ToolArguments):
    """An element by index, or a point by coordinates."""

    index: int | None = Field(default=None, ge=0)
    """The UI element's number in the list you were shown last (its bounds' centre is used)."""
    x: int | None = Field(default=None, ge=0)
    """Horizontal pixel, with y, when not using index."""
    y: int | None = Field(default=None, ge=0)
    """Vertical pixel, with x, when not using index."""


class InputTextArguments(TargetArguments):
    """Text to type, optionally into an element (tapped first)."""

    text: str
    """What to type; Enter is pressed afterwards, as AndroidWorld does."""
    clear_text: bool = False
    """Empty the field before typing."""


class DirectionArguments(ToolArguments):
    """A direction, optionally within one element."""

    direction: Literal["up", "down", "left", "right"]
    """scroll: where the content should move into view from (down shows what is below);
    swipe: where the finger moves."""
    index: int | None = Field(default=None, ge=0)
    """Scroll or swipe inside this element instead of the whole screen."""


class OpenAppArguments(ToolArguments):
    """An app by name."""

    app_name: str = Field(min_length=1)
    """The app's name as the home screen shows it (or its package, on a real device)."""


class StatusArguments(ToolArguments):
    """The end of an episode."""

    goal_status: Literal["complete", "infeasible"]
    """Whether the goal is reached or cannot be reached."""


class AnswerArguments(ToolArguments):
    """A text answer."""

    text: str
    """The answer."""


class NoArguments(ToolArguments):
    """No arguments."""


# -- answers ---------------------------------------------------------------------------------


def _describe(operations: list[DeviceOperation]) -> str:
    if not operations:
        return "nothing on the device"
    return "; ".join(type(op).__name__ + _fields(op) for op in operations)


def _fields(operation: DeviceOperation) -> str:
    values = {key: value for key, value in vars(operation).items() if key != "milliseconds"}
    if not values:
        return ""
    return "(" + ", ".join(f"{key}={value!r}" for key, value in values.items()) + ")"


async def _screen(context: DeviceContext, lead: str) -> ToolResult:
    """``lead``, then the screen as the context's observation mode shows it."""
    device = context.device
    observation = await device.observe()
    context.shown = observation.elements
    parts = [lead]
    images: list[ToolImage] = []
    width, height = await device.screen_size()
    if context.observation in ("ui_elements", "both"):
        listing = render_elements(observation.elements) or "(no UI elements)"
        parts.append(f"Screen {width}x{height}. UI elements:\n{listing}")
    if context.observation in ("screenshot", "both"):
        data = base64.b64encode(observation.screenshot).decode("ascii")
        images.append(ToolImage(data=data, mime_type="image/png"))
        parts.append(f"Screenshot attached ({width}x{height} pixels).")
    return ToolResult(text="\n\n".join(parts), images=images)


async def _act(context: DeviceContext, action_type: str, fields: dict[str, Any]) -> ToolResult:
    """Carry out one action and answer with the screen; an action that does not fit the screen
    is an error result and changes nothing; a device that fails under the action or while its
    screen is read afterwards (a crashed page: ``SandboxError`` saying why) is an error result
    too."""
    try:
        action = AndroidAction(action_type=action_type, **fields)
    except ValidationError as error:
        problem = "; ".join(item["msg"].removeprefix("Value error, ") for item in error.errors())
        raise ToolArgumentError(f"{action_type}: {problem}", tool=action_type) from None
    async with context.lock:
        try:
            operations = await perform_action(context.device, action, elements=context.shown)
        except ActionError as error:
            return ToolResult(text=f"Error: {error}", is_error=True)
        except SandboxError as error:
            return ToolResult(text=f"Error: the device failed: {error}", is_error=True)
        done = f"Done {action_type}: {_describe(operations)}."
        try:
            return await _screen(context, done)
        except SandboxError as error:  # the screen could not be read afterwards (a crash)
            return ToolResult(text=f"{done} Error: the device failed: {error}", is_error=True)


def _action_tool(
    name: str,
    arguments: type[ToolArguments],
    description: str,
    *,
    writes: bool = True,
) -> ToolSpec[DeviceContext]:
    async def handler(context: DeviceContext, parsed: Any) -> ToolResult:
        return await _act(context, name, parsed.model_dump(exclude_none=True))

    return ToolSpec(
        name=name,
        arguments=arguments,
        handler=handler,
        writes=writes,
        destructive=writes,
        description=description,
        title=name.replace("_", " "),
    )


async def get_screen(context: DeviceContext, arguments: NoArguments) -> ToolResult:
    """The screen now, without acting."""
    async with context.lock:
        try:
            return await _screen(context, "The current screen.")
        except SandboxError as error:
            return ToolResult(text=f"Error: the device failed: {error}", is_error=True)


async def view_step(context: DeviceContext, arguments: ViewStepArguments) -> ToolResult:
    """One recorded step (the trajectory server's tool)."""
    if context.recording is None:
        return ToolResult(text="Error: no recorded trajectory is attached.", is_error=True)
    return await view_trajectory_step(context.recording, arguments)


_TARGET = "Give index (from the last element list) or x and y in pixels."

ACTION_TOOLS: dict[str, ToolSpec[DeviceContext]] = {
    spec.name: spec
    for spec in (
        _action_tool("click", TargetArguments, f"Tap an element or a point. {_TARGET}"),
        _action_tool("double_tap", TargetArguments, f"Tap twice quickly. {_TARGET}"),
        _action_tool("long_press", TargetArguments, f"Touch and hold for a second. {_TARGET}"),
        _action_tool(
            "input_text",
            InputTextArguments,
            "Type text: into the element given by index (or the point x, y), which is tapped "
            "first, else into the focused field; clear_text empties it first; Enter is pressed "
            "afterwards.",
        ),
        _action_tool(
            "scroll",
            DirectionArguments,
            "Scroll the screen (or the element given by index) to bring content into view from "
            "direction: down shows what is below.",
        ),
        _action_tool(
            "swipe",
            DirectionArguments,
            "Swipe a finger across the screen (or the element given by index) in direction.",
        ),
        _action_tool("navigate_home", NoArguments, "Press the home button (the app list)."),
        _action_tool("navigate_back", NoArguments, "Press the back button."),
        _action_tool("keyboard_enter", NoArguments, "Press Enter."),
        _action_tool("open_app", OpenAppArguments, "Open an app by its name."),
        _action_tool("wait", NoArguments, "Wait a second for the screen to update.", writes=False),
        _action_tool(
            "status",
            StatusArguments,
            "Declare the episode over (complete or infeasible); the device is not touched.",
            writes=False,
        ),
        _action_tool(
            "answer",
            AnswerArguments,
            "Give a text answer; the device is not touched.",
            writes=False,
        ),
    )
}
"""The AndroidWorld action set as tools, by name."""

_SCREEN_SPEC = ToolSpec(
    name=GET_SCREEN_TOOL,
    arguments=NoArguments,
    handler=get_screen,
    writes=False,
    idempotent=True,
    title="Get the screen",
    description="Show the current screen (UI element list and/or screenshot) without acting.",
)


def device_server(
    device: Device,
    *,
    observation: ObservationMode = "both",
    trajectory: Trajectory | None = None,
    task: Task | None = None,
    base_dir: Path | None = None,
) -> ToolServer[DeviceContext]:
    """A server over ``device``; with ``trajectory`` (and the folder holding its file) it also
    serves ``VIEW_TRAJECTORY_STEP`` over that recording."""
    tools: dict[str, ToolSpec[DeviceContext]] = {**ACTION_TOOLS, GET_SCREEN_TOOL: _SCREEN_SPEC}
    recording = None
    if trajectory is not None:
        recording = TrajectoryContext(trajectory=trajectory, task=task, base_dir=base_dir or Path())
        from mcp_servers.trajectory.server import TOOLS as TRAJECTORY_TOOLS

        original = TRAJECTORY_TOOLS[VIEW_STEP_TOOL]
        tools[VIEW_STEP_TOOL] = ToolSpec(
            name=VIEW_STEP_TOOL,
            arguments=ViewStepArguments,
            handler=view_step,
            writes=False,
            idempotent=True,
            title=original.title,
            description=original.description,
        )
    context = DeviceContext(device=device, observation=observation, recording=recording)
    return ToolServer(SERVER_NAME, tools, context, instructions=SERVER_INSTRUCTIONS)
