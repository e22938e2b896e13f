"""Plain-text renderings of a recorded trajectory for a judge: one step in full, or an overview.

Owns the wording, the field limits (with a notice whenever text is cut) and the choice of what a
judge may see. It shows only what the agent did and saw; it never reads the ground truth
(``Trajectory.label``, claim ``items``, ``metadata``, ``provenance``) nor the trajectory id or
screenshot paths, which in many datasets spell the outcome (``...--pass``).
"""

from __future__ import annotations

import json
import re
from datetime import datetime

from pydantic import JsonValue

from dataset.actions import (
    AndroidAction,
    Computer13Action,
    PyAutoGuiAction,
    ToolCallAction,
    describe_action,
)
from dataset.models import Step, Task, Trajectory

__all__ = [
    "ACCESSIBILITY_TREE_LIMIT",
    "ACTION_LIMIT",
    "FINAL_RESPONSE_LIMIT",
    "INSTRUCTION_LIMIT",
    "OBSERVATION_TEXT_LIMIT",
    "OVERVIEW_STEP_LIMIT",
    "REASONING_LIMIT",
    "SUMMARY_LIMIT",
    "clip",
    "render_action",
    "render_overview",
    "render_step_text",
    "summarize_action",
]

ACCESSIBILITY_TREE_LIMIT = 10_000
"""Characters of a step's accessibility tree shown before it is cut."""
OBSERVATION_TEXT_LIMIT = 20_000
"""Characters of a step's observation text shown before it is cut."""
ACTION_LIMIT = 20_000
"""Characters of a rendered action (arguments, code) shown before it is cut."""
REASONING_LIMIT = 10_000
"""Characters of a step's reasoning shown before it is cut."""
INSTRUCTION_LIMIT = 5_000
"""Characters of the task instruction shown in the overview."""
FINAL_RESPONSE_LIMIT = 2_000
"""Characters of the agent's final response shown in the overview."""
SUMMARY_LIMIT = 100
"""Characters of the one-line action summary per step in the overview."""
OVERVIEW_STEP_LIMIT = 200
"""Steps listed in the overview; longer runs show the first and last half of this many."""


def clip(text: str, limit: int, what: str) -> str:
    """``text`` cut to ``limit`` characters, followed by a notice saying how much was left out."""
    if len(text) <= limit:
        return text
    omitted = len(text) - limit
    return (
        f"{text[:limit]}\n[truncated: {omitted:,} of {len(text):,} characters of the {what} "
        "not shown]"
    )


def _one_line(text: str, limit: int) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _json(value: dict[str, JsonValue]) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def render_action(
    action: ToolCallAction | Computer13Action | PyAutoGuiAction | AndroidAction,
) -> str:
    """The full action of a step, readable for every action space."""
    if isinstance(action, ToolCallAction):
        call_id = f" (call id {action.call_id})" if action.call_id else ""
        return f"Tool call: {action.name}{call_id}\nArguments (JSON):\n{_json(action.arguments)}"
    if isinstance(action, Computer13Action):
        text = f"Computer action (computer_13): {action.action_type}"
        if action.parameters:
            text += f"\nParameters (JSON):\n{_json(action.parameters)}"
        return text
    if isinstance(action, PyAutoGuiAction):
        if action.is_control:
            return f"Control signal (pyautogui space): {action.code.strip()}"
        return f"pyautogui code:\n{action.code}"
    fields: dict[str, JsonValue] = action.model_dump(
        mode="json", exclude={"type", "action_type", "extra"}, exclude_none=True
    )
    if action.extra:
        fields["extra"] = action.extra
    text = f"Android action: {action.action_type}"
    if fields:
        text += f"\nFields (JSON):\n{_json(fields)}"
    return text


def summarize_action(
    action: ToolCallAction | Computer13Action | PyAutoGuiAction | AndroidAction,
    limit: int = SUMMARY_LIMIT,
) -> str:
    """One line naming the action, at most ``limit`` characters."""
    if isinstance(action, PyAutoGuiAction):
        # The first line of pyautogui code is nearly always ``import pyautogui``: skip imports.
        lines = [
            line.strip()
            for line in action.code.splitlines()
            if line.strip() and not re.match(r"(import|from)\s", line.strip())
        ]
        text = "pyautogui: " + "; ".join(lines or [action.code.strip()])
    elif isinstance(action, ToolCallAction):
        text = f"tool {describe_action(action)}"
    elif isinstance(action, Computer13Action):
        text = f"computer_13 {describe_action(action)}"
    else:
        text = f"android {describe_action(action)}"
    return _one_line(text, limit)


def _timestamp(value: datetime | None) -> str:
    return value.isoformat() if value is not None else "not recorded"


def _timing(started: datetime | None, ended: datetime | None) -> str:
    text = f"started {_timestamp(started)}, ended {_timestamp(ended)}"
    if started is not None and ended is not None:
        text += f" (took {(ended - started).total_seconds():.1f} s)"
    return text


def render_step_text(trajectory: Trajectory, step: Step, screenshot_note: str) -> str:
    """Everything recorded for ``step`` as text; ``screenshot_note`` tells what became of its
    screenshot."""
    total = len(trajectory.steps)
    parts = [
        f"Step {step.index} of {total}. This is the record of that moment of the run, not the "
        "final state: an intermediate step may show a mistake the agent corrected later.",
        clip(render_action(step.action), ACTION_LIMIT, "action"),
        "Environment flagged this step as an error: " + ("yes" if step.is_error else "no"),
        "Timing: " + _timing(step.started_at, step.ended_at),
    ]
    if step.reasoning:
        parts.append("Agent's reasoning:\n" + clip(step.reasoning, REASONING_LIMIT, "reasoning"))
    else:
        parts.append("Agent's reasoning: none recorded for this step")

    observation = step.observation
    if observation is None:
        parts.append("Observation: nothing was recorded after this action")
    else:
        if observation.text is not None:
            parts.append(
                "Observation text:\n"
                + clip(observation.text, OBSERVATION_TEXT_LIMIT, "observation text")
            )
        else:
            parts.append("Observation text: none recorded")
        if observation.url is not None:
            parts.append(f"URL: {observation.url}")
        if observation.accessibility_tree is not None:
            tree = observation.accessibility_tree
            parts.append(
                f"Accessibility tree ({len(tree):,} characters):\n"
                + clip(tree, ACCESSIBILITY_TREE_LIMIT, "accessibility tree")
            )
        else:
            parts.append("Accessibility tree: none recorded")
    parts.append(f"Screenshot: {screenshot_note}")
    return "\n\n".join(parts)


def _step_line(step: Step) -> str:
    markers = []
    if step.is_error:
        markers.append("ERROR")
    if step.observation is not None and step.observation.screenshot is not None:
        markers.append("screenshot")
    suffix = f"  [{', '.join(markers)}]" if markers else ""
    return f"{step.index:>4}. {summarize_action(step.action)}{suffix}"


def _step_lines(steps: list[Step]) -> list[str]:
    if len(steps) <= OVERVIEW_STEP_LIMIT:
        return [_step_line(step) for step in steps]
    half = OVERVIEW_STEP_LIMIT // 2
    head, tail = steps[:half], steps[-half:]
    skipped = f"      ... steps {head[-1].index + 1} to {tail[0].index - 1} not listed here ..."
    return [_step_line(step) for step in head] + [skipped] + [_step_line(step) for step in tail]


def render_overview(trajectory: Trajectory, task: Task | None) -> str:
    """A short account of the whole run: task, agent, ending, one line per step, final answer."""
    lines: list[str] = ["Overview of the recorded agent run under judgement.", ""]
    if task is not None:
        lines.append(f"Task ({task.domain}/{task.subdomain}, id {task.id}):")
        lines.append(clip(task.instruction, INSTRUCTION_LIMIT, "instruction"))
    else:
        lines.append(
            f"Task: {trajectory.task_id} (its instruction is not available to this server)"
        )
    lines.append("")
    lines.append(f"Agent: {trajectory.agent}; model: {trajectory.model or 'not recorded'}")
    lines.append(f"Run: {_timing(trajectory.started_at, trajectory.ended_at)}")
    lines.append(f"Stop reason: {trajectory.stop_reason}")
    if trajectory.turn_count is not None:
        lines.append(f"Model turns: {trajectory.turn_count}")

    steps = trajectory.steps
    errors = sum(step.is_error for step in steps)
    shots = sum(1 for step in steps if step.observation is not None and step.observation.screenshot)
    lines.append(f"Steps: {len(steps)} ({errors} flagged as errors, {shots} with a screenshot)")
    lines.append("")
    if steps:
        lines.append(
            f"Steps (number, action cut at {SUMMARY_LIMIT} characters, [ERROR] when the "
            "environment flagged the step, [screenshot] when one was recorded):"
        )
        lines.extend(_step_lines(steps))
        lines.append("")
        lines.append(
            f"Call VIEW_TRAJECTORY_STEP with a number from 1 to {len(steps)} for a step's full "
            "record."
        )
    else:
        lines.append("The run has no recorded steps.")
    lines.append("")
    if trajectory.final_response is not None:
        lines.append("Final response of the agent:")
        lines.append(clip(trajectory.final_response, FINAL_RESPONSE_LIMIT, "final response"))
    else:
        lines.append("Final response of the agent: none (the run ended without a final message)")
    return "\n".join(lines)
