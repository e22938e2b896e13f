"""Recording a scripted GUI agent on a real desktop.

Each move becomes an action of the policy's action space, performed by the desktop kind's
``perform_action`` (the executor and settling replay uses); the screen and the accessibility
tree afterwards become the step's observation. Screenshots are stored as palette PNGs (64
colours): a tenth of the size of the desktop's own PNGs, and close enough for replay's
perceptual comparison, which averages 8x8-pixel grey cells. Times are synthetic and
deterministic (a fixed start per run, a few seconds per step).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from PIL import Image

from dataset.models import Observation, Step
from environments.kind import EnvironmentKind
from sandboxes.base import Sandbox
from suites.gui.spec import GuiPolicy

STEP_SECONDS = 9
"""Synthetic duration of one step."""
PALETTE_COLOURS = 64
"""Colours of a stored screenshot."""


class RecordingError(RuntimeError):
    """A move that could not be performed (its code raised or did not run)."""


def compress_screenshot(png: bytes) -> bytes:
    """``png`` as a palette PNG of ``PALETTE_COLOURS`` colours (same size in pixels)."""
    with Image.open(io.BytesIO(png)) as image:
        palette = image.convert("RGB").quantize(
            colors=PALETTE_COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
        )
    out = io.BytesIO()
    palette.save(out, format="PNG", optimize=True)
    return out.getvalue()


@dataclass(frozen=True)
class Recording:
    """The steps of one recorded run."""

    steps: list[Step]
    ended_at: datetime


async def record_policy(
    kind: EnvironmentKind,
    sandbox: Sandbox,
    policy: GuiPolicy,
    media: Path,
    trajectory_id: str,
    started: datetime,
) -> Recording:
    """Perform every move of ``policy`` on ``sandbox``, keeping each step's screen (written to
    ``media``) and tree."""
    media.mkdir(parents=True, exist_ok=True)
    steps: list[Step] = []
    for index, move in enumerate(policy.moves, start=1):
        action = move.action(policy.space)
        performed = await kind.perform_action(sandbox, action, screenshot=True, tree=True)
        if performed.status == "failed":
            raise RecordingError(f"step {index} ({move.reasoning}): {performed.error}")
        screenshot = None
        if performed.screenshot is not None:
            screenshot = f"{trajectory_id}/step_{index}.png"
            (media / f"step_{index}.png").write_bytes(compress_screenshot(performed.screenshot))
        begin = started + timedelta(seconds=STEP_SECONDS * (index - 1))
        steps.append(
            Step(
                index=index,
                action=action,
                observation=Observation(
                    screenshot=screenshot, accessibility_tree=performed.accessibility_tree
                ),
                reasoning=move.reasoning,
                started_at=begin,
                ended_at=begin + timedelta(seconds=STEP_SECONDS - 1),
            )
        )
    return Recording(steps, started + timedelta(seconds=STEP_SECONDS * len(steps)))
