"""The trajectory server's tools: ``VIEW_TRAJECTORY_STEP`` and ``trajectory_overview``.

Owns the tool table over one recorded trajectory (``TrajectoryContext``), the step-number rule,
the limits of a viewed step, turning a step's screenshot into an image block, and
``trajectory_server``, which binds the table to a trajectory as a ``ToolServer``. A step is worded
by ``dataset.rendering`` exactly as in the judge's prompt; the overview by ``overview``. Both
tools are read-only; neither reveals the ground truth, since the judge using them is itself being
evaluated.
"""

from __future__ import annotations

import base64
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import ConfigDict, Field, JsonValue, WithJsonSchema

from dataset.models import Step, Task, Trajectory
from dataset.rendering import StepLimits, render_step
from dataset.screenshots import Screenshot, load_screenshot
from mcp_servers.results import ToolArguments, ToolImage, ToolResult, ToolSpec
from mcp_servers.serving import ToolServer
from mcp_servers.trajectory.overview import FINAL_RESPONSE_LIMIT, SUMMARY_LIMIT, render_overview

__all__ = [
    "OVERVIEW_TOOL",
    "SERVER_INSTRUCTIONS",
    "SERVER_NAME",
    "TOOLS",
    "VIEW_STEP_LIMITS",
    "VIEW_STEP_TOOL",
    "OverviewArguments",
    "TrajectoryContext",
    "ViewStepArguments",
    "trajectory_server",
]

logger = logging.getLogger(__name__)

SERVER_NAME = "trajectory"
VIEW_STEP_TOOL = "VIEW_TRAJECTORY_STEP"
OVERVIEW_TOOL = "trajectory_overview"

VIEW_STEP_LIMITS = StepLimits(
    action=20_000,
    reasoning=10_000,
    observation_text=20_000,
    accessibility_tree=10_000,
    final_accessibility_tree=10_000,
)
"""Characters of each field of a viewed step (larger than the prompt's: one step at a time)."""

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


def _screenshot(context: TrajectoryContext, step: Step) -> tuple[str | None, list[ToolImage]]:
    """A note about the step's screenshot (None: none recorded), and the image itself when it can
    be attached. Problems are logged (to stderr under stdio) with the file's path, which the note
    never names."""
    observation = step.observation
    if observation is None or observation.screenshot is None:
        return None, []
    loaded = load_screenshot(context.base_dir, observation.screenshot)
    if not isinstance(loaded, Screenshot):
        logger.warning("step %d: screenshot %s: %s", step.index, observation.screenshot, loaded)
        return loaded, []
    image = ToolImage(
        data=base64.b64encode(loaded.data).decode("ascii"), mime_type=loaded.mime_type
    )
    return f"attached below ({loaded.mime_type}, {len(loaded.data):,} bytes)", [image]


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
    header = (
        f"Step {step.index} of {len(steps)}. This is the record of that moment of the run, not "
        "the final state: an intermediate step may show a mistake the agent corrected later."
    )
    block = render_step(
        step,
        limits=VIEW_STEP_LIMITS,
        last=step.index == len(steps),
        screenshot_note=note,
        timing=True,
    )
    return ToolResult(text=f"{header}\n\n{block}", images=images)


async def trajectory_overview(
    context: TrajectoryContext, arguments: OverviewArguments
) -> ToolResult:
    """The task, the agent, one line per step and the final response."""
    text = render_overview(context.trajectory, context.task, view_step_tool=VIEW_STEP_TOOL)
    return ToolResult(text=text)


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
            "was left out: the accessibility tree after "
            f"{VIEW_STEP_LIMITS.accessibility_tree:,} characters, the observation text after "
            f"{VIEW_STEP_LIMITS.observation_text:,}, the action after {VIEW_STEP_LIMITS.action:,} "
            f"and the reasoning after {VIEW_STEP_LIMITS.reasoning:,}. A step shows the "
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
