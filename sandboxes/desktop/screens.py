"""Whether two screenshots show the same screen, and waiting until a desktop's screen is still.

Owns the perceptual distance of two screenshots: both are made grey and shrunk to cells of
``CELL`` x ``CELL`` pixels, which hides anti-aliasing and a blinking text cursor; a cell differs
when its mean brightness moves by more than ``CELL_TOLERANCE``; the screens count as the same
when at most ``CHANGED_SHARE_TOLERANCE`` of the cells differ, and the box around the differing
cells says where they differ. ``wait_for_still_screen`` uses it to wait until a desktop has
finished drawing (a window can be listed before it is painted, and a busy machine paints late).
"""

from __future__ import annotations

import asyncio
import io
import time

import numpy as np
from PIL import Image, UnidentifiedImageError
from pydantic import BaseModel, ConfigDict

from sandboxes.desktop.client import DesktopClient

__all__ = [
    "CELL",
    "CELL_TOLERANCE",
    "CHANGED_SHARE_TOLERANCE",
    "STILL_TIMEOUT",
    "ScreenComparison",
    "compare_screens",
    "wait_for_still_screen",
]

CELL = 8
"""Pixels per side of the cells screens are compared by."""
CELL_TOLERANCE = 40
"""How far (0-255) a cell's mean grey may move before the cell counts as changed."""
CHANGED_SHARE_TOLERANCE = 0.0002
"""The share of changed cells up to which two screens count as the same: about six cells of a
1920x1080 screen, room for a blinking text cursor; one short word typed is more."""


class ScreenComparison(BaseModel):
    """Two screenshots set side by side."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    distance: float
    """The mean brightness difference of the shrunk screens, from 0 (same) to 1."""
    changed_share: float
    """The share of cells whose brightness moved by more than ``CELL_TOLERANCE``."""
    region: tuple[int, int, int, int] | None
    """Where they differ, as (x, y, width, height) in recorded screen pixels; None when no cell
    differs."""
    size_note: str | None = None
    """Set when the screens had different sizes (the replayed one was scaled to compare)."""

    @property
    def same(self) -> bool:
        """Whether the screens count as the same."""
        return self.changed_share <= CHANGED_SHARE_TOLERANCE and self.size_note is None

    def describe(self) -> str:
        """One line for a report."""
        text = (
            f"{self.changed_share:.1%} of the screen differs (mean difference {self.distance:.3f})"
        )
        if self.region is not None:
            x, y, width, height = self.region
            text += f", within x {x}-{x + width}, y {y}-{y + height}"
        if self.size_note:
            text += f"; {self.size_note}"
        return text


def _grey(data: bytes, what: str) -> Image.Image:
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except (UnidentifiedImageError, OSError) as error:
        raise ValueError(f"the {what} screenshot is not an image: {error}") from None
    return image.convert("L")


def _cells(image: Image.Image) -> np.ndarray:
    width, height = max(image.width // CELL, 1), max(image.height // CELL, 1)
    shrunk = image.resize((width, height), Image.Resampling.BOX)
    return np.asarray(shrunk, dtype=np.float64)


def compare_screens(recorded: bytes, replayed: bytes) -> ScreenComparison:
    """The perceptual distance between a recorded and a replayed screenshot (PNG or any image
    Pillow reads); ``ValueError`` names the side that is not an image."""
    before = _grey(recorded, "recorded")
    after = _grey(replayed, "replayed")
    note = None
    if before.size != after.size:
        note = (
            f"the recorded screen is {before.width}x{before.height}, the replayed one "
            f"{after.width}x{after.height}"
        )
        after = after.resize(before.size, Image.Resampling.BILINEAR)
    old, new = _cells(before), _cells(after)
    difference = np.abs(old - new)
    changed = difference > CELL_TOLERANCE
    region = None
    if changed.any():
        rows = np.flatnonzero(changed.any(axis=1))
        columns = np.flatnonzero(changed.any(axis=0))
        x, y = int(columns[0]) * CELL, int(rows[0]) * CELL
        width = (int(columns[-1]) + 1) * CELL - x
        height = (int(rows[-1]) + 1) * CELL - y
        region = (x, y, width, height)
    return ScreenComparison(
        distance=float(difference.mean() / 255.0),
        changed_share=float(changed.mean()),
        region=region,
        size_note=note,
    )


STILL_TIMEOUT = 8.0
"""Seconds ``wait_for_still_screen`` waits at most."""
STILL_INTERVAL = 0.4
"""Seconds between the screenshots ``wait_for_still_screen`` compares."""
STILL_CHECKS = 2
"""Consecutive unchanged screenshots ``wait_for_still_screen`` needs: a busy LibreOffice (saving,
closing a dialog) leaves the screen unchanged for a moment before it repaints."""


async def wait_for_still_screen(
    client: DesktopClient,
    *,
    timeout: float = STILL_TIMEOUT,
    interval: float = STILL_INTERVAL,
    checks: int = STILL_CHECKS,
) -> bytes:
    """The screen once ``checks`` screenshots in a row, ``interval`` apart, showed the same as
    the one before them (or the last one after ``timeout`` seconds), as PNG bytes."""
    deadline = time.monotonic() + timeout
    previous = await client.screenshot()
    unchanged = 0
    while unchanged < checks and time.monotonic() < deadline:
        await asyncio.sleep(interval)
        current = await client.screenshot()
        same = (
            current == previous
            or (await asyncio.to_thread(compare_screens, previous, current)).same
        )
        unchanged = unchanged + 1 if same else 0
        previous = current
    return previous
