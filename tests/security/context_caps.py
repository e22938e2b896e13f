"""What the memory-cap tests of browser contexts (the browser kind's and the phone's) wait for:
a context's renderer placed in the context's own cgroup, and a given page's renderers placed
before the page is told to allocate (memory allocated before the move counts towards the
browser's cap, not the context's)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from sandboxes.chromium import ContextCap, context_cap

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page


async def placed_cap(context: BrowserContext, whose: str) -> tuple[ContextCap, set[int]]:
    """The cgroup of ``context`` and the renderer processes moved into it, once there is one
    (a renderer is placed a moment after its page shows); fails naming ``whose`` context when
    no cgroup could be made or nothing was placed within 10 s."""
    cap = context_cap(context)
    assert cap is not None, "no context cgroup could be made here"
    for _ in range(20):
        if cap.moved:
            break
        await asyncio.sleep(0.5)
    renderers = set(cap.moved)
    assert renderers, f"{whose} renderer was never given its cgroup"
    return cap, renderers


async def page_placed(page: Page, whose: str) -> None:
    """Wait until every renderer process showing ``page`` is in its context's cgroup; fails
    naming ``whose`` page when that does not happen within 10 s."""
    cap = context_cap(page.context)
    assert cap is not None, "no context cgroup could be made here"
    for _ in range(20):
        if await cap.holds(page):
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"{whose} page's renderer was never given its context's cgroup")
