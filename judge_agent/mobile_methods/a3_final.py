"""``a3-final``: the final screen and its cleaned element list, then yes or no (A3's final-state
evaluation).

One request: the goal, the last recorded screen's UI elements (one short line each, elements that
show nothing left out) and its screenshot; the answer ends ``Answer: yes|no``.
"""

from __future__ import annotations

from dataset.frames import trajectory_frames
from judge_agent.conversation import JudgeRun
from judge_agent.mobile_methods.answers import parse_yes_no
from judge_agent.mobile_methods.common import (
    MethodOptions,
    answer_or_reask,
    fill,
    frames_with_screens,
    options_of,
    request,
    screen_block,
    ui_list,
)
from judge_agent.model import ChatMessage, Content
from judge_agent.modes import JudgeModeSpec
from judge_agent.subject import JudgeSubject, MethodRequest
from judge_agent.verdict_parsing import ParsedVerdict
from prompts import PromptStyle

__all__ = ["SPEC", "A3FinalOptions", "a3_final_messages"]


class A3FinalOptions(MethodOptions):
    """A3 final-state switches."""


def a3_final_messages(subject: JudgeSubject) -> list[ChatMessage]:
    """The one request: the final screen and its elements."""
    options = options_of(subject, A3FinalOptions)
    observed = [f for f in trajectory_frames(subject.trajectory) if f.observation is not None]
    last_ui = next(
        (
            f.observation.accessibility_tree
            for f in reversed(observed)
            if f.observation and f.observation.accessibility_tree
        ),
        None,
    )
    elements = ui_list(last_ui) or "(no element list was recorded)"
    parts: list[Content | str] = [
        fill("a3_final_user.md", instruction=subject.task.instruction, elements=elements)
    ]
    screens = frames_with_screens(subject)
    block = screen_block(subject, screens[-1], options.long_edge) if screens else None
    parts.append(block if block is not None else "(no screenshot was recorded)")
    return request(fill("a3_final_system.md"), parts)


async def _converse(run: JudgeRun) -> ParsedVerdict:
    assert run.subject is not None
    return await answer_or_reask(
        run, a3_final_messages(run.subject), parse_yes_no, what="yes/no answer"
    )


SPEC = JudgeModeSpec(
    name="a3-final",
    description="A3 final-state: the last screenshot and its cleaned UI element list; yes/no",
    conversation=_converse,
    prompt=PromptStyle(),
    plan=lambda subject: [MethodRequest("judgement", a3_final_messages(subject))],
    group="mobile-methods",
    options=A3FinalOptions,
)
"""This method's mode, registered by module path in ``judge_agent.modes``."""
