"""``spa-bench``: every screen with the action taken on it drawn in (SPA-Bench-style).

One request: the instruction, then every recorded screen in order, each marked with the action
the agent took on it (``markers.draw_action``: a red dot at a tap, an arrow along a swipe, the
step and action, typed text included, in a strip above), shrunk to ``long_edge``; a
guideline-heavy system prompt; the answer is ``Reason: ...`` then ``Result: 1|0``.
"""

from __future__ import annotations

from judge_agent.conversation import JudgeRun
from judge_agent.mobile_methods.common import (
    MethodOptions,
    answer_or_reask,
    fill,
    frames_with_screens,
    image_block,
    options_of,
    request,
)
from judge_agent.mobile_methods.images import frame_image
from judge_agent.mobile_methods.markers import draw_action
from judge_agent.model import ChatMessage, Content
from judge_agent.modes import JudgeModeSpec
from judge_agent.subject import JudgeSubject, MethodRequest
from judge_agent.verdict_parsing import ParsedVerdict, parse_verdict_text
from prompts import PromptStyle

__all__ = ["SPEC", "SpaBenchOptions", "spa_bench_messages"]


class SpaBenchOptions(MethodOptions):
    """SPA-Bench-style switches."""


def spa_bench_messages(subject: JudgeSubject) -> list[ChatMessage]:
    """The one request: every screen, marked."""
    options = options_of(subject, SpaBenchOptions)
    parts: list[Content | str] = []
    frames = frames_with_screens(subject)
    for frame in frames:
        image = frame_image(frame, subject.base_dir)
        if image is None:
            continue
        caption = (
            "Screen before the first step"
            if frame.position == 0
            else f"Screen after step {frame.position}"
        )
        if frame.next_action is not None and frame.next_step is not None:
            ui = frame.observation.accessibility_tree if frame.observation else None
            image, _ = draw_action(image, frame.next_action, frame.next_step, ui)
            caption += f" (marked: step {frame.next_step})"
        else:
            caption += " (the last screen)"
        parts += [caption + ":", image_block(image, options.long_edge)]
    header = fill("spa_bench_user.md", instruction=subject.task.instruction, count=str(len(frames)))
    closing = (
        [f"The agent's final message: {subject.trajectory.final_response}"]
        if subject.trajectory.final_response
        else []
    )
    return request(
        fill("spa_bench_system.md"), [header, *parts, *closing, fill("spa_bench_answer.md")]
    )


async def _converse(run: JudgeRun) -> ParsedVerdict:
    assert run.subject is not None
    return await answer_or_reask(
        run, spa_bench_messages(run.subject), parse_verdict_text, what="result"
    )


SPEC = JudgeModeSpec(
    name="spa-bench",
    description="SPA-Bench-style: every screenshot with the action marked on it; "
    "Reason, Result 1/0",
    conversation=_converse,
    prompt=PromptStyle(),
    plan=lambda subject: [MethodRequest("judgement", spa_bench_messages(subject))],
    group="mobile-methods",
    options=SpaBenchOptions,
)
"""This method's mode, registered by module path in ``judge_agent.modes``."""
