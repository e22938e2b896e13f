"""Waiting until a desktop's screen is still (a window can be listed before it is painted, and a
busy machine paints late): watched by the desktop's own control server where it can
(``DesktopClient.settled_screenshot``: raw framebuffer grabs compared byte for byte every few
hundredths of a second, one PNG sent), else by screenshots compared with the plain perceptual
comparison of ``sandboxes.screens``."""

from __future__ import annotations

import asyncio
import time

from sandboxes.desktop.client import DesktopClient, ImageFormat
from sandboxes.screens import compare_screens

__all__ = [
    "POLL_INTERVAL",
    "SETTLE_QUIET",
    "STILL_TIMEOUT",
    "wait_for_changed_screen",
    "wait_for_still_screen",
]

STILL_TIMEOUT = 8.0
"""Seconds ``wait_for_still_screen`` waits at most."""
SETTLE_QUIET = 0.3
"""Seconds the screen must stay unchanged after an action before it counts as settled: shorter
than half a text cursor's blink, so a blinking cursor still lets it settle."""
POLL_INTERVAL = 0.15
"""Seconds between screenshots where the server cannot watch the screen itself."""


async def wait_for_still_screen(
    client: DesktopClient,
    *,
    timeout: float = STILL_TIMEOUT,
    quiet: float = SETTLE_QUIET,
    poll: float = POLL_INTERVAL,
    image_format: ImageFormat = "png",
) -> bytes:
    """The screen once it stayed unchanged for ``quiet`` seconds (or as it is after ``timeout``
    seconds), as PNG bytes (``image_format``: see ``DesktopClient.screenshot``); ``poll``:
    seconds between screenshots where the server cannot watch the screen itself."""
    settled = await client.settled_screenshot(quiet, timeout, image_format)
    if settled is not None:
        return settled[0]
    deadline = time.monotonic() + timeout
    previous = await client.screenshot(image_format)
    still_since = time.monotonic()
    while time.monotonic() - still_since < quiet and time.monotonic() < deadline:
        await asyncio.sleep(min(poll, quiet) or poll)
        current = await client.screenshot(image_format)
        same = (
            current == previous
            or (await asyncio.to_thread(compare_screens, previous, current)).same
        )
        if not same:
            still_since = time.monotonic()
        previous = current
    return previous


async def wait_for_changed_screen(
    client: DesktopClient,
    *,
    within: float,
    quiet: float = SETTLE_QUIET,
    poll: float = POLL_INTERVAL,
    image_format: ImageFormat = "png",
) -> bytes | None:
    """The next screen: once something was drawn after the last still-screen wait (within
    ``within`` seconds) and the screen then stayed unchanged for ``quiet`` seconds; None when
    nothing was drawn. The control server watches for the drawing where it can, so a screen
    nobody draws on costs one request; elsewhere this waits ``poll`` seconds and answers the
    still screen, which may be the same as the last one."""
    within = max(within, 0.0)
    answer = await client.settled_screenshot(quiet, within, image_format, after_change=True)
    if answer is not None:
        return answer[0] or None
    await asyncio.sleep(min(poll, within))
    return await wait_for_still_screen(client, quiet=quiet, poll=poll, image_format=image_format)
