"""How a recorded step reads, for every reader: the judge's prompt and ``VIEW_TRAJECTORY_STEP``.

Owns the one wording of a step (``render_step``: its action, the agent's reasoning, the error flag,
the observation text, URL and accessibility tree, what became of its screenshot), the wording of
an action (``render_action`` in full, ``summarize_action`` on one line, each asking the action
itself: every action space words itself in ``dataset.actions``), and
``render_trajectory``: the task, the numbered steps and the final response as every judge mode
reads them in its prompt, with the screenshots ``dataset.screenshots`` selects and reads. Readers
differ only in their ``StepLimits`` and in the note they give about a step's screenshot, so a
step is worded the same way in the prompt and in the trajectory server's answer.

Must not import any package above ``dataset``: images are returned as bytes with their MIME type,
and turning them into a chat model's or an MCP content block is the reader's business.

What the prompt shows: the instruction, the domain and subdomain, how the run ended, every step
as above, then the final response and, for search tasks, the claims extracted from it (text and
cited sources only). Never shown: the label (value, verifier output, votes, error message), the
claims' labels, task or trajectory ``metadata``, ``provenance``, the agent and model names, the
task and trajectory ids and screenshot paths (in many datasets the id spells the outcome). The
text is the same in every judge mode for the same inputs, so that tool access stays the only
difference between modes; its notices are worded without reference to any tool.

Truncation (every cut is announced in the text with the number of characters or steps left out):

- each field of a step is capped by the reader's ``StepLimits``: the action, the reasoning, the
  observation text (head and tail kept, the middle cut) and the accessibility tree (head kept),
  with a larger cap for the LAST step's tree, which shows the final screen. The prompt's limits
  are ``PROMPT_STEP_LIMITS``;
- the instruction is capped at ``INSTRUCTION_CHARS`` and the final response at
  ``FINAL_RESPONSE_CHARS`` (head and tail);
- long trajectories keep a head and a tail: at most ``MAX_STEPS_SHOWN`` steps and
  ``STEPS_CHAR_BUDGET`` characters of step text; the first steps (up to ``HEAD_STEPS``, within a
  third of the budget) and then as many of the last steps as fit are shown, the middle replaced by
  one notice. The last step is always shown.

Screenshots follow a ``ScreenshotPolicy`` (``"last"`` by default), chosen among the steps shown
in the text; accessibility trees follow one too (``"all"`` by default: every shown step's tree),
so that a GUI judge can be given screenshots, trees or both. A step whose tree is left out says
that one was recorded and how long it is. A screenshot file that is missing, unreadable, outside
the trajectory's folder or too large is noted in the text and skipped, never an exception.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, PositiveInt

from dataset.actions import Action
from dataset.items import focused_item
from dataset.models import ClaimItem, Step, Task, Trajectory
from dataset.screenshots import (
    DEFAULT_SCREENSHOTS,
    Screenshot,
    ScreenshotPolicy,
    load_screenshot,
    parse_screenshot_policy,
    select_screenshot_steps,
)

__all__ = [
    "ACCESSIBILITY_TREE_CHARS",
    "ACTION_CHARS",
    "CLAIM_CHARS",
    "DEFAULT_TREES",
    "FINAL_ACCESSIBILITY_TREE_CHARS",
    "FINAL_RESPONSE_CHARS",
    "HEAD_STEPS",
    "INSTRUCTION_CHARS",
    "MAX_STEPS_SHOWN",
    "OBSERVATION_TEXT_CHARS",
    "PROMPT_STEP_LIMITS",
    "REASONING_CHARS",
    "STEPS_CHAR_BUDGET",
    "SUMMARY_CHARS",
    "RenderedTrajectory",
    "StepLimits",
    "render_action",
    "render_step",
    "render_trajectory",
    "summarize_action",
    "timing_text",
]

INSTRUCTION_CHARS = 12_000
"""Characters of the task instruction shown in the prompt (head and tail beyond it)."""
ACTION_CHARS = 2_000
"""Characters of one rendered action (tool arguments, code) shown in the prompt."""
REASONING_CHARS = 2_000
"""Characters of one step's reasoning shown in the prompt."""
OBSERVATION_TEXT_CHARS = 3_000
"""Characters of one step's observation text shown in the prompt (two thirds head, one third
tail)."""
ACCESSIBILITY_TREE_CHARS = 2_000
"""Characters of an intermediate step's accessibility tree shown in the prompt (head)."""
FINAL_ACCESSIBILITY_TREE_CHARS = 8_000
"""Characters of the last step's accessibility tree shown in the prompt (it describes the final
screen)."""
FINAL_RESPONSE_CHARS = 8_000
"""Characters of the agent's final response shown in the prompt (head and tail)."""
CLAIM_CHARS = 500
"""Characters of one extracted claim shown."""
MAX_STEPS_SHOWN = 60
"""Steps shown at most; longer trajectories lose steps from the middle."""
HEAD_STEPS = 10
"""Steps kept from the start of a trajectory too long to show whole."""
STEPS_CHAR_BUDGET = 120_000
"""Characters of step text shown at most (the last step is shown even if alone it is larger)."""
DEFAULT_TREES: ScreenshotPolicy = "all"
"""Which shown steps' accessibility trees the prompt includes unless configured otherwise."""
SUMMARY_CHARS = 100
"""Characters of the one-line summary of an action (``summarize_action``)."""


class StepLimits(BaseModel):
    """How many characters of each field of a step a reader shows before cutting it."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    action: PositiveInt
    """The rendered action (tool arguments, code), head kept."""
    reasoning: PositiveInt
    """The agent's reasoning, head kept."""
    observation_text: PositiveInt
    """The observation text: two thirds head and one third tail kept, the middle cut."""
    accessibility_tree: PositiveInt
    """The accessibility tree of any step but the last, head kept."""
    final_accessibility_tree: PositiveInt
    """The accessibility tree of the last step (the final screen), head kept."""


PROMPT_STEP_LIMITS = StepLimits(
    action=ACTION_CHARS,
    reasoning=REASONING_CHARS,
    observation_text=OBSERVATION_TEXT_CHARS,
    accessibility_tree=ACCESSIBILITY_TREE_CHARS,
    final_accessibility_tree=FINAL_ACCESSIBILITY_TREE_CHARS,
)
"""The limits of the judge's prompt, where every shown step shares one character budget."""

_STOP_REASONS = {
    "completed": "the agent ended the run itself",
    "turn_limit": "the agent ran out of its turn budget",
    "error": "the run ended with an error",
    "unknown": "not recorded",
}


class RenderedTrajectory(BaseModel):
    """A task and trajectory rendered for a judge's prompt."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    text: str
    """The task and the trajectory as text (identical across judge modes)."""

    images: list[tuple[int, Screenshot]] = Field(default_factory=list)
    """Attached screenshots in step order, each with the number of the step it followed."""

    shown_steps: list[int] = Field(default_factory=list)
    """Numbers of the steps shown in the text."""

    missing_screenshots: list[int] = Field(default_factory=list)
    """Steps whose selected screenshot could not be attached (missing, unreadable, too big)."""

    tree_steps: list[int] = Field(default_factory=list)
    """Steps whose accessibility tree is shown in the text."""


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


# --- actions -------------------------------------------------------------------------------


def render_action(action: Action) -> str:
    """The full action of a step, readable for every action space (the action words itself)."""
    return action.render()


def _flatten(text: str, limit: int) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def summarize_action(action: Action, limit: int = SUMMARY_CHARS) -> str:
    """One line naming the action, at most ``limit`` characters."""
    return _flatten(action.summary(), limit)


def timing_text(started: datetime | None, ended: datetime | None) -> str:
    """``started ..., ended ... (took N s)``, saying which times were not recorded."""

    def stamp(value: datetime | None) -> str:
        return value.isoformat() if value is not None else "not recorded"

    text = f"started {stamp(started)}, ended {stamp(ended)}"
    if started is not None and ended is not None:
        text += f" (took {(ended - started).total_seconds():.1f} s)"
    return text


# --- steps ----------------------------------------------------------------------------------


def render_step(
    step: Step,
    *,
    limits: StepLimits,
    last: bool,
    screenshot_note: str | None,
    timing: bool = False,
    show_tree: bool = True,
) -> str:
    """Everything recorded for ``step`` under a ``### Step N`` heading, each field cut to
    ``limits`` (``last``: the step is the trajectory's last, whose accessibility tree shows the
    final screen). ``screenshot_note`` says what became of its screenshot (None: no line);
    ``timing`` adds when the step started and ended; without ``show_tree`` a recorded
    accessibility tree is only mentioned, with its length."""
    parts = [f"### Step {step.index}"]
    parts.append(_cut_head(render_action(step.action), limits.action, f"{_where(step)} action"))
    if step.reasoning:
        reasoning = _cut_head(step.reasoning.strip(), limits.reasoning, f"{_where(step)} reasoning")
        parts.append(f"Agent's reasoning:\n{reasoning}")
    if step.is_error:
        parts.append("The environment flagged this step as an ERROR.")
    if timing:
        parts.append(f"Timing: {timing_text(step.started_at, step.ended_at)}")
    observation = step.observation
    if observation is None:
        parts.append("Observation: none recorded.")
    else:
        if observation.url is not None:
            parts.append(f"URL: {observation.url}")
        if observation.text is not None:
            body = _cut_middle(
                observation.text, limits.observation_text, f"{_where(step)} observation text"
            )
            parts.append(f"Observation:\n{body}" if body.strip() else "Observation: (empty)")
        tree = observation.accessibility_tree
        if tree is not None and not show_tree:
            parts.append(f"Accessibility tree: recorded ({len(tree):,} characters), not shown.")
        elif tree is not None:
            limit = limits.final_accessibility_tree if last else limits.accessibility_tree
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
        self.images: list[tuple[int, Screenshot]] = []
        self.missing: list[int] = []
        self.notes: dict[int, str] = {}
        for step in shown:
            if step.observation is None or step.observation.screenshot is None:
                continue
            if step.index not in selected:
                self.notes[step.index] = "recorded, not attached"
                continue
            loaded = load_screenshot(base, step.observation.screenshot)
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
    trajectory: Trajectory,
    shown: list[Step],
    notes: dict[int, str],
    long: bool,
    trees: set[int],
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
        note = notes.get(step.index)
        block = render_step(
            step,
            limits=PROMPT_STEP_LIMITS,
            last=last,
            screenshot_note=note,
            show_tree=step.index in trees,
        )
        lines += [block, ""]
        previous = step.index
    return lines


def _answer_lines(trajectory: Trajectory) -> list[str]:
    lines = ["# Final response of the agent"]
    response = (trajectory.final_response or "").strip()
    if response:
        lines += ['"""', _cut_middle(response, FINAL_RESPONSE_CHARS, "the response"), '"""']
    else:
        lines.append("(The run ended without a final response.)")
    focus = focused_item(trajectory)
    if focus is not None:
        lines += [
            "",
            "# The claim to judge",
            "Judge this single claim from the final response, and only it: PASS when it is "
            "correct and the sources it cites support it, FAIL otherwise. The rest of the "
            "response is context; its other claims do not count.",
            "",
            _claim_line(focus),
        ]
    elif trajectory.items:
        lines += ["", "# Claims extracted from the final response"]
        for number, item in enumerate(trajectory.items, start=1):
            lines.append(f"{number}. {_claim_line(item)}")
        lines += [
            "",
            "Give each numbered claim its own verdict, one line per claim before your overall "
            "verdict, in the form `Claim 1: PASS` or `Claim 1: FAIL` (with `submit_verdict`, "
            'in its `claims` argument instead, e.g. {"1": "PASS"}). The overall verdict is '
            "PASS only when every claim passes.",
        ]
    return lines


def _claim_line(item: ClaimItem) -> str:
    claim = _cut_head(item.text.strip(), CLAIM_CHARS, "the claim")
    sources = f" (cited: {', '.join(item.sources)})" if item.sources else ""
    return f"{claim}{sources}"


def render_trajectory(
    task: Task,
    trajectory: Trajectory,
    *,
    base_dir: Path | str | None,
    screenshots: ScreenshotPolicy | str = DEFAULT_SCREENSHOTS,
    trees: ScreenshotPolicy | str = DEFAULT_TREES,
) -> RenderedTrajectory:
    """The task and trajectory as the judge's prompt shows them; screenshots are loaded from
    ``base_dir`` (the folder of the trajectory file) according to ``screenshots``, and the
    accessibility trees of the steps ``trees`` selects are shown (same policy forms)."""
    policy = parse_screenshot_policy(screenshots)
    tree_policy = parse_screenshot_policy(trees)
    steps = trajectory.steps
    # Which steps are shown is decided on blocks rendered without screenshot notes (the notes
    # change the sizes only slightly).
    draft = [
        render_step(
            step, limits=PROMPT_STEP_LIMITS, last=position == len(steps) - 1, screenshot_note=None
        )
        for position, step in enumerate(steps)
    ]
    chosen = _choose_steps(draft)
    shown = steps if chosen is None else [steps[position] for position in chosen]
    shots = _Screenshots(shown, policy, Path(base_dir) if base_dir is not None else None)
    with_trees = [
        step.index
        for step in shown
        if step.observation is not None and step.observation.accessibility_tree is not None
    ]
    tree_steps = select_screenshot_steps(with_trees, tree_policy)

    lines = _task_lines(task)
    lines += _steps_lines(trajectory, shown, shots.notes, chosen is not None, set(tree_steps))
    lines += _answer_lines(trajectory)
    lines += shots.summary()
    return RenderedTrajectory(
        text="\n".join(lines).rstrip() + "\n",
        images=shots.images,
        shown_steps=[step.index for step in shown],
        missing_screenshots=shots.missing,
        tree_steps=tree_steps,
    )
