"""The trajectory server's tools: ``VIEW_TRAJECTORY_STEP`` and ``trajectory_overview``.

Owns the tool table over one recorded trajectory (``TrajectoryContext``), the step-number rule,
reading a step's screenshot into an image block, and ``trajectory_server``, which binds the table
to a trajectory as a ``ToolServer``. Both tools are read-only; neither reveals the ground truth
(see ``render``), since the judge using them is itself being evaluated.
"""

from __future__ import annotations

import base64
import logging
import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import ConfigDict, Field, JsonValue, WithJsonSchema

from dataset.models import Step, Task, Trajectory
from mcp_servers.results import ToolArguments, ToolImage, ToolResult, ToolSpec
from mcp_servers.serving import ToolServer
from mcp_servers.trajectory.render import (
    ACCESSIBILITY_TREE_LIMIT,
    ACTION_LIMIT,
    FINAL_RESPONSE_LIMIT,
    OBSERVATION_TEXT_LIMIT,
    REASONING_LIMIT,
    SUMMARY_LIMIT,
    render_overview,
    render_step_text,
)

__all__ = [
    "OVERVIEW_TOOL",
    "SCREENSHOT_SIZE_LIMIT",
    "SERVER_INSTRUCTIONS",
    "SERVER_NAME",
    "TOOLS",
    "VIEW_STEP_TOOL",
    "OverviewArguments",
    "TrajectoryContext",
    "ViewStepArguments",
    "image_mime_type",
    "trajectory_server",
]

logger = logging.getLogger(__name__)

SERVER_NAME = "trajectory"
VIEW_STEP_TOOL = "VIEW_TRAJECTORY_STEP"
OVERVIEW_TOOL = "trajectory_overview"

SCREENSHOT_SIZE_LIMIT = 20 * 1024 * 1024
"""Screenshots larger than this many bytes are described, not attached."""

SERVER_INSTRUCTIONS = (
    "Read-only access to one recorded run of an AI agent, the run you are judging. Call "
    f"{OVERVIEW_TOOL} first for the task, the list of steps and the agent's final response, then "
    f"{VIEW_STEP_TOOL} to read any single step in full, screenshot included. The record shows "
    "what the agent did and saw at each moment; intermediate steps may contain mistakes the agent "
    "fixed later, so treat them as supporting evidence and judge by the final outcome."
)
"""What a connecting client is told about this server."""


@dataclass(frozen=True)
class TrajectoryContext:
    """One recorded trajectory, its task when known, and where its screenshots live."""

    trajectory: Trajectory
    """The run being served."""
    task: Task | None
    """Its task, for the instruction; None when the task could not be found."""
    base_dir: Path
    """The folder holding the trajectory file; screenshot paths are relative to it."""


def _drop_default(schema: dict[str, JsonValue]) -> None:
    # The default only lets the tool word a missing step itself; the parameter is required.
    schema.pop("default", None)


class ViewStepArguments(ToolArguments):
    """Arguments of ``VIEW_TRAJECTORY_STEP``."""

    # The step is checked by the tool itself rather than by the model, so that every bad value
    # (missing, not a number, out of range) gets one answer naming the valid range.
    model_config = ConfigDict(json_schema_extra={"required": ["step"]})

    step: Annotated[JsonValue, WithJsonSchema({"type": "integer", "minimum": 1})] = Field(
        default=None, json_schema_extra=_drop_default
    )
    """The step number to show, counting from 1 (trajectory_overview lists them all)."""


class OverviewArguments(ToolArguments):
    """``trajectory_overview`` takes no arguments."""


def _step_number(value: JsonValue) -> int | None:
    """The step number ``value`` stands for, or None when it is not a whole number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        return int(value.strip())
    return None


_SIGNATURES: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"WEBP", 8, "image/webp"),
    (b"BM", 0, "image/bmp"),
)


def image_mime_type(data: bytes, path: Path) -> str:
    """The image's MIME type from its leading bytes, else from its file extension."""
    for signature, offset, mime_type in _SIGNATURES:
        matches = data[offset : offset + len(signature)] == signature
        if matches and (signature != b"WEBP" or data.startswith(b"RIFF")):
            return mime_type
    guessed, _ = mimetypes.guess_type(path.name)
    return guessed or "application/octet-stream"


class _ScreenshotUnavailableError(Exception):
    """The step names a screenshot that cannot be attached; the message says why."""


def _read_screenshot(base_dir: Path, relative: str, index: int) -> bytes:
    base = base_dir.resolve()
    path = (base / relative).resolve()
    if not path.is_relative_to(base):
        logger.warning("step %d: screenshot %s leads outside %s", index, path, base)
        raise _ScreenshotUnavailableError(
            "recorded, but its path leads outside the trajectory's folder; not shown"
        )
    try:
        if not path.is_file():
            raise FileNotFoundError(path)
        size = path.stat().st_size
        if size > SCREENSHOT_SIZE_LIMIT:
            raise _ScreenshotUnavailableError(
                f"recorded, but the file is {size:,} bytes, over the "
                f"{SCREENSHOT_SIZE_LIMIT:,}-byte limit for attachments; not shown"
            )
        return path.read_bytes()
    except FileNotFoundError:
        logger.warning("step %d: screenshot %s is missing", index, path)
        raise _ScreenshotUnavailableError(
            "recorded for this step, but the image file is missing on disk; no image"
        ) from None
    except OSError as error:
        logger.warning("step %d: screenshot %s cannot be read: %s", index, path, error)
        raise _ScreenshotUnavailableError(
            "recorded for this step, but the image file cannot be read; no image"
        ) from None


def _screenshot(context: TrajectoryContext, step: Step) -> tuple[str, list[ToolImage]]:
    """A note about the step's screenshot, and the image itself when it can be attached.

    The note never names the file: screenshot folders carry the trajectory id, which often spells
    the outcome. Problems are logged (to stderr under stdio) with the full path.
    """
    observation = step.observation
    if observation is None or observation.screenshot is None:
        return "none recorded for this step", []
    try:
        data = _read_screenshot(context.base_dir, observation.screenshot, step.index)
    except _ScreenshotUnavailableError as problem:
        return str(problem), []
    mime_type = image_mime_type(data, Path(observation.screenshot))
    image = ToolImage(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)
    return f"attached below ({mime_type}, {len(data):,} bytes)", [image]


async def view_trajectory_step(
    context: TrajectoryContext, arguments: ViewStepArguments
) -> ToolResult:
    """Everything recorded for one step, with its screenshot as an image when there is one."""
    steps = context.trajectory.steps
    if not steps:
        return ToolResult(
            text="Error: this trajectory has no recorded steps, so there is no step to view.",
            is_error=True,
        )
    number = _step_number(arguments.step)
    if number is None or not 1 <= number <= len(steps):
        given = "no step number" if arguments.step is None else f"{arguments.step!r}"
        return ToolResult(
            text=(
                f"Error: step must be a whole number from 1 to {len(steps)} (this trajectory has "
                f"{len(steps)} steps); got {given}."
            ),
            is_error=True,
        )
    step = steps[number - 1]
    note, images = _screenshot(context, step)
    return ToolResult(text=render_step_text(context.trajectory, step, note), images=images)


async def trajectory_overview(
    context: TrajectoryContext, arguments: OverviewArguments
) -> ToolResult:
    """The task, the agent, one line per step and the final response."""
    return ToolResult(text=render_overview(context.trajectory, context.task))


TOOLS: dict[str, ToolSpec[TrajectoryContext]] = {
    VIEW_STEP_TOOL: ToolSpec(
        name=VIEW_STEP_TOOL,
        arguments=ViewStepArguments,
        handler=view_trajectory_step,
        writes=False,
        idempotent=True,
        title="View a trajectory step",
        description=(
            "Show one recorded step of the agent run you are judging, in full: the action the "
            "agent took (tool name with its JSON arguments, a computer_13 action with its "
            "parameters, pyautogui code, or an Android JSON action), the agent's reasoning for "
            "it, whether the environment flagged it as an error, its timestamps, and what came "
            "back (observation text, page URL, accessibility tree). When a screenshot was "
            "recorded after the step it is attached as an image. Steps are numbered from 1; "
            f"{OVERVIEW_TOOL} gives the count. Long fields are cut, with a note saying how much "
            f"was left out: the accessibility tree after {ACCESSIBILITY_TREE_LIMIT:,} characters, "
            f"the observation text after {OBSERVATION_TEXT_LIMIT:,}, the action after "
            f"{ACTION_LIMIT:,} and the reasoning after {REASONING_LIMIT:,}. A step shows the "
            "state at that moment only: the agent may have made a mistake there and corrected it "
            "later, so use steps as supporting evidence and base the verdict on the final "
            "outcome."
        ),
    ),
    OVERVIEW_TOOL: ToolSpec(
        name=OVERVIEW_TOOL,
        arguments=OverviewArguments,
        handler=trajectory_overview,
        writes=False,
        idempotent=True,
        title="Trajectory overview",
        description=(
            "Summarise the agent run you are judging: the task instruction (when the server "
            "knows it), the agent and model, how the run ended, the number of steps, one line "
            f"per step (its number, the action cut at {SUMMARY_LIMIT} characters, and markers "
            "for steps the environment flagged as errors and for steps with a screenshot), and "
            f"the agent's final response (cut at {FINAL_RESPONSE_LIMIT:,} characters). Takes no "
            f"arguments. Use it to choose which steps to open with {VIEW_STEP_TOOL}."
        ),
    ),
}
"""The trajectory server's tools by name."""


def trajectory_server(
    trajectory: Trajectory, *, task: Task | None, base_dir: Path
) -> ToolServer[TrajectoryContext]:
    """A server over ``trajectory``; ``base_dir`` is the folder holding its file (screenshots)."""
    if task is not None and task.id != trajectory.task_id:
        raise ValueError(f"task {task.id!r} is not the trajectory's task {trajectory.task_id!r}")
    context = TrajectoryContext(trajectory=trajectory, task=task, base_dir=Path(base_dir))
    return ToolServer(SERVER_NAME, TOOLS, context, instructions=SERVER_INSTRUCTIONS)
