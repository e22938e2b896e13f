"""Waiting until a desktop's screen is still (a window can be listed before it is painted, and a
busy machine paints late), by the plain perceptual comparison of ``sandboxes.screens``."""

from __future__ import annotations

import asyncio
import time

from sandboxes.desktop.client import DesktopClient
from sandboxes.screens import compare_screens

__all__ = ["STILL_TIMEOUT", "wait_for_still_screen"]

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
