"""What the MobileJudgeBench-style methods share: switches, screens, step lines, requests.

Owns the switches' base model (unknown switches refused, ``on``/``off`` read as booleans), the
subject's frames and which of them have screenshots, uniform sampling of screens (first and last
always included: ``dataset.screenshots.select_screenshot_steps``), one-line step descriptions,
cleaned UI element lists, a rough token count, the building of a request's messages from text
and images, and ``answer_or_reask``, the one re-ask every method allows before ``INVALID``.
Prompt wording lives in ``prompts/methods/``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from PIL import Image
from pydantic import BaseModel, ConfigDict

from dataset.frames import Frame, element_line, parse_ui_elements, trajectory_frames
from dataset.rendering import summarize_action
from dataset.screenshots import select_screenshot_steps
from judge_agent.conversation import JudgeRun, RunEndedError
from judge_agent.mobile_methods.images import encode_png, frame_image, resize_long_edge
from judge_agent.model import ChatMessage, ChatMessageSystem, ChatMessageUser, Content, ContentText
from judge_agent.subject import JudgeSubject
from judge_agent.verdict_parsing import REASK_MESSAGE
from prompts import load_template

__all__ = [
    "MethodOptions",
    "answer_or_reask",
    "estimate_tokens",
    "fill",
    "frames_with_screens",
    "options_of",
    "request",
    "sample_frames",
    "screen_block",
    "step_line",
    "ui_list",
]

Options = TypeVar("Options", bound="MethodOptions")


class MethodOptions(BaseModel):
    """Switches common to the methods; each method's model adds its own."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    long_edge: int = 1024
    """Screens are shrunk so their longer side is at most this many pixels (0: as recorded)."""


def options_of(subject: JudgeSubject, model: type[Options]) -> Options:
    """The subject's switches read by ``model`` (``check_method_options`` has checked them)."""
    return model.model_validate(dict(subject.options))


def fill(template: str, **values: str) -> str:
    """The ``prompts/methods/<template>`` text with its placeholders filled."""
    return load_template(f"methods/{template}").substitute(values)


def frames_with_screens(subject: JudgeSubject) -> list[Frame]:
    """The subject's frames that have a screenshot, in order."""
    return [
        frame
        for frame in trajectory_frames(subject.trajectory)
        if frame.observation is not None and frame.observation.screenshot is not None
    ]


def sample_frames(frames: list[Frame], count: int) -> list[Frame]:
    """``count`` frames spread evenly, the first and the last always among them."""
    chosen = set(select_screenshot_steps([frame.position for frame in frames], count))
    return [frame for frame in frames if frame.position in chosen]


def step_line(step: int, action: object) -> str:
    """``Step N: <action>`` for a step's action."""
    return f"{summarize_action(action, 300).removeprefix('android ')}"  # type: ignore[arg-type]


_TELLING = ("text", "content_description", "content-desc", "hint_text")
_INTERACTIVE = (
    "is_clickable",
    "clickable",
    "is_checked",
    "checked",
    "is_selected",
    "selected",
    "is_editable",
    "is_focused",
    "focused",
)


def _telling(fields: Mapping[str, object]) -> bool:
    """Whether an element shows text or a description, or can be acted on."""
    if any(isinstance(fields.get(key), str) and str(fields[key]).strip() for key in _TELLING):
        return True
    return any(fields.get(key) in (True, "true") for key in _INTERACTIVE)


def ui_list(text: str | None, limit: int = 80) -> str | None:
    """A UI element list cleaned to one short line per element, leaving out elements that show
    no text or description and cannot be acted on (layout containers); the raw text when it is
    in no known form; None when nothing is left."""
    elements = parse_ui_elements(text)
    if not elements:
        return text.strip() if text and text.strip() else None
    kept = [element_line(element) for element in elements if _telling(element.fields)]
    if len(kept) > limit:
        kept = [*kept[:limit], f"... ({len(kept) - limit} more elements)"]
    return "\n".join(kept) if kept else None


def estimate_tokens(text: str) -> int:
    """A rough token count (a quarter of the characters, rounded up): no tokenizer of the judge
    model is available offline, and the budget only needs to be consistent."""
    return math.ceil(len(text) / 4)


def screen_block(subject: JudgeSubject, frame: Frame, long_edge: int) -> Content | None:
    """A frame's screenshot, shrunk to ``long_edge``, as an image block (None when unreadable)."""
    image = frame_image(frame, subject.base_dir)
    return None if image is None else encode_png(resize_long_edge(image, long_edge))


def image_block(image: Image.Image, long_edge: int) -> Content:
    """Any image shrunk to ``long_edge`` as a block."""
    return encode_png(resize_long_edge(image, long_edge))


def request(system: str, parts: Sequence[Content | str]) -> list[ChatMessage]:
    """A system message and one user message of text and images (adjacent texts joined)."""
    content: list[Content] = []
    for part in parts:
        if isinstance(part, str):
            if content and isinstance(content[-1], ContentText):
                content[-1] = ContentText(text=content[-1].text + "\n" + part)
            else:
                content.append(ContentText(text=part))
        else:
            content.append(part)
    return [ChatMessageSystem(content=system), ChatMessageUser(content=content)]


Parsed = TypeVar("Parsed")


async def answer_or_reask(
    run: JudgeRun,
    messages: list[ChatMessage],
    parse: Callable[[str], Parsed | None],
    *,
    what: str,
) -> Parsed:
    """Send ``messages``; parse the answer; one re-ask when it does not parse, then end the run
    without a verdict (``INVALID``)."""
    answer = await run.ask(messages)
    parsed = parse(answer.content)
    if parsed is not None:
        return parsed
    run.say(REASK_MESSAGE)
    again = await run.generate(tools=False)
    parsed = parse(again.content)
    if parsed is None:
        raise RunEndedError("verdict", f"no readable {what} after a re-ask")
    return parsed
