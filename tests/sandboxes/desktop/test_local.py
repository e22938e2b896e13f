"""The local backend on real desktops: documents open and read through the accessibility tree,
typing and clicking through the action executor, saving, several desktops at once, cleanup."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import psutil
import pytest
from PIL import Image

from dataset.actions import PyAutoGuiAction
from sandboxes.base import SandboxError
from sandboxes.desktop.local import LocalDesktopProvider
from sandboxes.desktop.observations import find_nodes, linearize_tree
from sandboxes.desktop.sandbox import DesktopSandbox
from sandboxes.runs import current_run
from sandboxes.screens import compare_screens
from tests.sandboxes.desktop.helpers import (
    act,
    save_keeping_format,
    sheet_document,
    sheet_value,
    slides_document,
    start,
    wait_for_node,
    word_document,
    word_paragraphs,
)

pytestmark = pytest.mark.desktop

REPOSITORY = Path(__file__).resolve().parents[3]


def _folder(desktop: DesktopSandbox) -> Path:
    handle = desktop.handle
    assert hasattr(handle, "folder")
    folder: Path = handle.folder
    return folder


async def test_a_word_document_is_read_typed_into_and_saved() -> None:
    data = word_document("Minutes of the planning meeting", "Budget approved for next year")
    async with (
        LocalDesktopProvider() as provider,
        await start(provider, "minutes.docx", data) as desktop,
    ):
        paragraph = await wait_for_node(desktop, tag="paragraph", text_contains="Budget approved")
        assert paragraph.text == "Budget approved for next year"
        assert find_nodes(
            await desktop.client.accessibility_tree(), text_contains="Minutes of the planning"
        )
        # Click at the end of the second paragraph and type a sentence holding '<'.
        x = paragraph.position[0] + paragraph.size[0] - 5
        await act(desktop, "CLICK", x=x, y=paragraph.center[1])
        await act(desktop, "HOTKEY", keys=["ctrl", "end"])
        await act(desktop, "TYPING", text=" (cost < 5k)")
        await wait_for_node(desktop, tag="paragraph", text_contains="(cost < 5k)")
        saved = await save_keeping_format(desktop, data)
    paragraphs = word_paragraphs(saved)
    assert paragraphs[0] == "Minutes of the planning meeting"
    assert paragraphs[1] == "Budget approved for next year (cost < 5k)"


async def test_a_sheet_cell_found_through_the_tree_is_clicked_and_changed() -> None:
    data = sheet_document([["item", "count"], ["apples", 3], ["pears", 5]])
    async with (
        LocalDesktopProvider() as provider,
        await start(provider, "stock.xlsx", data) as desktop,
    ):
        cell = await wait_for_node(desktop, tag="table-cell", name="B3")
        assert cell.text == "5"
        assert (await wait_for_node(desktop, tag="table-cell", name="A2")).text == "apples"
        await act(desktop, "CLICK", x=cell.center[0], y=cell.center[1])
        await act(desktop, "TYPING", text="42")
        await act(desktop, "PRESS", key="enter")
        changed = await wait_for_node(desktop, tag="table-cell", name="B3", text_contains="42")
        assert changed.text == "42"
        saved = await save_keeping_format(desktop, data)
    assert sheet_value(saved, "B3") == 42
    assert sheet_value(saved, "B2") == 3
    assert sheet_value(saved, "A3") == "pears"


async def test_a_presentation_shows_its_slide_text_in_the_tree() -> None:
    data = slides_document("Quarterly review", "Revenue grew by ten percent")
    async with (
        LocalDesktopProvider() as provider,
        await start(provider, "review.pptx", data) as desktop,
    ):
        await wait_for_node(desktop, text_contains="Revenue grew by ten percent")
        xml = await desktop.client.accessibility_tree()
        assert "Quarterly review" in xml
        assert "Revenue grew by ten percent" in linearize_tree(xml)
        assert "review.pptx" in " ".join(title for _, title in await desktop.client.windows() or [])


async def test_screenshots_are_full_screen_pngs_and_recorded_code_runs_inside() -> None:
    data = word_document("Screen check")
    async with (
        LocalDesktopProvider() as provider,
        await start(provider, "screen.docx", data) as desktop,
    ):
        image = Image.open(io.BytesIO(await desktop.client.screenshot()))
        assert image.format == "PNG"
        assert image.size == (1920, 1080) == await desktop.client.screen_size()
        await act(desktop, "MOVE_TO", x=300, y=200)
        assert await desktop.client.cursor_position() == (300, 200)
        # Recorded code sees the desktop's files and user, not the host's.
        outcome = await desktop.perform(
            PyAutoGuiAction(
                code="import os, pathlib\n"
                "print(os.getuid(), pathlib.Path.home(), sep='|', end='|')\nprint("
                "sorted(os.listdir(pathlib.Path.home() / 'Documents')), "
                f"os.path.exists({str(REPOSITORY / 'pyproject.toml')!r}), sep='|')"
            )
        )
        assert outcome.status == "done", outcome.error
        uid, home, listing, sees_work = outcome.output.strip().split("|")
        assert home == "/home/user"
        assert "screen.docx" in listing
        assert sees_work == "False"
        if psutil.Process().uids().real == 0:
            assert uid == "65534"
        failing = await desktop.perform(PyAutoGuiAction(code="raise SystemExit('stop here')"))
        assert failing.status == "failed"
        assert "stop here" in failing.error
        done = await desktop.perform(PyAutoGuiAction(code="DONE"))
        assert (done.status, done.signal) == ("signal", "DONE")


async def test_several_desktops_at_once_stay_apart_and_leave_nothing() -> None:
    texts = [f"Desktop number {n} of three" for n in range(3)]
    async with LocalDesktopProvider() as provider:
        desktops = await asyncio.gather(
            *(start(provider, f"doc{n}.docx", word_document(text)) for n, text in enumerate(texts))
        )
        folders = [_folder(desktop) for desktop in desktops]
        bwraps = [desktop.handle.process.pid for desktop in desktops]  # type: ignore[attr-defined]
        inside = [p for pid in bwraps for p in psutil.Process(pid).children(recursive=True)]
        assert len(inside) > 3 * 5  # Xvfb, buses, openbox, LibreOffice, the server each
        for desktop, text in zip(desktops, texts, strict=True):
            await wait_for_node(desktop, tag="paragraph", text_contains=text)
            others = [other for other in texts if other != text]
            xml = await desktop.client.accessibility_tree()
            assert not any(other in xml for other in others)
        for desktop in desktops:
            peak = desktop.handle.peak_memory_bytes()
            assert peak is None or peak > 50 * 2**20
        await desktops[0].destroy()
        assert not folders[0].exists()
        assert await desktops[1].client.is_up()  # the others are untouched
    assert not any(folder.exists() for folder in folders)  # the provider stopped the rest
    _gone, alive = psutil.wait_procs(inside, timeout=10)
    assert alive == []


async def test_a_desktop_that_cannot_start_is_reported_and_removed() -> None:
    run_folder = current_run().directory()
    before = set(run_folder.iterdir())
    async with LocalDesktopProvider(screen=(0, 0), ready_timeout=20) as provider:
        with pytest.raises(SandboxError, match=r"(?s)stopped while starting: .*Xvfb"):
            await start(provider, "never.docx", word_document("never shown"))
        assert provider._live == set()
    assert set(run_folder.iterdir()) == before


async def test_the_pointer_resting_on_a_button_shows_no_tooltip() -> None:
    # A tooltip shows only after the pointer has rested a while, so whether a recorded or
    # replayed screenshot holds one would depend on how busy the machine was.
    async with (
        LocalDesktopProvider() as provider,
        await start(provider, "tips.docx", word_document("Hover here")) as desktop,
    ):
        await wait_for_node(desktop, tag="paragraph", text_contains="Hover here")
        bold = await wait_for_node(desktop, tag="toggle-button", name="Bold")
        await act(desktop, "MOVE_TO", x=bold.center[0], y=bold.center[1])
        resting = await desktop.client.screenshot()
        await asyncio.sleep(3)
        later = await desktop.client.screenshot()
        comparison = compare_screens(resting, later)
        assert comparison.same, comparison.describe()
