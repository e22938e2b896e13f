"""Helpers of the desktop backend tests: generated documents' contents, polling, the tree."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar
from xml.etree import ElementTree

from sandboxes.desktop.client import DesktopClient

WRITER_TEXT = "The harbour survey found seventeen moorings"
CALC_ITEM = "Lanterns"
IMPRESS_TITLE = "Tidal schedule for the spring term"

_T = TypeVar("_T")

COMPONENT = "https://accessibility.ubuntu.example.org/ns/component"


async def wait_for_tree(client: DesktopClient, needle: str, timeout: float = 40.0) -> str:
    """Poll the accessibility tree until it holds ``needle``; return that tree."""
    deadline = time.monotonic() + timeout
    tree = ""
    while time.monotonic() < deadline:
        tree = await client.accessibility_tree()
        if needle in tree:
            return tree
        await asyncio.sleep(0.3)
    raise AssertionError(f"{needle!r} never showed in the accessibility tree:\n{tree[-3000:]}")


async def eventually(probe: Callable[[], Awaitable[_T | None]], timeout: float, what: str) -> _T:
    """Call ``probe`` until it answers something other than None."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = await probe()
        if answer is not None:
            return answer
        await asyncio.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def node_centre(tree: str, predicate: Callable[[ElementTree.Element], bool]) -> tuple[int, int]:
    """The screen centre of the first tree node ``predicate`` accepts."""
    root = ElementTree.fromstring(tree)
    for node in root.iter():
        if predicate(node):
            x, y = map(int, re.findall(r"-?\d+", node.get(f"{{{COMPONENT}}}screencoord", "")))
            width, height = map(int, re.findall(r"-?\d+", node.get(f"{{{COMPONENT}}}size", "")))
            return x + width // 2, y + height // 2
    raise AssertionError("no node in the accessibility tree matches")
