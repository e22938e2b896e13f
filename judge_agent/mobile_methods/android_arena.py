"""``androidarena``: a text record of the run, newest steps first within a token budget
(AndroidArena-style), with screenshots only when the run has no text observations.

The record is one entry per step, in order: the elements on the screen the action was taken on
(one short line each) and the action; a last entry holds the final screen's elements. Entries
are taken from the newest back while the estimated tokens (``common.estimate_tokens``) stay
within ``token_budget`` (the newest entry is always kept, cut to the budget if it alone exceeds
it), then shown oldest first, with a line saying how many earlier steps were left out. When no
step recorded an element list, the request instead lists the actions and attaches
``fallback_screenshots`` screens sampled evenly. The answer ends ``Answer: Yes|No``.
"""

from __future__ import annotations

from pydantic import Field

from dataset.frames import trajectory_frames
from judge_agent.conversation import JudgeRun
from judge_agent.mobile_methods.answers import parse_yes_no
from judge_agent.mobile_methods.common import (
    MethodOptions,
    answer_or_reask,
    estimate_tokens,
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
from judge_agent.verdict_parsing import ParsedVerdict
from prompts import PromptStyle

__all__ = [
    "SPEC",
    "AndroidArenaOptions",
    "android_arena_messages",
    "record_entries",
    "within_budget",
]


class AndroidArenaOptions(MethodOptions):
    """AndroidArena-style switches."""

    token_budget: int = Field(default=6000, ge=100)
    """Estimated tokens the record may take."""
    fallback_screenshots: int = Field(default=8, ge=1, le=192)
    """Screens attached when the run has no text observations."""


def record_entries(subject: JudgeSubject) -> list[str]:
    """The record's entries in order: one per step, then the final screen."""
    frames = {frame.position: frame for frame in trajectory_frames(subject.trajectory)}
    entries = []
    for step in subject.trajectory.steps:
        before = frames.get(step.index - 1)
        observed = before.observation.accessibility_tree if before and before.observation else None
        screen = ui_list(observed) or "(not recorded)"
        entries.append(
            f"Step {step.index}\nScreen:\n{screen}\nAction: {step_line(step.index, step.action)}"
        )
    last = subject.trajectory.steps[-1].observation if subject.trajectory.steps else None
    if last is not None and last.accessibility_tree:
        entries.append(f"Final screen:\n{ui_list(last.accessibility_tree)}")
    return entries


def within_budget(entries: list[str], budget: int) -> tuple[list[str], int]:
    """The newest entries whose estimated tokens fit ``budget`` (at least the newest one, cut to
    fit), oldest first; and how many older entries were left out."""
    kept: list[str] = []
    used = 0
    for entry in reversed(entries):
        cost = estimate_tokens(entry)
        if used + cost > budget:
            if not kept:
                kept.append(entry[: budget * 4] + "\n[cut to fit the budget]")
            break
        kept.append(entry)
        used += cost
    kept.reverse()
    return kept, len(entries) - len(kept)


def _has_text(subject: JudgeSubject) -> bool:
    return any(
        frame.observation is not None and bool(frame.observation.accessibility_tree)
        for frame in trajectory_frames(subject.trajectory)
    )


def android_arena_messages(subject: JudgeSubject) -> list[ChatMessage]:
    """The one request: the text record, or the screenshot fallback."""
    options = options_of(subject, AndroidArenaOptions)
    system = fill("android_arena_system.md")
    if _has_text(subject):
        kept, omitted = within_budget(record_entries(subject), options.token_budget)
        record = "\n\n".join(kept)
        if omitted:
            record = f"[{omitted} earlier entries left out to fit the budget]\n\n" + record
        return request(
            system,
            [fill("android_arena_user.md", instruction=subject.task.instruction, record=record)],
        )
    actions = "\n".join(
        f"Step {step.index}: {step_line(step.index, step.action)}"
        for step in subject.trajectory.steps
    )
    frames = sample_frames(frames_with_screens(subject), options.fallback_screenshots)
    parts: list[Content | str] = [
        fill(
            "android_arena_fallback.md",
            instruction=subject.task.instruction,
            count=str(len(frames)),
            actions=actions,
        )
    ]
    for frame in frames:
        block = screen_block(subject, frame, options.long_edge)
        if block is not None:
            label = (
                "Screen before the first step"
                if frame.position == 0
                else f"Screen after step {frame.position}"
            )
            parts += [label + ":", block]
    return request(system, parts)


async def _converse(run: JudgeRun) -> ParsedVerdict:
    assert run.subject is not None
    return await answer_or_reask(
        run, android_arena_messages(run.subject), parse_yes_no, what="Yes/No answer"
    )


SPEC = JudgeModeSpec(
    name="androidarena",
    description="AndroidArena-style: text record of UI elements and actions, newest first "
    "within a token budget (screenshots when there is no text); Yes/No",
    conversation=_converse,
    prompt=PromptStyle(),
    plan=lambda subject: [MethodRequest("judgement", android_arena_messages(subject))],
    group="mobile-methods",
    options=AndroidArenaOptions,
)
"""This method's mode, registered by module path in ``judge_agent.modes``."""
