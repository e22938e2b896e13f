"""Desktop tests: generated Office documents, the desktop image, and polling helpers."""

from __future__ import annotations

import asyncio
import re
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import docx
import openpyxl
import pptx
import pytest

from sandboxes.desktop.client import DesktopClient

WRITER_TEXT = "The harbour survey found seventeen moorings"
CALC_ITEM = "Lanterns"
IMPRESS_TITLE = "Tidal schedule for the spring term"

_T = TypeVar("_T")

COMPONENT = "https://accessibility.ubuntu.example.org/ns/component"


@pytest.fixture(scope="session")
def desktop_image() -> str:
    """The desktop image (built on first use: minutes)."""
    from sandboxes.desktop.image import build_desktop_image

    return build_desktop_image()


@pytest.fixture
def writer_document(tmp_path: Path) -> Path:
    path = tmp_path / "survey.docx"
    document = docx.Document()
    document.add_paragraph(WRITER_TEXT)
    document.save(str(path))
    return path


@pytest.fixture
def calc_document(tmp_path: Path) -> Path:
    path = tmp_path / "stock.xlsx"
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(["Item", "Count"])
    sheet.append([CALC_ITEM, 12])
    workbook.save(str(path))
    return path


@pytest.fixture
def impress_document(tmp_path: Path) -> Path:
    path = tmp_path / "tides.pptx"
    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[0])
    assert slide.shapes.title is not None
    slide.shapes.title.text = IMPRESS_TITLE
    presentation.save(str(path))
    return path


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


async def pyautogui(client: DesktopClient, code: str) -> None:
    """Run pyautogui code inside the desktop, as OSWorld sends actions."""
    result = await client.execute(["python3", "-c", f"import pyautogui, time; {code}"])
    assert result.ok, result
