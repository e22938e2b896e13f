"""Recording a scripted GUI agent on a real desktop.

Each move becomes an action of the policy's action space, performed by the desktop kind's
``perform_action`` (the executor and settling replay uses); the screen and the accessibility
tree afterwards become the step's observation. Screenshots are stored as palette PNGs (64
colours): a tenth of the size of the desktop's own PNGs, and close enough for replay's
perceptual comparison, which averages 8x8-pixel grey cells. Trees are stored as the elements an
agent reads (``shown_tree``): every node the linearised tree keeps, with the attributes it is
read from, in document order, and nothing else (a Calc sheet's full tree is ten times larger).
Replay compares trees by exactly those elements, and the linearised form an ``llm`` judge reads
is the same line for line. Times are synthetic and deterministic (a fixed start per run, a few
seconds per step).
"""

from __future__ import annotations

import asyncio
import io
import time
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from xml.etree import ElementTree

from PIL import Image

from dataset.models import Observation, Step
from environments.desktop.kind import DesktopKind
from environments.desktop.replay import PerformedAction, compare_trees
from sandboxes.base import Sandbox
from sandboxes.desktop.observations import (
    ATTRIBUTE_NS,
    COMPONENT_NS,
    STATE_NS,
    VALUE_NS,
    tree_nodes,
)
from sandboxes.screens import compare_screens
from suites.gui.spec import GuiPolicy

STEP_SECONDS = 9
"""Synthetic duration of one step."""
PALETTE_COLOURS = 64
"""Colours of a stored screenshot."""
LASTING_SECONDS = 0.8
"""After the executor's settling, seconds between the looks that must agree before a step's
screen is recorded."""
LASTING_TIMEOUT = 15.0
"""Seconds a step's screen may keep changing before the recording fails."""


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


_NAMESPACES = {"st": STATE_NS, "attr": ATTRIBUTE_NS, "cp": COMPONENT_NS, "val": VALUE_NS}


def shown_tree(xml: str) -> str:
    """``xml`` (OSWorld's tree) reduced to the nodes ``tree_nodes`` reads, each a child of the
    root with its role, name, text, class, description, position and size; ``tree_nodes`` of
    the result equals ``tree_nodes`` of ``xml`` (checked)."""
    for prefix, uri in _NAMESPACES.items():
        ElementTree.register_namespace(prefix, uri)
    root = ElementTree.Element("desktop-frame", {"name": "main"})
    nodes = list(tree_nodes(xml))
    for node in nodes:
        attributes = {
            f"{{{STATE_NS}}}{state}": "true" for state in ("enabled", "showing", "visible")
        }
        attributes["name"] = node.name
        if node.klass:
            attributes[f"{{{ATTRIBUTE_NS}}}class"] = node.klass
        if node.description:
            attributes[f"{{{ATTRIBUTE_NS}}}description"] = node.description
        attributes[f"{{{COMPONENT_NS}}}screencoord"] = f"({node.position[0]}, {node.position[1]})"
        attributes[f"{{{COMPONENT_NS}}}size"] = f"({node.size[0]}, {node.size[1]})"
        element = ElementTree.SubElement(root, node.tag, attributes)
        element.text = node.text or None
    shown = ElementTree.tostring(root, encoding="unicode")
    if list(tree_nodes(shown)) != nodes:
        raise RecordingError("the reduced accessibility tree reads differently from the full one")
    return shown


async def _same_look(first: PerformedAction, second: PerformedAction) -> bool:
    """Whether two looks show the same screen (perceptually) and the same tree elements."""
    if first.screenshot is None or second.screenshot is None:
        raise RecordingError("the desktop answered without a screenshot")
    if first.accessibility_tree is None or second.accessibility_tree is None:
        raise RecordingError("the desktop answered without an accessibility tree")
    screens = await asyncio.to_thread(compare_screens, first.screenshot, second.screenshot)
    return (
        screens.same and compare_trees(first.accessibility_tree, second.accessibility_tree) is None
    )


async def lasting_screen(
    kind: DesktopKind, sandbox: Sandbox, performed: PerformedAction, position: str
) -> PerformedAction:
    """``performed`` with the screen and tree of a later look that showed the same as the one
    before it, ``LASTING_SECONDS`` apart: what a step records must be where the screen stays,
    not a moment of a busy desktop's painting that a replay would not catch."""
    deadline = time.monotonic() + LASTING_TIMEOUT
    current = performed
    while time.monotonic() < deadline:
        await asyncio.sleep(LASTING_SECONDS)
        again = await kind.observe_screen(sandbox, screenshot=True, tree=True)
        if await _same_look(current, again):
            return replace(
                performed,
                screenshot=again.screenshot,
                accessibility_tree=again.accessibility_tree,
            )
        current = again
    raise RecordingError(f"{position}: the screen was still changing after {LASTING_TIMEOUT:g} s")


@dataclass(frozen=True)
class Recording:
    """The steps of one recorded run."""

    steps: list[Step]
    ended_at: datetime


async def record_policy(
    kind: DesktopKind,
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
        performed = await lasting_screen(
            kind, sandbox, performed, f"step {index} ({move.reasoning})"
        )
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
                    screenshot=screenshot,
                    accessibility_tree=(
                        shown_tree(performed.accessibility_tree)
                        if performed.accessibility_tree is not None
                        else None
                    ),
                ),
                reasoning=move.reasoning,
                started_at=begin,
                ended_at=begin + timedelta(seconds=STEP_SECONDS - 1),
            )
        )
    return Recording(steps, started + timedelta(seconds=STEP_SECONDS * len(steps)))
