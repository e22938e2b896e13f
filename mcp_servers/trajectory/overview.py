"""``trajectory_overview``'s text: a short account of the whole recorded run for a judge.

Owns the overview's wording and limits (with a notice whenever text is cut). A single step is
worded by ``dataset.rendering``, as in the judge's prompt. It shows only what the agent did and
saw; it never reads the ground truth (``Trajectory.label``, claim ``items``, ``metadata``,
``provenance``) nor the trajectory id or screenshot paths, which in many datasets spell the
outcome (``...--pass``).
"""

from __future__ import annotations

from dataset.models import Step, Task, Trajectory
from dataset.rendering import SUMMARY_CHARS, summarize_action, timing_text

__all__ = [
    "FINAL_RESPONSE_LIMIT",
    "INSTRUCTION_LIMIT",
    "OVERVIEW_STEP_LIMIT",
    "SUMMARY_LIMIT",
    "clip",
    "render_overview",
]

INSTRUCTION_LIMIT = 5_000
"""Characters of the task instruction shown in the overview."""
FINAL_RESPONSE_LIMIT = 2_000
"""Characters of the agent's final response shown in the overview."""
SUMMARY_LIMIT = SUMMARY_CHARS
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


def _step_line(step: Step) -> str:
    markers = []
    if step.is_error:
        markers.append("ERROR")
    if step.observation is not None and step.observation.screenshot is not None:
        markers.append("screenshot")
    suffix = f"  [{', '.join(markers)}]" if markers else ""
    return f"{step.index:>4}. {summarize_action(step.action, SUMMARY_LIMIT)}{suffix}"


def _step_lines(steps: list[Step]) -> list[str]:
    if len(steps) <= OVERVIEW_STEP_LIMIT:
        return [_step_line(step) for step in steps]
    half = OVERVIEW_STEP_LIMIT // 2
    head, tail = steps[:half], steps[-half:]
    skipped = f"      ... steps {head[-1].index + 1} to {tail[0].index - 1} not listed here ..."
    return [_step_line(step) for step in head] + [skipped] + [_step_line(step) for step in tail]


def render_overview(trajectory: Trajectory, task: Task | None, *, view_step_tool: str) -> str:
    """A short account of the whole run: task, agent, ending, one line per step, final answer.
    ``view_step_tool`` is the name of the tool that shows one step in full."""
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
    lines.append(f"Run: {timing_text(trajectory.started_at, trajectory.ended_at)}")
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
            f"Call {view_step_tool} with a number from 1 to {len(steps)} for a step's full record."
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
