"""Carrying a recorded element reference over to the replayed page.

Playwright numbers the elements of a snapshot (``[ref=e33]``) in the order it meets them, so the
same element on the same page gets another number when the page is built differently (another
Playwright version, an archive that holds the page without the scripts that added elements
before it). A recorded ``browser_click`` on ``e33`` would then miss on replay although the
element is there. Before a call that names an element, ``with_replayed_ref`` finds the element
in the last snapshot the agent was shown (its role, name and states, and which of the elements
that look the same it is) and gives the call the replayed page's reference for that element.
When the element is not on the replayed page, the call keeps its recorded reference and fails
there, as it should.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from dataset.actions import ToolCallAction
from environments.browser.comparison import element_signature, page_facts, ref_for_signature
from environments.steps import RecordedStep

if TYPE_CHECKING:
    from sandboxes.browser.session import BrowserSession

REF_ARGUMENTS = ("ref", "target")
"""The argument names that hold an element reference (``target`` in newer Playwright MCP)."""


def recorded_snapshot(recorded: RecordedStep, ref: str) -> str | None:
    """The latest snapshot shown before ``recorded``'s step that holds ``ref``, or None."""
    if recorded.trajectory is None:
        return None
    for step in reversed(recorded.trajectory.steps[: recorded.step.index - 1]):
        text = step.observation.text if step.observation else None
        if not text or f"[ref={ref}]" not in text:
            continue
        snapshot = page_facts(text).snapshot
        if snapshot is not None and f"[ref={ref}]" in snapshot:
            return snapshot
    return None


async def with_replayed_ref(session: BrowserSession, recorded: RecordedStep) -> RecordedStep:
    """``recorded`` with its element reference replaced by the replayed page's reference for
    the same element; unchanged when the call names none, the record shows no snapshot with it,
    or the replayed page has no such element."""
    from mcp_servers.browser.tools import page_snapshot

    action = recorded.step.action
    if not isinstance(action, ToolCallAction):
        return recorded
    given = [(key, action.arguments.get(key)) for key in REF_ARGUMENTS]
    name, ref = next(((key, value) for key, value in given if isinstance(value, str)), ("", ""))
    if not ref:
        return recorded
    shown = recorded_snapshot(recorded, ref)
    signature = element_signature(shown, ref) if shown is not None else None
    if signature is None:
        return recorded
    try:
        async with session.lock:
            current = await page_snapshot(session.page)
    except Exception:  # no page to read: the call itself will say so
        return recorded
    replayed = ref_for_signature(current, signature)
    if replayed is None or replayed == ref:
        return recorded
    arguments = {**action.arguments, name: replayed}
    step = recorded.step.model_copy(
        update={"action": action.model_copy(update={"arguments": arguments})}
    )
    return dataclasses.replace(recorded, step=step)
