"""``a3-essential``: the goal split into essential states by the model, then sliding windows of
screens checked for them (A3's essential-states evaluation).

First request: the instruction alone, asking for the essential states as a numbered list. The
answer is cached for the process by model and instruction, so every trajectory of a task shares
one decomposition (and the response cache makes reruns free); an answer with no list gets one
re-ask, then the instruction itself stands as the only state (recorded in the verdict's details).
Then windows of ``window`` consecutive screens (default 4), starting every ``stride`` screens
(default 3, so neighbouring windows share a screen and the last screen is always in one), each
window's screens shrunk to ``long_edge`` and put side by side in one image, with the numbered
states; the answer marks each state ``yes`` or ``no``. A state counts as reached when some window
shows it; windows stop once every state is reached. PASS when every state is reached.
"""

from __future__ import annotations

import asyncio

from pydantic import Field, JsonValue

from judge_agent.conversation import JudgeRun, RunEndedError
from judge_agent.mobile_methods.answers import parse_numbered_list, parse_state_marks
from judge_agent.mobile_methods.common import (
    MethodOptions,
    answer_or_reask,
    fill,
    frames_with_screens,
    image_block,
    options_of,
    request,
)
from judge_agent.mobile_methods.images import frame_image, resize_long_edge, side_by_side
from judge_agent.model import ChatMessage
from judge_agent.modes import JudgeModeSpec
from judge_agent.subject import JudgeSubject, MethodRequest
from judge_agent.verdict_parsing import REASK_MESSAGE, ParsedVerdict
from prompts import PromptStyle

__all__ = ["SPEC", "A3EssentialOptions", "decomposition_messages", "window_messages", "windows"]

_PLACEHOLDER_STATES = ["(the essential states from the decomposition answer, one per line)"]


class A3EssentialOptions(MethodOptions):
    """A3 essential-states switches."""

    window: int = Field(default=4, ge=1, le=16)
    """Screens per window."""
    stride: int = Field(default=3, ge=1, le=16)
    """Screens between the starts of neighbouring windows."""
    long_edge: int = Field(default=512, ge=0)
    """Each screen's longer side before the window's screens are put side by side."""


def windows(count: int, size: int, stride: int) -> list[range]:
    """Windows of ``size`` positions over ``count`` screens starting every ``stride``; the last
    screen is always in one, and no window starts on a screen the one before it already ended
    on unless it adds a screen."""
    if count <= 0:
        return []
    found: list[range] = []
    start = 0
    while True:
        end = min(start + size, count)
        found.append(range(start, end))
        if end >= count:
            return found
        start += stride


def decomposition_messages(subject: JudgeSubject) -> list[ChatMessage]:
    """The request for the essential states."""
    return request(
        fill("a3_decompose_system.md"),
        [fill("a3_decompose_user.md", instruction=subject.task.instruction)],
    )


def window_messages(
    subject: JudgeSubject, states: list[str]
) -> list[tuple[str, list[ChatMessage]]]:
    """One request per window: its purpose and messages."""
    options = options_of(subject, A3EssentialOptions)
    frames = frames_with_screens(subject)
    numbered = "\n".join(f"{number}. {state}" for number, state in enumerate(states, start=1))
    requests = []
    spans = windows(len(frames), options.window, min(options.stride, options.window))
    for number, span in enumerate(spans, start=1):
        images = [frame_image(frames[i], subject.base_dir) for i in span]
        shown = [
            resize_long_edge(image, options.long_edge) for image in images if image is not None
        ]
        text = fill(
            "a3_window_user.md",
            instruction=subject.task.instruction,
            states=numbered,
            first=str(span.start + 1),
            last=str(span.stop),
            total=str(len(frames)),
        )
        parts = (
            [text, image_block(side_by_side(shown), 0)]
            if shown
            else [text, "(these screens could not be read)"]
        )
        requests.append(
            (f"window {number} of {len(spans)}", request(fill("a3_window_system.md"), parts))
        )
    return requests


_DECOMPOSITIONS: dict[tuple[str, str], list[str]] = {}
_LOCKS: dict[tuple[str, str], asyncio.Lock] = {}


async def _states(run: JudgeRun, subject: JudgeSubject) -> tuple[list[str], bool]:
    """The essential states (cached per model and instruction) and whether the model gave them."""
    key = (run.model.name, subject.task.instruction)
    async with _LOCKS.setdefault(key, asyncio.Lock()):
        if key in _DECOMPOSITIONS:
            run.log.write("decomposition_cached", states=_DECOMPOSITIONS[key])
            return _DECOMPOSITIONS[key], True
        answer = await run.ask(decomposition_messages(subject))
        states = parse_numbered_list(answer.content)
        if not states:
            run.say(REASK_MESSAGE + " Give the states as a numbered list.")
            states = parse_numbered_list((await run.generate(tools=False)).content)
        if not states:
            return [subject.task.instruction], False
        _DECOMPOSITIONS[key] = states
        return states, True


async def _converse(run: JudgeRun) -> ParsedVerdict:
    subject = run.subject
    assert subject is not None
    states, decomposed = await _states(run, subject)
    reached: dict[int, int] = {}
    requests = window_messages(subject, states)
    if not requests:
        raise RunEndedError("verdict", "the run has no screenshots to check the states against")
    for number, (_, messages) in enumerate(requests, start=1):
        marks = await answer_or_reask(
            run, messages, lambda text: parse_state_marks(text, len(states)), what="state marks"
        )
        for state, seen in marks.items():
            if seen and state not in reached:
                reached[state] = number
        if len(reached) == len(states):
            break
    missing = [state for state in range(1, len(states) + 1) if state not in reached]
    details: dict[str, JsonValue] = {
        "essential_states": list(states),
        "decomposed": decomposed,
        "reached_in_window": {str(state): window for state, window in sorted(reached.items())},
        "windows": len(requests),
    }
    reason = (
        "every essential state was reached"
        if not missing
        else "not reached: " + "; ".join(states[state - 1] for state in missing)
    )
    return ParsedVerdict(
        verdict="FAIL" if missing else "PASS",
        reasoning=reason,
        format="essential_states",
        details=details,
    )


def _plan(subject: JudgeSubject) -> list[MethodRequest]:
    return [
        MethodRequest("decomposition", decomposition_messages(subject)),
        *(
            MethodRequest(purpose, messages)
            for purpose, messages in window_messages(subject, _PLACEHOLDER_STATES)
        ),
    ]


SPEC = JudgeModeSpec(
    name="a3-essential",
    description="A3 essential states: the goal decomposed by the model (cached), then windows "
    "of 4 screens (stride 3) side by side; PASS when every state shows in some window",
    conversation=_converse,
    prompt=PromptStyle(),
    plan=_plan,
    group="mobile-methods",
    options=A3EssentialOptions,
)
"""This method's mode, registered by module path in ``judge_agent.modes``."""
