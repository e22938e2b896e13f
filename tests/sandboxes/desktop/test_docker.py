"""The ``docker`` desktop backend on real containers of the desktop image: documents read through
the accessibility tree, typed into, clicked, saved; confinement; cleanup, also after kill -9."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path, PurePosixPath

import docker
import docker.errors
import pytest

from dataset.actions import PyAutoGuiAction
from dataset.models import DocumentState, Task
from sandboxes.base import SandboxError
from sandboxes.desktop.docker import (
    OVERLAY_DRIVERS,
    SYSTEM_FOLDERS,
    DockerDesktopHandle,
    DockerDesktopProvider,
)
from sandboxes.desktop.observations import linearize_tree
from sandboxes.desktop.sandbox import DesktopStartError, ReopenFilesRestore, ReplayRestore
from sandboxes.runs import RUN_LABEL, current_run
from tests.sandboxes.desktop.helpers import (
    act,
    desktop_folders,
    save_keeping_format,
    sheet_document,
    sheet_value,
    slides_document,
    slides_texts,
    start,
    wait_for_node,
    word_document,
    word_paragraphs,
)

pytestmark = [pytest.mark.docker, pytest.mark.desktop]

MEMORY_CAP = 1536 * 2**20
REPOSITORY = Path(__file__).resolve().parents[3]


@pytest.fixture
async def provider(desktop_image: str) -> AsyncIterator[DockerDesktopProvider]:
    async with DockerDesktopProvider(
        desktop_image, memory_bytes=MEMORY_CAP, ready_timeout=90
    ) as made:
        yield made


def _handle(desktop: object) -> DockerDesktopHandle:
    handle = getattr(desktop, "handle", None)
    assert isinstance(handle, DockerDesktopHandle)
    return handle


async def test_a_word_document_is_read_typed_into_and_saved(
    provider: DockerDesktopProvider,
) -> None:
    data = word_document("Harbour survey", "Seventeen moorings were inspected")
    async with await start(provider, "survey.docx", data) as desktop:
        assert desktop.document == PurePosixPath("/home/user/Documents/survey.docx")
        paragraph = await wait_for_node(desktop, tag="paragraph", text_contains="Seventeen")
        assert paragraph.text == "Seventeen moorings were inspected"
        await act(desktop, "CLICK", x=paragraph.center[0], y=paragraph.center[1])
        await act(desktop, "HOTKEY", keys=["ctrl", "end"])
        await act(desktop, "TYPING", text=" (2 < 3 rusted)")
        await wait_for_node(desktop, tag="paragraph", text_contains="(2 < 3 rusted)")
        saved = await save_keeping_format(desktop, data)
    assert word_paragraphs(saved) == [
        "Harbour survey",
        "Seventeen moorings were inspected (2 < 3 rusted)",
    ]


async def test_a_sheet_cell_found_through_the_tree_is_clicked_and_changed(
    provider: DockerDesktopProvider,
) -> None:
    data = sheet_document([["item", "count"], ["lanterns", 12], ["ropes", 7]])
    async with await start(provider, "stock.xlsx", data) as desktop:
        cell = await wait_for_node(desktop, tag="table-cell", name="B3")
        assert cell.text == "7"
        await act(desktop, "CLICK", x=cell.center[0], y=cell.center[1])
        await act(desktop, "TYPING", text="40")
        await act(desktop, "PRESS", key="enter")
        await wait_for_node(desktop, tag="table-cell", name="B3", text_contains="40")
        saved = await save_keeping_format(desktop, data)
    assert (sheet_value(saved, "B3"), sheet_value(saved, "B2")) == (40, 12)
    assert sheet_value(saved, "A3") == "ropes"


async def test_a_presentation_is_read_and_edited(provider: DockerDesktopProvider) -> None:
    data = slides_document("Tidal schedule", "High water at dawn")
    async with await start(provider, "tides.pptx", data) as desktop:
        await wait_for_node(desktop, text_contains="High water at dawn")
        xml = await desktop.client.accessibility_tree()
        assert "Tidal schedule" in linearize_tree(xml)
        title = await wait_for_node(desktop, text_contains="Tidal schedule")
        # Into the title's text: double click selects a word, End goes to the line's end.
        await act(desktop, "DOUBLE_CLICK", x=title.center[0], y=title.center[1])
        await act(desktop, "PRESS", key="end")
        await act(desktop, "TYPING", text=" for May")
        await wait_for_node(desktop, text_contains="Tidal schedule for May")
        await act(desktop, "PRESS", key="escape")
        saved = await save_keeping_format(desktop, data)
    assert "Tidal schedule for May" in slides_texts(saved)


async def test_the_container_is_confined(provider: DockerDesktopProvider) -> None:
    async with await start(provider, "confined.docx", word_document("Confined")) as desktop:
        attrs = _handle(desktop).container.attrs
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
        # Where the engine keeps the image as a plain layer, the bulk of /usr comes from it,
        # read-only.
        driver = provider.engine.images.get(provider.image).attrs["GraphDriver"]["Name"]
        system = [m for m in attrs["Mounts"] if m["Destination"] in SYSTEM_FOLDERS]
        if driver in OVERLAY_DRIVERS:
            assert sorted(m["Destination"] for m in system) == sorted(SYSTEM_FOLDERS)
            assert all(m["RW"] is False and m["Type"] == "bind" for m in system)
        # Recorded code runs inside: the desktop's user, its files, no network, no host paths.
        outcome = await desktop.perform(
            PyAutoGuiAction(
                code="import os, pathlib, socket\n"
                "s = socket.socket()\ns.settimeout(3)\n"
                "try:\n    s.connect(('192.0.2.1', 80))\n    net = 'connected'\n"
                "except OSError as error:\n    net = 'refused'\n"
                "print(os.getuid(), pathlib.Path.home(), net,"
                " sorted(os.listdir(pathlib.Path.home() / 'Documents')),"
                f" os.path.exists({str(REPOSITORY / 'pyproject.toml')!r}),"
                " tuple(pyautogui.size()), sep='|')"
            )
        )
        assert outcome.status == "done", outcome.error
        uid, home, net, listing, sees_host, size = outcome.output.strip().split("|")
        assert (uid, home, net, sees_host) == ("1000", "/home/user", "refused", "False")
        assert "confined.docx" in listing
        assert size == "(1920, 1080)"
        peak = desktop.handle.peak_memory_bytes()
        assert peak is not None
        assert 50 * 2**20 < peak <= MEMORY_CAP
        spent = _handle(desktop).cpu_seconds()
        assert spent is not None
        assert spent > 0.5  # starting LibreOffice alone costs more than that


async def test_several_desktops_at_once_stay_apart(provider: DockerDesktopProvider) -> None:
    texts = [f"Container desktop number {n}" for n in range(3)]
    desktops = await asyncio.gather(
        *(start(provider, f"doc{n}.docx", word_document(text)) for n, text in enumerate(texts))
    )
    for desktop, text in zip(desktops, texts, strict=True):
        await wait_for_node(desktop, tag="paragraph", text_contains=text)
        xml = await desktop.client.accessibility_tree()
        assert not any(other in xml for other in texts if other != text)
    handles = [_handle(desktop) for desktop in desktops]
    await desktops[0].destroy()
    assert handles[0].status() == "removed"
    assert not handles[0].socket_folder.exists()
    assert await desktops[1].client.is_up()
    await provider.aclose()  # stops the rest
    assert [handle.status() for handle in handles[1:]] == ["removed", "removed"]
    assert not any(handle.socket_folder.exists() for handle in handles)


async def test_containers_that_never_get_ready_are_removed_and_the_failure_counts_them(
    desktop_image: str,
) -> None:
    engine = docker.from_env()

    def run_containers() -> list[str]:
        found = engine.containers.list(all=True, filters={"label": RUN_LABEL})
        return sorted(str(c.name) for c in found if c.labels[RUN_LABEL] == current_run().run_id)

    before = run_containers()
    # A millisecond: the control server (a Python process started with the container) cannot
    # answer that soon, however fast the machine; half a second was once enough for that, but a
    # quiet machine now gets a desktop up and its window shown in about 1.5 s.
    async with DockerDesktopProvider(desktop_image, ready_timeout=0.001) as provider:
        with pytest.raises(DesktopStartError, match=r"^2 starts never got ready; the last: "):
            await start(provider, "late.docx", word_document("Too late"))
        assert provider._live == set()
    assert run_containers() == before
    assert desktop_folders() == []


async def test_a_missing_image_is_a_clear_error() -> None:
    async with DockerDesktopProvider("agentjudge/desktop:no-such-recipe") as provider:
        with pytest.raises(SandboxError, match=r"is missing \(build it: make images"):
            await provider.start_desktop(None)
        assert provider._live == set()
    assert desktop_folders() == []


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


async def test_kill_9_mid_run_leaves_nothing_after_gc(desktop_image: str, tmp_path: Path) -> None:
    from environments.leftovers import collect_all_leftovers

    document = tmp_path / "notes.docx"
    document.write_bytes(word_document("Left behind by a killed run"))
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, desktop_image, str(document)],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
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


async def test_a_cancelled_start_leaves_no_container(desktop_image: str) -> None:
    provider = DockerDesktopProvider(desktop_image, ready_timeout=90)
    starting = asyncio.create_task(start(provider, "gone.docx", word_document("Never used")))
    await asyncio.sleep(0.5)  # the worker thread is creating or starting the container
    starting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await starting
    names = set(provider._created)
    await provider.aclose()
    engine = docker.from_env()
    try:
        for name in names:
            with pytest.raises(docker.errors.NotFound):
                engine.containers.get(name)
            assert not (current_run().directory() / name).exists()
    finally:
        engine.close()


async def test_a_frozen_desktop_is_restored_in_new_containers(
    provider: DockerDesktopProvider, tmp_path: Path
) -> None:
    (tmp_path / "report.docx").write_bytes(word_document("Status report"))
    task = Task(
        id="word-report",
        domain="gui",
        subdomain="word",
        instruction="Add to the report and save it.",
        initial_state=DocumentState(path="report.docx", open_at="/home/user/Desktop/report.docx"),
    )
    desktop = await provider.create(task, tmp_path)
    assert desktop.document == PurePosixPath("/home/user/Desktop/report.docx")
    paragraph = await wait_for_node(desktop, tag="paragraph", text_contains="Status report")
    await act(desktop, "CLICK", x=paragraph.center[0], y=paragraph.center[1])
    await act(desktop, "HOTKEY", keys=["ctrl", "end"])
    await act(desktop, "TYPING", text=" all green")
    saved = await save_keeping_format(desktop, (tmp_path / "report.docx").read_bytes())
    await act(desktop, "TYPING", text=" (unsaved)")
    await wait_for_node(desktop, tag="paragraph", text_contains="(unsaved)")
    first = _handle(desktop)
    snapshot = await desktop.freeze()
    assert first.status() == "removed"
    assert snapshot.saved_document == saved

    reopened = await snapshot.clone(method=ReopenFilesRestore())
    async with reopened:
        assert _handle(reopened).container.id != first.container.id
        node = await wait_for_node(reopened, tag="paragraph", text_contains="all green")
        assert "(unsaved)" not in node.text
    replayed = await snapshot.clone(method=ReplayRestore(pause=0.5))
    async with replayed:
        node = await wait_for_node(replayed, tag="paragraph", text_contains="(unsaved)")
        assert node.text.startswith("Status report all green")
    await snapshot.destroy()
