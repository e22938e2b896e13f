"""The desktop kind's replay of one GUI step: perform the recorded action, then compare the
screen with the record.

A ``computer_13`` action or ``pyautogui`` code is performed again by the desktop kind
(``DesktopKind.perform_action``: inside the desktop, never on the host, no fixed pause: the
desktop's control server watches the screen until it stops changing), which answers with the
screen afterwards. The step matches when the replayed screenshot is perceptually the same as the
recorded one (``sandboxes.screens``) and, where the tree is read, the accessibility tree holds
the same elements (``compare_trees``), at once or on a look again within ``CATCH_UP_SECONDS``
(the report keeps how long that took); otherwise it diverged, the report says by how much,
where on the screen, and which elements differ, and the step asks replay to replay the run once
more on a fresh desktop before the divergence is reported (``StepFidelity.retry``). A step
whose record holds neither a screenshot nor a tree is ``unrecorded``. Signals (WAIT, FAIL,
DONE) touch nothing, so their differences are only in what the agent was shown.

Trees are compared as the elements an agent reads: role, name and text of each node the
linearised tree keeps, positions left out so that a layout shift of a few pixels is not a
different state, and the desktop's home folder written as ``~`` (every backend now puts it at
``/home/user``, as OSWorld's VM does; local desktops used to show it as their box's ``/box``, and
recordings made then still compare).
"""

from __future__ import annotations

import asyncio
import re
import time
import weakref
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from dataset.actions import Computer13Action, PyAutoGuiAction
from dataset.models import Step
from dataset.screenshots import Screenshot, load_screenshot
from environments.diffs import short_diff
from environments.steps import RecordedStep, StepFidelity
from sandboxes.base import Sandbox
from sandboxes.confinement import WORK_MOUNT
from sandboxes.desktop.image import HOME
from sandboxes.desktop.observations import tree_nodes
from sandboxes.screens import REPLAY_SHIFT, ScreenComparison, compare_screens

if TYPE_CHECKING:
    from environments.desktop.kind import DesktopKind
    from sandboxes.desktop.client import ImageFormat

__all__ = [
    "CATCH_UP_SECONDS",
    "PerformedAction",
    "compare_trees",
    "replay_gui_step",
    "tree_elements",
]

CATCH_UP_SECONDS = 8.0
"""Seconds replay keeps looking again at a step whose screen differs from the record before it
calls the step diverged: a machine busy with other desktops can leave a screen still for the
usual settling time and then paint the rest (a placeholder, a redrawn ruler)."""
CATCH_UP_AFTER_DIVERGENCE = 1.0
"""Seconds replay looks again on a desktop that already diverged at an earlier step: it is off
the record, so its later screens will mostly differ too, and waiting the full
``CATCH_UP_SECONDS`` at each would only make the report late."""
FIRST_LOOK_QUIET = 0.15
"""Seconds the screen must stay unchanged after a replayed action before it is compared with a
recorded screenshot: half the settling time of an action with nothing to compare (the
provider's ``settle_quiet``), as a first look taken while LibreOffice still paints is looked at
again (``CATCH_UP_SECONDS``) rather than reported."""
CATCH_UP_QUIET = 0.15
"""While looking again: seconds the screen must stay unchanged for a look to count (a look in
the middle of painting is wasted)."""
CATCH_UP_INTERVAL = 0.1
"""Seconds between those looks where the desktop is not asked for the next screen drawn (the
record has only a tree to compare)."""
LOOK_FORMAT: ImageFormat = "pgm"
"""How replay's looks at the screen travel: raw grey pixels, as they are only compared (never
stored) and the comparison works on grey: no PNG encoding in the desktop or decoding in replay,
and a third of the bytes of raw colour pixels."""
COULD_NOT_RUN = "the action could not run"
"""How the error of an action the desktop could not take at all begins."""
RECORDED_WAIT_LIMIT = 5.0
"""Longest recorded wait replay repeats, for a WAIT step without a recorded screen (a step with
one waits for its screen instead)."""


@dataclass(frozen=True)
class PerformedAction:
    """One recorded mouse or keyboard action (or pyautogui code), performed again on a desktop,
    and what the desktop showed afterwards."""

    status: Literal["done", "failed", "signal"]
    """``done``: performed; ``failed``: it could not run or raised; ``signal``: a WAIT, FAIL or
    DONE that touches nothing."""
    error: str = ""
    """Why it failed (its error output), for ``failed``."""
    screenshot: bytes | None = None
    """The screen afterwards (PNG, or PGM where asked), when asked for."""
    accessibility_tree: str | None = None
    """The accessibility tree afterwards (OSWorld's XML), when asked for."""
    seconds: float = 0.0
    """Wall time of the action, the wait for a settled screen and the observation."""
    action_seconds: float = 0.0
    """Of that, running the action inside the desktop."""
    settle_seconds: float = 0.0
    """Of that, waiting for the screen to settle (and, before a desktop's first action, for
    its window to be drawn)."""
    tree_seconds: float = 0.0
    """Of that, reading the accessibility tree."""


_HOME_FOLDERS = re.compile(
    "(?<![\\w.-])(?:" + "|".join(re.escape(str(home)) for home in (WORK_MOUNT, HOME)) + ")(?=/)"
)
"""A desktop's home folder on any backend, where a path starts."""


def _home_as_tilde(text: str) -> str:
    return _HOME_FOLDERS.sub("~", text)


def tree_elements(xml: str) -> list[str]:
    """The elements an agent reads in a tree (OSWorld XML): ``role<TAB>name<TAB>text`` per node
    the linearised tree keeps, in document order, with the desktop's home folder as ``~``;
    ``ValueError`` when it is not XML."""
    try:
        return [_home_as_tilde(f"{node.tag}\t{node.name}\t{node.text}") for node in tree_nodes(xml)]
    except Exception as error:  # ElementTree.ParseError and friends
        raise ValueError(f"the accessibility tree is not OSWorld XML: {error}") from None


def compare_trees(recorded: str, replayed: str) -> str | None:
    """A short diff of the elements (recorded -, replayed +), or None when they are the same."""
    before = "\n".join(tree_elements(recorded))
    after = "\n".join(tree_elements(replayed))
    if before == after:
        return None
    return short_diff(before, after)


def _name(action: Computer13Action | PyAutoGuiAction) -> str:
    if isinstance(action, Computer13Action):
        return action.action_type
    return f"pyautogui {action.code.strip()}" if action.is_control else "pyautogui"


_DIVERGED: weakref.WeakSet[Sandbox] = weakref.WeakSet()
"""Desktops whose replay already diverged at some step."""


def _recorded_wait(step: Step, action: Computer13Action | PyAutoGuiAction) -> float:
    """How long the agent waited at a WAIT step: its ``seconds`` parameter, else the step's
    recorded duration, at most ``RECORDED_WAIT_LIMIT``; 0 for other actions."""
    if isinstance(action, Computer13Action):
        if action.action_type != "WAIT":
            return 0.0
        given = action.parameters.get("seconds")
        if isinstance(given, int | float) and not isinstance(given, bool):
            return min(max(float(given), 0.0), RECORDED_WAIT_LIMIT)
    elif action.code.strip() != "WAIT":
        return 0.0
    if step.started_at is not None and step.ended_at is not None:
        recorded = (step.ended_at - step.started_at).total_seconds()
        return min(max(recorded, 0.0), RECORDED_WAIT_LIMIT)
    return 0.0


async def replay_gui_step(
    kind: DesktopKind, sandbox: Sandbox, recorded_step: RecordedStep
) -> StepFidelity:
    """Perform the step's action on ``sandbox`` and compare what the screen shows with the
    record (screenshots are read from the step's ``trajectory_dir``).

    The screen is read once it has settled (``FIRST_LOOK_QUIET`` without a change where a
    recorded screenshot is compared, the provider's ``settle_quiet`` otherwise); a screen that
    matches the record ends the step at once. The accessibility tree is read only when the
    comparison needs it: the record has no screenshot to compare, or the screen differs (the
    tree diff names what differs). A matching screen is not checked against the tree: the
    fine screen test sees a letter or a mark that differs, and reading a sheet's tree costs
    more than the rest of the step."""
    started = time.perf_counter()
    step, trajectory_dir = recorded_step.step, recorded_step.trajectory_dir
    action = step.action
    assert isinstance(action, Computer13Action | PyAutoGuiAction)
    position = f"{recorded_step.file}: step {step.index}"
    signal = (
        action.action_type in {"WAIT", "FAIL", "DONE"}
        if isinstance(action, Computer13Action)
        else action.is_control
    )
    outcome = StepFidelity(index=step.index, tool=_name(action), status="unrecorded", writes=True)
    recorded = await _recorded_screen(step, trajectory_dir, outcome, position)
    has_tree = recorded.tree is not None
    tree_now = has_tree and recorded.image is None
    timings: dict[str, float] = {}
    try:
        if recorded.image is None:  # nothing to wait for on the screen: wait as the agent did
            await asyncio.sleep(_recorded_wait(step, action))
        performed = await kind.perform_action(
            sandbox,
            action,
            screenshot=recorded.image is not None,
            tree=tree_now,
            quiet=FIRST_LOOK_QUIET if recorded.image is not None else None,
            image_format=LOOK_FORMAT,
        )
    except Exception as error:  # a broken desktop must fail this step, not the whole run
        performed = PerformedAction(
            status="failed", error=f"{COULD_NOT_RUN}: {type(error).__name__}: {error}"
        )
    timings["action"] = performed.action_seconds
    timings["settle"] = performed.settle_seconds
    timings["tree"] = performed.tree_seconds
    if performed.status == "failed":
        _failed(outcome, performed, position, signal)
        _time(outcome, started, timings)
        return outcome
    looked = time.perf_counter()
    differences = await _differences(recorded, performed, outcome)
    timings["compare"] = time.perf_counter() - looked
    if differences is None:
        _time(outcome, started, timings)
        return outcome
    if differences:
        with_tree = performed.accessibility_tree is not None
        looks = recorded if with_tree else replace(recorded, tree=None)
        differences = await _catch_up(
            kind, sandbox, looks, performed, differences, outcome, timings
        )
    if differences and has_tree and performed.accessibility_tree is None:
        differences += await _tree_differences(kind, sandbox, recorded, outcome, timings)
    if differences:
        outcome.status = "diverged"
        outcome.diff = "\n".join(differences)
        outcome.retry = not signal
        outcome.effect, outcome.effect_reason = (
            ("presentation", "a signal touches nothing")
            if signal
            else ("state", "the screen after the action differs from the record")
        )
    else:
        outcome.status = "match"
    _time(outcome, started, timings)
    return outcome


async def _tree_differences(
    kind: DesktopKind,
    sandbox: Sandbox,
    recorded: _RecordedScreen,
    outcome: StepFidelity,
    timings: dict[str, float],
) -> list[str]:
    """The tree's differences, read once the screen was found to differ: they say in words
    what differs."""
    try:
        seen = await kind.observe_screen(sandbox, screenshot=False, tree=True)
    except Exception:  # a desktop that stopped answering: the screen's verdict stands
        return []
    timings["tree"] = timings.get("tree", 0.0) + seen.tree_seconds
    return await _differences(_RecordedScreen(None, recorded.tree), seen, outcome) or []


def _failed(outcome: StepFidelity, performed: PerformedAction, position: str, signal: bool) -> None:
    lines = performed.error.strip().splitlines()
    outcome.status = "failed"
    outcome.replayed_error = True
    outcome.message = f"{position}: {lines[-1] if lines else 'the action failed'}"
    # a desktop that stopped answering may do better on a fresh start; code that raised will not
    outcome.retry = not signal and performed.error.startswith(COULD_NOT_RUN)
    outcome.effect, outcome.effect_reason = (
        ("presentation", "a signal touches nothing")
        if signal
        else ("state", "the action did not run as recorded")
    )


def _time(outcome: StepFidelity, started: float, timings: dict[str, float]) -> None:
    outcome.seconds = round(time.perf_counter() - started, 3)
    outcome.timings = {part: round(seconds, 3) for part, seconds in timings.items() if seconds}


@dataclass(frozen=True)
class _RecordedScreen:
    image: Screenshot | None
    tree: str | None
    variants: tuple[tuple[str, Screenshot], ...] = ()
    """The step's accepted variants of ``image`` (path, image)."""


async def _recorded_screen(
    step: Step, trajectory_dir: Path | None, outcome: StepFidelity, position: str
) -> _RecordedScreen:
    """The step's recorded screenshot and its accepted variants (read from
    ``trajectory_dir``) and tree, where it has them; an unreadable image is noted on
    ``outcome``."""
    observation = step.observation
    if observation is None:
        return _RecordedScreen(None, None)
    image: Screenshot | None = None
    variants: list[tuple[str, Screenshot]] = []
    problems: list[str] = []
    shots = [observation.screenshot, *(observation.screenshot_variants or [])]
    for number, shot in enumerate(shots):
        if shot is None:
            continue
        loaded = await asyncio.to_thread(load_screenshot, trajectory_dir, shot)
        if not isinstance(loaded, Screenshot):
            problems.append(f"{'screenshot' if number == 0 else 'variant'} {shot}: {loaded}")
        elif number == 0:
            image = loaded
        else:
            variants.append((shot, loaded))
    if problems:
        outcome.message = f"{position}: " + "; ".join(problems)
    return _RecordedScreen(image, observation.accessibility_tree, tuple(variants))


async def _catch_up(
    kind: DesktopKind,
    sandbox: Sandbox,
    recorded: _RecordedScreen,
    first: PerformedAction,
    differences: list[str],
    outcome: StepFidelity,
    timings: dict[str, float],
) -> list[str]:
    """Look again, for up to ``CATCH_UP_SECONDS``, while the screen differs from ``recorded``
    (what of the record the ``first`` look compared); the differences of the last look (empty
    once it matched, with the wait on ``outcome``). A look that saw what the one before it saw
    is not compared again. Where the record has a screenshot, each look is of the next screen
    drawn (the desktop waits for drawing itself): a screen nobody draws on is not fetched
    again, and the wait ends when nothing more is drawn in the time left."""
    started = time.monotonic()
    limit = CATCH_UP_AFTER_DIVERGENCE if sandbox in _DIVERGED else CATCH_UP_SECONDS
    last = first
    next_screen = recorded.image is not None
    while differences and (left := limit - (time.monotonic() - started)) > 0:
        if not next_screen:
            await asyncio.sleep(CATCH_UP_INTERVAL)
        try:
            again = await kind.observe_screen(
                sandbox,
                screenshot=next_screen,
                tree=recorded.tree is not None,
                quiet=CATCH_UP_QUIET,
                image_format=LOOK_FORMAT,
                changed_within=left if next_screen else None,
            )
        except Exception:  # a desktop that stopped answering: the first look's verdict stands
            break
        if next_screen and again.screenshot is None:
            break  # nothing was drawn in the time left: the last look's verdict stands
        if _same_look(last, again):
            continue  # nothing was drawn since: the verdict is the last one's
        last = again
        differences = await _differences(recorded, again, outcome) or []
        if not differences:
            outcome.caught_up_seconds = round(time.monotonic() - started, 3)
    timings["catch_up"] = time.monotonic() - started
    if differences:
        _DIVERGED.add(sandbox)
    return differences


def _same_look(first: PerformedAction, second: PerformedAction) -> bool:
    """Whether two looks at a desktop saw exactly the same screen and tree."""
    return (
        first.screenshot == second.screenshot
        and first.accessibility_tree == second.accessibility_tree
    )


async def _differences(
    recorded: _RecordedScreen, performed: PerformedAction, outcome: StepFidelity
) -> list[str] | None:
    """What differs between the record and the replayed screen; None when nothing was recorded
    to compare with (the step stays ``unrecorded``)."""
    compared = False
    differences: list[str] = []
    if recorded.image is not None and performed.screenshot is not None:
        compared = True
        outcome.variant = None
        try:
            screens = await _compare_screen(recorded.image, performed.screenshot)
            if not screens.same:
                for path, variant in recorded.variants:
                    if (await _compare_screen(variant, performed.screenshot)).same:
                        outcome.variant = path
                        break
        except ValueError as error:
            differences.append(f"screen: {error}")
        else:
            outcome.screen_changed = round(screens.changed_share, 6)
            outcome.screen_region = screens.region
            if not screens.same and outcome.variant is None:
                differences.append(f"screen: {screens.describe()}")
        outcome.keep_replayed_screen(performed.screenshot if differences else None)
    if recorded.tree is not None and performed.accessibility_tree is not None:
        compared = True
        try:
            tree_diff = await asyncio.to_thread(
                compare_trees, recorded.tree, performed.accessibility_tree
            )
        except ValueError as error:
            differences.append(f"accessibility tree: {error}")
        else:
            if tree_diff is not None:
                differences.append(f"accessibility tree (role, name, text):\n{tree_diff}")
    return differences if compared else None


async def _compare_screen(recorded: Screenshot, replayed: bytes) -> ScreenComparison:
    """The recorded (or accepted) screenshot against a replayed look; ``ValueError`` when one
    is not an image."""
    return await asyncio.to_thread(
        partial(compare_screens, shift=REPLAY_SHIFT, fine=True), recorded.data, replayed
    )
