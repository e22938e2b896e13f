"""The ``docker`` desktop backend on real containers of the desktop image."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path, PurePosixPath
from xml.etree import ElementTree

import docker
import docx
import openpyxl
import pytest

from dataset.actions import Computer13Action
from sandboxes.base import SandboxError
from sandboxes.desktop.docker import DockerDesktopHandle, DockerDesktopProvider
from sandboxes.desktop.sandbox import DesktopSandbox, DocumentFile
from sandboxes.runs import RUN_LABEL, current_run
from tests.sandboxes.desktop.backend_helpers import (
    CALC_ITEM,
    IMPRESS_TITLE,
    WRITER_TEXT,
    eventually,
    node_centre,
    wait_for_tree,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow]

MEMORY_CAP = 1536 * 2**20


@pytest.fixture
async def provider(desktop_image: str) -> AsyncIterator[DockerDesktopProvider]:
    made = DockerDesktopProvider(desktop_image, memory_bytes=MEMORY_CAP, ready_timeout=90)
    try:
        yield made
    finally:
        await made.aclose()


def document(path: Path) -> DocumentFile:
    return DocumentFile(PurePosixPath(path.name), path.read_bytes())


def action(kind: str, **parameters: object) -> Computer13Action:
    return Computer13Action.model_validate({"action_type": kind, "parameters": parameters})


async def save_keeping_format(sandbox: DesktopSandbox) -> None:
    """ctrl+s, then confirm LibreOffice's question whether to keep the Office format."""
    await sandbox.perform(action("HOTKEY", keys=["ctrl", "s"]), wait_seconds=0.5)

    async def dialog() -> bool | None:
        titles = [title for _, title in await sandbox.client.windows() or []]
        return True if any("format" in title.lower() for title in titles) else None

    await eventually(dialog, 20, "the keep-format question")
    await sandbox.perform(action("PRESS", key="enter"), wait_seconds=0.5)


async def test_writer_document_is_read_typed_into_and_saved(
    provider: DockerDesktopProvider, writer_document: Path
) -> None:
    sandbox = await provider.start_desktop(document(writer_document))
    assert sandbox.document == PurePosixPath("/home/user/survey.docx")
    await wait_for_tree(sandbox.client, WRITER_TEXT)

    added = "Moorings checked from a container"
    await sandbox.perform(action("HOTKEY", keys=["ctrl", "end"]))
    await sandbox.perform(action("PRESS", key="enter"))
    await sandbox.perform(action("TYPING", text=added))
    await wait_for_tree(sandbox.client, added)
    await save_keeping_format(sandbox)

    async def saved_paragraphs() -> list[str] | None:
        data = await sandbox.read_document()
        assert data is not None
        try:
            paragraphs = [p.text for p in docx.Document(io.BytesIO(data)).paragraphs]
        except Exception:  # a half-written file while LibreOffice saves
            return None
        return paragraphs if added in paragraphs else None

    paragraphs = await eventually(saved_paragraphs, 30, "the saved .docx")
    assert paragraphs[0] == WRITER_TEXT


async def test_calc_cell_found_through_the_tree_is_edited_and_saved(
    provider: DockerDesktopProvider, calc_document: Path
) -> None:
    sandbox = await provider.start_desktop(document(calc_document))
    tree = await wait_for_tree(sandbox.client, CALC_ITEM)

    # The cell right of the item's count (C2) is found by its name in the tree, not by pixels.
    def is_c2(node: ElementTree.Element) -> bool:
        return node.tag.endswith("cell") and (node.get("name") or "").startswith("C2")

    x, y = node_centre(tree, is_c2)
    await sandbox.perform(action("CLICK", x=x, y=y))
    await sandbox.perform(action("TYPING", text="42\n"))
    await save_keeping_format(sandbox)

    async def saved_value() -> object | None:
        data = await sandbox.read_document()
        assert data is not None
        try:
            sheet = openpyxl.load_workbook(io.BytesIO(data)).active
        except Exception:
            return None
        assert sheet is not None
        value: object = sheet["C2"].value
        return value

    assert await eventually(saved_value, 30, "the saved .xlsx") == 42
    data = await sandbox.read_document()
    assert data is not None
    sheet = openpyxl.load_workbook(io.BytesIO(data)).active
    assert sheet is not None
    assert (sheet["A2"].value, sheet["B2"].value) == (CALC_ITEM, 12)


async def test_impress_title_shows_in_the_tree(
    provider: DockerDesktopProvider, impress_document: Path
) -> None:
    sandbox = await provider.start_desktop(document(impress_document))
    tree = await wait_for_tree(sandbox.client, IMPRESS_TITLE)
    assert "tides.pptx" in tree or any(
        "tides.pptx" in title for _, title in await sandbox.client.windows() or []
    )


async def test_container_is_confined(
    provider: DockerDesktopProvider, writer_document: Path
) -> None:
    sandbox = await provider.start_desktop(document(writer_document))
    handle = sandbox.handle
    assert isinstance(handle, DockerDesktopHandle)
    attrs = handle.container.attrs
    host = attrs["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert not attrs["NetworkSettings"]["Ports"]
    assert host["Memory"] == MEMORY_CAP == host["MemorySwap"]
    assert host["CapDrop"] == ["ALL"]
    assert "no-new-privileges" in host["SecurityOpt"]
    assert attrs["Config"]["User"] == "1000:1000"
    assert attrs["Config"]["Labels"][RUN_LABEL] == current_run().run_id
    control = next(m for m in attrs["Mounts"] if m["Destination"].endswith("/control_server"))
    assert control["RW"] is False

    # Recorded code runs inside: as the desktop's user, with no way out to any network.
    probe = await sandbox.client.run_python(
        "import os, socket\n"
        "print(os.getuid(), os.path.expanduser('~'))\n"
        "s = socket.socket()\n"
        "s.settimeout(3)\n"
        "try:\n"
        "    s.connect(('192.0.2.1', 80))\n"
        "    print('connected')\n"
        "except OSError as error:\n"
        "    print('refused', error.errno)\n"
    )
    lines = probe.output.split("\n")
    assert lines[0] == "1000 /home/user"
    assert lines[1].startswith("refused")
    # pyautogui works in the desktop (the image's Python, the session's display).
    size = await sandbox.client.run_python("import pyautogui; print(tuple(pyautogui.size()))")
    assert size.output.strip() == "(1920, 1080)"
    peak = handle.peak_memory_bytes()
    assert peak is not None
    assert 50 * 2**20 < peak <= MEMORY_CAP


async def test_destroy_removes_container_and_socket_folder(
    provider: DockerDesktopProvider,
) -> None:
    sandbox = await provider.start_desktop(None)
    handle = sandbox.handle
    assert isinstance(handle, DockerDesktopHandle)
    assert handle.socket_folder.is_dir()
    await sandbox.destroy()
    assert handle.status() == "removed"
    assert not handle.socket_folder.exists()
    await sandbox.destroy()  # twice is fine


async def test_missing_image_is_a_clear_error() -> None:
    provider = DockerDesktopProvider("agentjudge/desktop:no-such-recipe")
    try:
        with pytest.raises(SandboxError, match=r"is missing.*make images"):
            await provider.start_desktop(None)
    finally:
        await provider.aclose()


CHILD = """
import asyncio, json, sys
from pathlib import PurePosixPath
from sandboxes.desktop.docker import DockerDesktopProvider
from sandboxes.desktop.sandbox import DocumentFile
from sandboxes.runs import current_run

async def main() -> None:
    provider = DockerDesktopProvider(sys.argv[1], ready_timeout=90)
    desktop = await provider.start_desktop(
        DocumentFile(PurePosixPath("notes.docx"), open(sys.argv[2], "rb").read()))
    print(json.dumps({"run": current_run().run_id, "container": desktop.name,
                      "socket": str(desktop.handle.socket_folder)}), flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


async def test_kill_9_mid_run_leaves_nothing_after_gc(
    desktop_image: str, writer_document: Path
) -> None:
    from environments.leftovers import collect_all_leftovers

    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, desktop_image, str(writer_document)],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    try:
        assert child.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(child.stdout.readline), 120)
        made = json.loads(line)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    engine = docker.from_env()
    try:
        assert engine.containers.get(made["container"]).status == "running"
        assert Path(made["socket"]).is_dir()
        removed = await collect_all_leftovers()
        assert any(made["container"] in line for line in removed), removed
        with pytest.raises(docker.errors.NotFound):
            engine.containers.get(made["container"])
        assert not Path(made["socket"]).exists()
    finally:
        engine.close()
