"""Recording a scripted mobile agent through the device MCP server.

The agent sees what a device server answers (the element list and the screenshot) and acts by
calling its tools; each call becomes a ``Step`` with an AndroidWorld action, the agent's
reasoning, and what the screen showed afterwards: the screenshot (``step_<n>.png``), the element
list (the observation's ``accessibility_tree``) and the full UI dump (``step_<n>.xml``). The
screen before the first action is kept as ``step_0.png``/``.xml`` and named in the trajectory's
metadata. Times are synthetic and deterministic, as in the DS suite.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from mcp import Client, types

from dataset.models import Observation, Step
from sandboxes.android.device import Device
from suites.mobile.spec import Move

STEP_SECONDS = 6
"""Synthetic duration of one step."""

LISTING_MARK = "UI elements:\n"
"""What precedes the element list in a device server's answer."""


class RecordingError(RuntimeError):
    """The device server refused a scripted move."""


def split_answer(result: types.CallToolResult) -> tuple[str, str, bytes | None]:
    """A device server answer as (its first line, its element list, its screenshot bytes)."""
    text = "".join(block.text for block in result.content if isinstance(block, types.TextContent))
    image = next((b for b in result.content if isinstance(b, types.ImageContent)), None)
    listing = text.split(LISTING_MARK, 1)[1] if LISTING_MARK in text else ""
    listing = listing.split("\n\nScreenshot attached", 1)[0]
    return (
        text.splitlines()[0] if text else "",
        listing,
        (base64.b64decode(image.data) if image is not None else None),
    )


@dataclass
class Recording:
    """What a scripted run produced."""

    steps: list[Step] = field(default_factory=list)
    """The recorded steps."""
    initial_listing: str = ""
    """The element list before the first action."""
    ended_at: datetime | None = None
    """The synthetic end time."""


async def record_moves(
    client: Client,
    device: Device,
    moves: list[Move],
    folder: Path,
    prefix: str,
    started: datetime,
) -> Recording:
    """Run ``moves`` through ``client`` (a session with the device server over ``device``);
    screenshots and dumps go to ``folder`` (``trajectories/<id>``), named ``prefix/step_<n>``
    in the steps."""
    folder.mkdir(parents=True, exist_ok=True)
    recording = Recording()
    first = await client.call_tool("get_screen", {})
    _, listing, image = split_answer(first)
    recording.initial_listing = listing
    _save(folder, 0, image, await device.hierarchy())
    clock = started
    for number, move in enumerate(moves, start=1):
        action = move.resolve(listing)
        arguments = action.model_dump(exclude={"type", "action_type", "extra"}, exclude_none=True)
        result = await client.call_tool(action.action_type, arguments)
        if result.is_error:
            said, _, _ = split_answer(result)
            raise RecordingError(f"step {number} ({move.reasoning}): {said}")
        said, listing, image = split_answer(result)
        _save(folder, number, image, await device.hierarchy())
        begun, clock = clock, clock + timedelta(seconds=STEP_SECONDS)
        recording.steps.append(
            Step(
                index=number,
                action=action,
                observation=Observation(
                    text=said,
                    screenshot=f"{prefix}/step_{number}.png",
                    accessibility_tree=listing,
                ),
                reasoning=move.reasoning,
                started_at=begun,
                ended_at=clock,
            )
        )
    recording.ended_at = clock
    return recording


def _save(folder: Path, number: int, image: bytes | None, xml: str) -> None:
    if image is None:
        raise RecordingError(f"step {number}: the device server sent no screenshot")
    (folder / f"step_{number}.png").write_bytes(image)
    (folder / f"step_{number}.xml").write_text(xml, encoding="utf-8")
