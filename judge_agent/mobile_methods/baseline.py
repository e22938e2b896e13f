"""``mobile-baseline``: the simple screenshot-sampling judge, with its independent switches.

One request: the instruction, then every step in order (its action; with ``reasoning=on`` the
agent's own note; with ``ui=on`` the elements on the screen it led to), and ``screenshots``
screens sampled evenly over the run (3 to 192, the first and the last always kept; the screen
before the first step counts when it was recorded), each placed after the step that led to it,
shrunk so the long edge is ``long_edge`` pixels. Defaults: 48 screens at 600 px, no element
lists, no reasoning. The answer is ``Result: 1|0`` with a confidence and a reason.
"""

from __future__ import annotations

from pydantic import Field

from dataset.frames import trajectory_frames
from judge_agent.conversation import JudgeRun
from judge_agent.mobile_methods.answers import confidence_of
from judge_agent.mobile_methods.common import (
    MethodOptions,
    answer_or_reask,
    fill,
    frames_with_screens,
    options_of,
    request,
    sample_frames,
    screen_block,
    step_line,
    ui_list,
)
from judge_agent.model import ChatMessage, Content
from judge_agent.modes import JudgeModeSpec
from judge_agent.subject import JudgeSubject, MethodRequest
from judge_agent.verdict_parsing import ParsedVerdict, parse_verdict_text
from prompts import PromptStyle

__all__ = ["SPEC", "BaselineOptions", "baseline_messages"]


class BaselineOptions(MethodOptions):
    """The baseline's switches, each independent of the others."""

    screenshots: int = Field(default=48, ge=3, le=192)
    """How many screens to show, sampled evenly (first and last included)."""
    long_edge: int = Field(default=600, ge=0)
    """Screens are shrunk so their longer side is at most this many pixels (0: as recorded)."""
    ui: bool = False
    """Show each step's UI element list."""
    reasoning: bool = False
    """Show the agent's own reasoning for each step."""


def baseline_messages(subject: JudgeSubject) -> list[ChatMessage]:
    """The one request the baseline sends."""
    options = options_of(subject, BaselineOptions)
    shown = {
        frame.position for frame in sample_frames(frames_with_screens(subject), options.screenshots)
    }
    frames = {frame.position: frame for frame in trajectory_frames(subject.trajectory)}
    parts: list[Content | str] = [fill("baseline_user.md", instruction=subject.task.instruction)]
    if 0 in shown:
        block = screen_block(subject, frames[0], options.long_edge)
        if block is not None:
            parts += ["\n### Screen before the first step", block]
    for step in subject.trajectory.steps:
        lines = [f"\n### Step {step.index}", f"Action: {step_line(step.index, step.action)}"]
        if options.reasoning and step.reasoning:
            lines.append(f"Agent reasoning: {step.reasoning.strip()}")
        observation = step.observation
        if options.ui and observation is not None:
            elements = ui_list(observation.accessibility_tree)
            if elements:
                lines.append(f"UI elements:\n{elements}")
        parts.append("\n".join(lines))
        if step.index in shown:
            block = screen_block(subject, frames[step.index], options.long_edge)
            if block is not None:
                parts.append(block)
    if subject.trajectory.final_response:
        parts.append(f"\nThe agent's final message: {subject.trajectory.final_response}")
    parts.append("\n" + fill("baseline_answer.md"))
    return request(fill("baseline_system.md"), parts)


def _parse(text: str) -> ParsedVerdict | None:
    parsed = parse_verdict_text(text)
    if parsed is None:
        return None
    confidence = confidence_of(text)
    return (
        parsed.model_copy(update={"confidence": confidence}) if confidence is not None else parsed
    )


async def _converse(run: JudgeRun) -> ParsedVerdict:
    assert run.subject is not None
    return await answer_or_reask(run, baseline_messages(run.subject), _parse, what="result")


def _plan(subject: JudgeSubject) -> list[MethodRequest]:
    return [MethodRequest("judgement", baseline_messages(subject))]


SPEC = JudgeModeSpec(
    name="mobile-baseline",
    description="MobileJudgeBench's simple judge: sampled screens (48 at 600 px), optional "
    "UI lists and reasoning; Result 1/0",
    conversation=_converse,
    prompt=PromptStyle(),
    plan=_plan,
    group="mobile-methods",
    options=BaselineOptions,
)
"""This method's mode, registered by module path in ``judge_agent.modes``."""
