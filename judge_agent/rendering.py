"""The trajectory as every judge mode sees it: the task, the numbered steps, the final response.

Owns ``render_trajectory`` (text plus the attached screenshots), the screenshot policies and the
truncation limits of the judge's prompt. The text is the same in every mode (``agent``, ``llm``,
``react``) for the same inputs, so that tool access stays the only difference between modes; its
notices are worded without reference to any tool.

What is shown: the instruction, the domain and subdomain, how the run ended, for each step the
action (rendered exactly as ``VIEW_TRAJECTORY_STEP`` renders it, via
``mcp_servers.trajectory.render.render_action``), the agent's reasoning, whether the environment
flagged an error, the observation text, URL and accessibility tree, and what became of its
screenshot; then the final response and, for search tasks, the claims extracted from it (text and
cited sources only). Never shown: the label (value, verifier output, votes, error message), the
claims' labels, task or trajectory ``metadata``, ``provenance``, the agent and model names, the
task and trajectory ids and screenshot paths (in many datasets the id spells the outcome).

Truncation (every cut is announced in the text with the number of characters or steps left out):

- each field of a step is capped: action ``ACTION_CHARS``, reasoning ``REASONING_CHARS``,
  observation text ``OBSERVATION_TEXT_CHARS`` (head and tail kept, the middle cut), accessibility
  tree ``ACCESSIBILITY_TREE_CHARS`` (head kept), except the LAST step's tree, which shows the final
  screen and gets ``FINAL_ACCESSIBILITY_TREE_CHARS``;
- the instruction is capped at ``INSTRUCTION_CHARS`` and the final response at
  ``FINAL_RESPONSE_CHARS`` (head and tail);
- long trajectories keep a head and a tail: at most ``MAX_STEPS_SHOWN`` steps and
  ``STEPS_CHAR_BUDGET`` characters of step text; the first steps (up to ``HEAD_STEPS``, within a
  third of the budget) and then as many of the last steps as fit are shown, the middle replaced by
  one notice. The last step is always shown.

Screenshots (``ScreenshotPolicy``): ``"last"`` (the default: the last recorded screenshot),
``"all"``, ``"none"``, or a number N: N screenshots sampled uniformly over the steps that have
one, always including the first and the last. Selection is made among the steps shown in the
text. Images are read from files relative to the trajectory file's folder; a file that is missing,
unreadable, outside that folder or over ``SCREENSHOT_BYTES_LIMIT`` is noted in the text and
skipped, never an exception.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from dataset.models import Step, Task, Trajectory
from judge_agent.model import ContentImage
from mcp_servers.trajectory.render import render_action
from mcp_servers.trajectory.server import image_mime_type

__all__ = [
    "ACCESSIBILITY_TREE_CHARS",
    "ACTION_CHARS",
    "CLAIM_CHARS",
    "DEFAULT_SCREENSHOTS",
    "FINAL_ACCESSIBILITY_TREE_CHARS",
    "FINAL_RESPONSE_CHARS",
    "HEAD_STEPS",
    "INSTRUCTION_CHARS",
    "MAX_STEPS_SHOWN",
    "OBSERVATION_TEXT_CHARS",
    "REASONING_CHARS",
    "SCREENSHOT_BYTES_LIMIT",
    "STEPS_CHAR_BUDGET",
    "RenderedTrajectory",
    "ScreenshotPolicy",
    "parse_screenshot_policy",
    "render_trajectory",
    "select_screenshot_steps",
]

INSTRUCTION_CHARS = 12_000
"""Characters of the task instruction shown (head and tail beyond it)."""
ACTION_CHARS = 2_000
"""Characters of one rendered action (tool arguments, code) shown."""
REASONING_CHARS = 2_000
"""Characters of one step's reasoning shown."""
OBSERVATION_TEXT_CHARS = 3_000
"""Characters of one step's observation text shown (two thirds head, one third tail)."""
ACCESSIBILITY_TREE_CHARS = 2_000
"""Characters of an intermediate step's accessibility tree shown (head)."""
FINAL_ACCESSIBILITY_TREE_CHARS = 8_000
"""Characters of the last step's accessibility tree shown (it describes the final screen)."""
FINAL_RESPONSE_CHARS = 8_000
"""Characters of the agent's final response shown (head and tail)."""
CLAIM_CHARS = 500
"""Characters of one extracted claim shown."""
MAX_STEPS_SHOWN = 60
"""Steps shown at most; longer trajectories lose steps from the middle."""
HEAD_STEPS = 10
"""Steps kept from the start of a trajectory too long to show whole."""
STEPS_CHAR_BUDGET = 120_000
"""Characters of step text shown at most (the last step is shown even if alone it is larger)."""
SCREENSHOT_BYTES_LIMIT = 20 * 1024 * 1024
"""Screenshot files larger than this are noted, not attached."""

ScreenshotPolicy = Literal["all", "none", "last"] | int
"""Which screenshots to attach: all, none, the last, or N sampled uniformly (first and last
included)."""
DEFAULT_SCREENSHOTS: ScreenshotPolicy = "last"
"""The policy of the ``llm``, ``agent`` and ``react`` modes unless configured otherwise."""

_STOP_REASONS = {
    "completed": "the agent ended the run itself",
    "turn_limit": "the agent ran out of its turn budget",
    "error": "the run ended with an error",
    "unknown": "not recorded",
}


class RenderedTrajectory(BaseModel):
    """A task and trajectory rendered for a judge."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    text: str
    """The task and the trajectory as text (identical across judge modes)."""

    images: list[tuple[int, ContentImage]] = Field(default_factory=list)
    """Attached screenshots in step order, each with the number of the step it followed."""

    shown_steps: list[int] = Field(default_factory=list)
    """Numbers of the steps shown in the text."""

    missing_screenshots: list[int] = Field(default_factory=list)
    """Steps whose selected screenshot could not be attached (missing, unreadable, too big)."""


def parse_screenshot_policy(value: str | int) -> ScreenshotPolicy:
    """``"all"``, ``"none"``, ``"last"`` or a non-negative count (as int or digits)."""
    if isinstance(value, bool):
        raise ValueError(f"screenshot policy must be all, none, last or a number; got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"screenshot count must be 0 or more; got {value}")
        return value
    text = value.strip().lower()
    if text == "all":
        return "all"
    if text == "none":
        return "none"
    if text == "last":
        return "last"
    if text.isdigit():
        return int(text)
    raise ValueError(f"screenshot policy must be all, none, last or a number; got {value!r}")


def select_screenshot_steps(candidates: list[int], policy: ScreenshotPolicy) -> list[int]:
    """The steps (from ``candidates``, in order) whose screenshots ``policy`` attaches."""
    if not candidates or policy in {"none", 0}:
        return []
    if policy == "all":
        return list(candidates)
    if policy in {"last", 1}:
        return [candidates[-1]]
    assert isinstance(policy, int)
    if policy >= len(candidates):
        return list(candidates)
    last = len(candidates) - 1
    positions = sorted({round(i * last / (policy - 1)) for i in range(policy)})
    return [candidates[position] for position in positions]


# --- text helpers ---------------------------------------------------------------------------


def _cut_head(text: str, limit: int, what: str) -> str:
    if len(text) <= limit:
        return text
    omitted = len(text) - limit
    return f"{text[:limit]}\n[... {omitted:,} more characters of {what} omitted here]"


def _cut_middle(text: str, limit: int, what: str) -> str:
    if len(text) <= limit:
        return text
    head = (limit * 2) // 3
    tail = limit - head
    omitted = len(text) - limit
    return (
        f"{text[:head]}\n[... {omitted:,} characters from the middle of {what} omitted here "
        f"...]\n{text[len(text) - tail :]}"
    )


def _where(step: Step) -> str:
    return f"step {step.index}'s"


# --- screenshots ----------------------------------------------------------------------------


def _load_image(base_dir: Path | None, relative: str) -> ContentImage | str:
    """The screenshot as an image block, or why it cannot be attached (never naming the file)."""
    if base_dir is None:
        return "recorded, but the image files are not available to this judge; not attached"
    base = base_dir.resolve()
    path = (base / relative).resolve()
    if not path.is_relative_to(base):
        return "recorded, but its path leads outside the trajectory's folder; not attached"
    try:
        if not path.is_file():
            return "recorded, but the image file is missing; not attached"
        size = path.stat().st_size
        if size > SCREENSHOT_BYTES_LIMIT:
            return f"recorded, but the file is too large to attach ({size:,} bytes)"
        data = path.read_bytes()
    except OSError:
        return "recorded, but the image file cannot be read; not attached"
    return ContentImage(
        data=base64.b64encode(data).decode("ascii"), mime_type=image_mime_type(data, path)
    )


# --- steps ----------------------------------------------------------------------------------


def _render_step(step: Step, *, last: bool, screenshot_note: str | None) -> str:
    parts = [f"### Step {step.index}"]
    parts.append(_cut_head(render_action(step.action), ACTION_CHARS, f"{_where(step)} action"))
    if step.reasoning:
        reasoning = _cut_head(step.reasoning.strip(), REASONING_CHARS, f"{_where(step)} reasoning")
        parts.append(f"Agent's reasoning:\n{reasoning}")
    if step.is_error:
        parts.append("The environment flagged this step as an ERROR.")
    observation = step.observation
    if observation is None:
        parts.append("Observation: none recorded.")
    else:
        if observation.url is not None:
            parts.append(f"URL: {observation.url}")
        if observation.text is not None:
            body = _cut_middle(
                observation.text, OBSERVATION_TEXT_CHARS, f"{_where(step)} observation text"
            )
            parts.append(f"Observation:\n{body}" if body.strip() else "Observation: (empty)")
        tree = observation.accessibility_tree
        if tree is not None:
            limit = FINAL_ACCESSIBILITY_TREE_CHARS if last else ACCESSIBILITY_TREE_CHARS
            cut = _cut_head(tree, limit, f"{_where(step)} accessibility tree")
            parts.append(f"Accessibility tree ({len(tree):,} characters):\n{cut}")
        if observation.text is None and tree is None and observation.url is None:
            parts.append("Observation: no text recorded.")
    if screenshot_note is not None:
        parts.append(f"Screenshot: {screenshot_note}")
    return "\n".join(parts)


def _choose_steps(blocks: list[str]) -> list[int] | None:
    """Positions of the blocks to show, or None when all fit."""
    total = len(blocks)
    if total <= MAX_STEPS_SHOWN and sum(len(block) for block in blocks) <= STEPS_CHAR_BUDGET:
        return None
    head: list[int] = []
    used = 0
    for position in range(min(HEAD_STEPS, total - 1)):
        if used + len(blocks[position]) > STEPS_CHAR_BUDGET // 3:
            break
        head.append(position)
        used += len(blocks[position])
    tail: list[int] = [total - 1]
    used += len(blocks[-1])
    for position in range(total - 2, len(head) - 1, -1):
        if len(head) + len(tail) >= MAX_STEPS_SHOWN:
            break
        if used + len(blocks[position]) > STEPS_CHAR_BUDGET:
            break
        tail.append(position)
        used += len(blocks[position])
    return head + sorted(tail)


class _Screenshots:
    """The screenshots chosen among the shown steps: images, notes per step, missing ones."""

    def __init__(self, shown: list[Step], policy: ScreenshotPolicy, base: Path | None) -> None:
        self.recorded = [
            step.index
            for step in shown
            if step.observation is not None and step.observation.screenshot is not None
        ]
        selected = set(select_screenshot_steps(self.recorded, policy))
        self.images: list[tuple[int, ContentImage]] = []
        self.missing: list[int] = []
        self.notes: dict[int, str] = {}
        for step in shown:
            if step.observation is None or step.observation.screenshot is None:
                continue
            if step.index not in selected:
                self.notes[step.index] = "recorded, not attached"
                continue
            loaded = _load_image(base, step.observation.screenshot)
            if isinstance(loaded, str):
                self.notes[step.index] = loaded
                self.missing.append(step.index)
            else:
                self.images.append((step.index, loaded))
                self.notes[step.index] = f"attached below as image {len(self.images)}"

    def summary(self) -> list[str]:
        if not self.recorded:
            return []
        attached = (
            f"{len(self.images)} attached after this text, after step(s) "
            + ", ".join(str(index) for index, _ in self.images)
            + "."
            if self.images
            else "none attached."
        )
        lines = [
            "",
            "# Screenshots",
            f"{len(self.recorded)} of the steps shown have a screenshot; ",
        ]
        lines[-1] += attached
        if self.missing:
            listed = ", ".join(str(index) for index in self.missing)
            lines.append(f"Selected but not available: step(s) {listed}.")
        return lines


def _task_lines(task: Task) -> list[str]:
    instruction = _cut_middle(task.instruction.strip(), INSTRUCTION_CHARS, "the instruction")
    return [
        "# Task",
        f"Domain: {task.domain} (subdomain: {task.subdomain})",
        "Instruction given to the agent:",
        '"""',
        instruction,
        '"""',
        "",
    ]


def _steps_lines(
    trajectory: Trajectory, shown: list[Step], notes: dict[int, str], long: bool
) -> list[str]:
    steps = trajectory.steps
    errors = sum(step.is_error for step in steps)
    summary = f"The agent took {len(steps)} step{'s' if len(steps) != 1 else ''}"
    summary += f" ({errors} flagged as errors by the environment)." if errors else "."
    lines = ["# Agent trajectory", summary]
    lines.append(f"How the run ended: {_STOP_REASONS[trajectory.stop_reason]}.")
    if long:
        lines.append(
            f"The trajectory is long: {len(shown)} of its {len(steps)} steps are shown below, the "
            "first and the last ones; a notice marks where steps are left out."
        )
    lines.append("")
    if not steps:
        lines += ["(No steps were recorded.)", ""]
    previous = 0
    for step in shown:
        if step.index > previous + 1:
            gap = step.index - previous - 1
            lines += [
                f"[... steps {previous + 1} to {step.index - 1} ({gap} steps) are omitted here "
                "to keep the trajectory within length limits ...]",
                "",
            ]
        last = step.index == len(steps)
        lines += [_render_step(step, last=last, screenshot_note=notes.get(step.index)), ""]
        previous = step.index
    return lines


def _answer_lines(trajectory: Trajectory) -> list[str]:
    lines = ["# Final response of the agent"]
    response = (trajectory.final_response or "").strip()
    if response:
        lines += ['"""', _cut_middle(response, FINAL_RESPONSE_CHARS, "the response"), '"""']
    else:
        lines.append("(The run ended without a final response.)")
    if trajectory.items:
        lines += ["", "# Claims extracted from the final response"]
        for number, item in enumerate(trajectory.items, start=1):
            claim = _cut_head(item.text.strip(), CLAIM_CHARS, "the claim")
            sources = f" (cited: {', '.join(item.sources)})" if item.sources else ""
            lines.append(f"{number}. {claim}{sources}")
    return lines


def render_trajectory(
    task: Task,
    trajectory: Trajectory,
    *,
    base_dir: Path | str | None,
    screenshots: ScreenshotPolicy | str = DEFAULT_SCREENSHOTS,
) -> RenderedTrajectory:
    """The task and trajectory as the judge reads them; screenshots are loaded from ``base_dir``
    (the folder of the trajectory file) according to ``screenshots``."""
    policy = parse_screenshot_policy(screenshots)
    steps = trajectory.steps
    # Which steps are shown is decided on blocks rendered without screenshot notes (the notes
    # change the sizes only slightly).
    draft = [
        _render_step(step, last=position == len(steps) - 1, screenshot_note=None)
        for position, step in enumerate(steps)
    ]
    chosen = _choose_steps(draft)
    shown = steps if chosen is None else [steps[position] for position in chosen]
    shots = _Screenshots(shown, policy, Path(base_dir) if base_dir is not None else None)

    lines = _task_lines(task)
    lines += _steps_lines(trajectory, shown, shots.notes, long=chosen is not None)
    lines += _answer_lines(trajectory)
    lines += shots.summary()
    return RenderedTrajectory(
        text="\n".join(lines).rstrip() + "\n",
        images=shots.images,
        shown_steps=[step.index for step in shown],
        missing_screenshots=shots.missing,
    )
