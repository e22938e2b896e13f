"""Desktop providers of every backend, generated office documents, and GUI steps the tests share."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path, PurePosixPath
from typing import Any

import docx
import openpyxl
import pptx
import pytest

from dataset.actions import Computer13Action
from sandboxes.desktop.observations import TreeNode, find_nodes
from sandboxes.desktop.sandbox import DesktopProvider, DesktopSandbox, DocumentFile
from sandboxes.runs import current_run

BACKENDS: list[Any] = ["local", pytest.param("docker", marks=pytest.mark.docker)]
"""Fixture parameters: every desktop backend (container backends marked)."""


@asynccontextmanager
async def desktop_provider(backend: str, **options: Any) -> AsyncIterator[DesktopProvider]:
    """A provider of ``backend``; ``options`` go to its constructor."""
    from sandboxes.desktop.local import LocalDesktopProvider

    if backend == "docker":
        from sandboxes.desktop.docker import DockerDesktopProvider
        from sandboxes.desktop.image import ensure_desktop_image_async

        image = await ensure_desktop_image_async()
        async with DockerDesktopProvider(image, **options) as docker_provider:
            yield docker_provider
        return
    if backend != "local":
        raise ValueError(f"no desktop backend {backend!r} in these tests")
    async with LocalDesktopProvider(**options) as provider:
        yield provider


def word_document(*paragraphs: str) -> bytes:
    """A .docx holding ``paragraphs``."""
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def word_paragraphs(data: bytes) -> list[str]:
    """The paragraphs' texts of a .docx."""
    return [paragraph.text for paragraph in docx.Document(io.BytesIO(data)).paragraphs]


def sheet_document(rows: list[list[object]], title: str = "Data") -> bytes:
    """An .xlsx with one sheet holding ``rows`` from A1."""
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = title
    for row in rows:
        sheet.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def sheet_value(data: bytes, cell: str) -> object:
    """One cell's value in the first sheet of an .xlsx."""
    sheet = openpyxl.load_workbook(io.BytesIO(data)).active
    assert sheet is not None
    return sheet[cell].value


def slides_document(title: str, body: str) -> bytes:
    """A .pptx with one title-and-content slide."""
    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    assert slide.shapes.title is not None
    slide.shapes.title.text = title
    slide.placeholders[1].text = body
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


def slides_texts(data: bytes) -> list[str]:
    """Every text frame's text, slide by slide."""
    presentation = pptx.Presentation(io.BytesIO(data))
    return [
        shape.text_frame.text
        for slide in presentation.slides
        for shape in slide.shapes
        if shape.has_text_frame
    ]


async def start(provider: DesktopProvider, name: str, data: bytes) -> DesktopSandbox:
    """A desktop showing ``data`` saved as ``Documents/<name>``."""
    return await provider.start_desktop(DocumentFile(PurePosixPath("Documents") / name, data))


async def wait_for_node(desktop: DesktopSandbox, timeout: float = 30.0, **query: str) -> TreeNode:
    """The first node of the linearised tree matching ``query`` (see ``find_nodes``), polling
    until it shows in the same place in two reads in a row (a window still laying itself out
    moves its nodes)."""
    deadline = time.monotonic() + timeout
    previous: TreeNode | None = None
    while True:
        nodes = find_nodes(await desktop.client.accessibility_tree(), **query)
        if nodes and nodes[0] == previous:
            return nodes[0]
        previous = nodes[0] if nodes else None
        if time.monotonic() > deadline:
            pytest.fail(f"no node {query} showed within {timeout} s")
        await asyncio.sleep(0.3)


async def act(desktop: DesktopSandbox, action_type: str, **parameters: object) -> None:
    """Perform one ``computer_13`` action, failing the test when it does not run."""
    outcome = await desktop.perform(
        Computer13Action(action_type=action_type, parameters=parameters)
    )
    assert outcome.status == "done", outcome.error


async def save_keeping_format(desktop: DesktopSandbox, before: bytes) -> bytes:
    """Press ctrl+s, answer LibreOffice's "keep current format?" question with the button the
    accessibility tree shows, and wait until the file on disk changed; return its bytes."""
    await act(desktop, "HOTKEY", keys=["ctrl", "s"])
    keep = None
    deadline = time.monotonic() + 30
    while keep is None and time.monotonic() < deadline:
        nodes = find_nodes(await desktop.client.accessibility_tree(), tag="push-button")
        keep = next((n for n in nodes if n.name.startswith("Use ") and "2007" in n.name), None)
        if keep is None:
            await asyncio.sleep(0.3)
    assert keep is not None, "no 'Use <format> 2007-365 Format' button showed after ctrl+s"
    x, y = keep.center
    await act(desktop, "CLICK", x=x, y=y)
    while time.monotonic() < deadline:
        saved = await desktop.read_document()
        assert saved is not None
        if saved != before:
            return saved
        await asyncio.sleep(0.3)
    pytest.fail("the document on disk did not change after saving")


def desktop_folders() -> list[Path]:
    """The folders of this run's desktops still in its scratch directory (a stopped desktop's
    folder is removed with it)."""
    return sorted(path for path in current_run().directory().iterdir() if "desktop" in path.name)
