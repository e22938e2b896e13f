"""The device surface both Android backends implement, and acting on it with AndroidWorld actions.

Owns ``Device`` (screen size, screenshot, UI hierarchy dump, one primitive operation at a time),
``DeviceObservation`` (what a screen shows: the PNG, the dump, its element list) and
``perform_action``, which reads the element list when an action needs it, plans the action
(``sandboxes.android.actions``), runs it and lets the screen settle. The adb backend
(``sandboxes.android.adb``) and the Chromium backend (``sandboxes.android.chromium``) differ
only below this surface.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass

from dataset.actions import AndroidAction
from sandboxes.android.actions import DeviceOperation, plan_action
from sandboxes.android.hierarchy import UIElement, parse_hierarchy, ui_elements

__all__ = ["SETTLE_SECONDS", "Device", "DeviceObservation", "perform_action"]

SETTLE_SECONDS = 0.3
"""How long the screen is given to redraw after an action, before anyone looks at it."""


@dataclass(frozen=True)
class DeviceObservation:
    """One look at the screen."""

    screenshot: bytes
    """The screen as PNG bytes, at the device's pixel size."""
    hierarchy_xml: str
    """The UI hierarchy in uiautomator's XML shape (validated)."""
    elements: list[UIElement]
    """The targetable elements of the hierarchy, in the order action indexes count them."""


class Device(ABC):
    """A phone (or a phone-shaped browser) that can be looked at and touched."""

    @abstractmethod
    async def screen_size(self) -> tuple[int, int]:
        """Width and height of the screen in pixels (the screenshot's size)."""

    @abstractmethod
    async def screenshot(self) -> bytes:
        """The current screen as PNG bytes."""

    @abstractmethod
    async def hierarchy(self) -> str:
        """The current UI hierarchy as a validated uiautomator XML document."""

    @abstractmethod
    async def run(self, operation: DeviceOperation) -> None:
        """Carry out one primitive operation; ``ActionError`` when it cannot be done here."""

    async def elements(self) -> list[UIElement]:
        """The current screen's targetable elements (what an action's ``index`` counts)."""
        return ui_elements(parse_hierarchy(await self.hierarchy()))

    async def observe(self) -> DeviceObservation:
        """Screenshot and hierarchy of the current screen."""
        xml = await self.hierarchy()
        return DeviceObservation(
            screenshot=await self.screenshot(),
            hierarchy_xml=xml,
            elements=ui_elements(parse_hierarchy(xml)),
        )


async def perform_action(
    device: Device,
    action: AndroidAction,
    *,
    elements: list[UIElement] | None = None,
    settle: float = SETTLE_SECONDS,
) -> list[DeviceOperation]:
    """Carry out ``action`` on ``device`` and return the operations it took.

    An element index counts ``elements`` when given (the list the agent was shown), else the
    element list read from the screen now. ``ActionError`` when the action does not fit the
    screen; nothing has been done then.
    """
    targets_element = action.index is not None
    if targets_element and elements is None:
        elements = await device.elements()
    plan = plan_action(action, elements or [], await device.screen_size())
    for operation in plan:
        await device.run(operation)
    if plan and settle > 0:
        await asyncio.sleep(settle)
    return plan
