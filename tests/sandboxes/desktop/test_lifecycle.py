"""A desktop's life: frozen into a recipe and restored for judges (replay, reopened files), and
collected by ``gc`` after its run was killed with SIGKILL."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path, PurePosixPath
from typing import Any

import psutil
import pytest

from dataset.actions import Computer13Action
from dataset.models import DocumentState, Task
from environments.leftovers import collect_all_leftovers
from sandboxes.base import SandboxError
from sandboxes.desktop.local import LocalDesktopProvider
from sandboxes.desktop.sandbox import (
    DEFAULT_READY_TIMEOUT,
    DEFAULT_SCREEN,
    DesktopSandbox,
    DesktopStartError,
    DocumentFile,
    ReopenFilesRestore,
    ReplayRestore,
    document_location,
)
from tests.sandboxes.desktop.helpers import (
    BACKENDS,
    act,
    desktop_folders,
    desktop_provider,
    save_keeping_format,
    wait_for_node,
    word_document,
    word_paragraphs,
)

pytestmark = pytest.mark.desktop

REPOSITORY = Path(__file__).resolve().parents[3]


def word_task(folder: Path, text: str) -> Task:
    (folder / "report.docx").write_bytes(word_document(text))
    return Task(
        id="word-report",
        domain="gui",
        subdomain="word",
        instruction="Add a line to the report and save it.",
        initial_state=DocumentState(path="report.docx", open_at="/home/user/Desktop/report.docx"),
    )


def test_documents_go_where_the_agent_had_them() -> None:
    at = DocumentState(path="files/r.docx", open_at="/home/user/Desktop/r.docx")
    assert document_location(at) == PurePosixPath("Desktop/r.docx")
    assert document_location(DocumentState(path="files/r.docx")) == PurePosixPath("r.docx")
    outside = DocumentState(path="r.docx", open_at="/opt/data/r.docx")
    assert document_location(outside) == PurePosixPath("r.docx")


async def test_a_frozen_desktop_is_restored_by_replay_and_by_reopening_its_file(
    tmp_path: Path,
) -> None:
    task = word_task(tmp_path, "Status report")
    async with LocalDesktopProvider() as provider:
        desktop = await provider.create(task, tmp_path)
        assert str(desktop.document) == "/home/user/Desktop/report.docx"
        paragraph = await wait_for_node(desktop, tag="paragraph", text_contains="Status report")
        await act(desktop, "CLICK", x=paragraph.center[0], y=paragraph.center[1])
        await act(desktop, "HOTKEY", keys=["ctrl", "end"])
        await act(desktop, "TYPING", text=" all green")
        saved = await save_keeping_format(desktop, (tmp_path / "report.docx").read_bytes())
        assert word_paragraphs(saved)[0] == "Status report all green"
        # Typed after the save: only a replay brings it back.
        await act(desktop, "TYPING", text=" (unsaved)")
        await wait_for_node(desktop, tag="paragraph", text_contains="(unsaved)")
        snapshot = await desktop.freeze()
        assert not desktop.handle.folder.exists()  # type: ignore[attr-defined]
        assert snapshot.saved_document == saved
        assert [type(a) for a in snapshot.actions] == [Computer13Action] * len(snapshot.actions)

        reopened = await snapshot.clone(method=ReopenFilesRestore())
        async with reopened:
            node = await wait_for_node(reopened, tag="paragraph", text_contains="all green")
            assert "(unsaved)" not in node.text

        # The replay answers the save dialog with the recorded click, as the agent did.
        replayed = await snapshot.clone(method=ReplayRestore(pause=0.5))
        async with replayed:
            node = await wait_for_node(replayed, tag="paragraph", text_contains="(unsaved)")
            assert node.text.startswith("Status report all green")
            assert replayed.performed == snapshot.actions
        await snapshot.destroy()


async def test_reopening_needs_a_saved_document(tmp_path: Path) -> None:
    async with LocalDesktopProvider() as provider:
        desktop = await provider.start_desktop(None)
        snapshot = await desktop.freeze()
        with pytest.raises(SandboxError, match="holds no saved document"):
            await snapshot.clone(method=ReopenFilesRestore())


class FaultyFirstStart(LocalDesktopProvider):
    """Real local desktops, the first of which fails to get ready: given far too little time
    (as a start whose window never shows on a loaded machine), or with a screen that Xvfb
    crashes on (as a session that loses its display). Later starts are made as usual."""

    def __init__(self, fault: str) -> None:
        super().__init__()
        self.fault = fault
        self.launches = 0

    async def launch_desktop(self, document: DocumentFile | None, **where: Any) -> DesktopSandbox:
        first = self.launches == 0
        self.launches += 1
        self.ready_timeout = 0.2 if first and self.fault == "unready" else DEFAULT_READY_TIMEOUT
        self.screen = (0, 0) if first and self.fault == "crashed" else DEFAULT_SCREEN
        return await super().launch_desktop(document, **where)


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        # The control server may answer within the 0.2 s or not; the window never shows in it.
        ("unready", r"(did not answer|no window showed s\.docx) within 0\.2 s"),
        ("crashed", "stopped while starting"),
    ],
)
async def test_a_start_that_never_gets_ready_is_made_again_and_the_first_is_gone(
    fault: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    data = word_document("Second time lucky")
    async with FaultyFirstStart(fault) as provider:
        before = desktop_folders()
        with caplog.at_level(logging.WARNING, logger="sandboxes.desktop.sandbox"):
            desktop = await provider.start_desktop(DocumentFile(PurePosixPath("s.docx"), data))
        async with desktop:
            assert provider.launches == 2
            (warning,) = [r.getMessage() for r in caplog.records if "desktop start" in r.msg]
            assert warning.startswith("desktop start 1 failed, starting again: ")
            assert re.search(reason, warning), warning
            await wait_for_node(desktop, tag="paragraph", text_contains="Second time lucky")
            # The unready first desktop was stopped and removed: only the second one is left.
            assert desktop_folders() == sorted([*before, desktop.handle.folder])  # type: ignore[attr-defined]
            assert provider._live == {desktop}


_OPENBOX_PIDS = (
    'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = openbox ] && echo ${p#/proc/}; done'
)
"""A bash line printing the pids of the desktop's openbox processes (no procps needed)."""


def _session_log(desktop: DesktopSandbox) -> str:
    handle: Any = desktop.handle
    if hasattr(handle, "logs"):  # a container's output
        return str(handle.logs(tail=200))
    return str((handle.folder / "session.log").read_text(errors="replace"))


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_window_manager_that_exits_is_started_again_and_takes_the_window_back(
    backend: str,
) -> None:
    # On a busy machine openbox was seen to exit moments after its start: LibreOffice's window
    # was then shown but unmanaged, no window was listed, and the desktop never got ready.
    async def managed() -> tuple[list[str], list[str]]:
        found = await desktop.client.run_bash_script(_OPENBOX_PIDS)
        titles = [title for _, title in await desktop.client.windows() or []]
        return found.output.split(), titles

    data = word_document("Managed again")
    async with (
        desktop_provider(backend) as provider,
        await provider.start_desktop(DocumentFile(PurePosixPath("kept.docx"), data)) as desktop,
    ):
        (first,), titles = await managed()
        assert any("kept.docx" in title for title in titles)
        killed = await desktop.client.run_bash_script(f"kill -9 {first}")
        assert killed.returncode == 0, killed
        deadline = asyncio.get_running_loop().time() + 20
        while True:
            pids, titles = await managed()
            if pids and any("kept.docx" in title for title in titles):
                break
            assert asyncio.get_running_loop().time() < deadline, (pids, titles)
            await asyncio.sleep(0.2)
        assert pids != [first]
        assert "openbox exited (-9); starting it again" in _session_log(desktop)


async def test_starts_that_never_get_ready_fail_with_the_count_and_leave_nothing() -> None:
    data = word_document("Never ready")
    async with LocalDesktopProvider(ready_timeout=0.2, start_attempts=3) as provider:
        before = desktop_folders()
        with pytest.raises(DesktopStartError) as caught:
            await provider.start_desktop(DocumentFile(PurePosixPath("n.docx"), data))
        assert str(caught.value).startswith("3 starts never got ready; the last: ")
        assert re.search(
            r"(did not answer|no window showed n\.docx) within 0\.2 s", str(caught.value)
        )
        assert provider._live == set()
        assert desktop_folders() == before
    with pytest.raises(ValueError, match="start_attempts must be at least 1"):
        LocalDesktopProvider(start_attempts=0)


CHILD = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import PurePosixPath
    from sandboxes.desktop.local import LocalDesktopProvider
    from sandboxes.desktop.sandbox import DocumentFile

    async def main():
        provider = LocalDesktopProvider()
        data = open(sys.argv[1], "rb").read()
        desktop = await provider.start_desktop(DocumentFile(PurePosixPath("k.docx"), data))
        handle = desktop.handle
        print(json.dumps({
            "folder": str(handle.folder),
            "cgroup": str(handle.cap.folder) if handle.cap else None,
            "box": handle.process.pid,
        }), flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


async def test_a_killed_run_leaves_nothing_after_gc(tmp_path: Path) -> None:
    document = tmp_path / "k.docx"
    document.write_bytes(word_document("killed mid-run"))
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(document)],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
        cwd=REPOSITORY,
    )
    try:
        assert child.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(child.stdout.readline), 120)
        started = json.loads(line)
        box = psutil.Process(started["box"])
        inside = box.children(recursive=True)
        assert any(p.name() == "Xvfb" for p in inside)
        assert any(p.name().startswith("soffice") for p in inside)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    _, alive = psutil.wait_procs([box, *inside], timeout=15)
    assert alive == []  # the box died with its run (bubblewrap's --die-with-parent)
    folder = Path(started["folder"])
    cgroup = Path(started["cgroup"]) if started["cgroup"] else None
    # Collection is machine-wide: another job's gc may get there first, and then says so.
    folder_left = folder.parent.exists()
    cgroup_left = cgroup is not None and cgroup.exists()
    removed = await collect_all_leftovers()
    assert not folder.exists()
    assert not folder.parent.exists()
    if folder_left:
        assert f"directory {folder.parent}" in removed
    if cgroup is not None:
        assert not cgroup.exists()
    if cgroup_left:
        assert f"desktop cgroup {cgroup}" in removed


INTERRUPTED = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import PurePosixPath
    from sandboxes.desktop.local import LocalDesktopProvider
    from sandboxes.desktop.sandbox import DocumentFile

    async def main():
        async with LocalDesktopProvider() as provider:
            data = open(sys.argv[1], "rb").read()
            desktop = await provider.start_desktop(DocumentFile(PurePosixPath("c.docx"), data))
            print(json.dumps({
                "folder": str(desktop.handle.folder),
                "box": desktop.handle.process.pid,
            }), flush=True)
            await asyncio.sleep(3600)

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    """
)


async def test_ctrl_c_removes_the_desktop(tmp_path: Path) -> None:
    document = tmp_path / "c.docx"
    document.write_bytes(word_document("interrupted by the user"))
    child = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED, str(document)],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
        cwd=REPOSITORY,
        text=True,
    )
    try:
        assert child.stdout is not None
        started = json.loads(await asyncio.wait_for(asyncio.to_thread(child.stdout.readline), 180))
        box = psutil.Process(started["box"])
        inside = box.children(recursive=True)
        child.send_signal(signal.SIGINT)
        rest, _ = await asyncio.wait_for(asyncio.to_thread(child.communicate), 60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert rest.strip() == "interrupted"
    assert not Path(started["folder"]).exists()  # removed by the run itself, not by gc
    _, alive = psutil.wait_procs([box, *inside], timeout=5)
    assert alive == []
