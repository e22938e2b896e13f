"""Sandboxes made ahead of need, on real local desktops: handed out ready, never more than the
pool's size, and none left when the work ends, fails or is cancelled, or after a SIGKILL."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Literal

import psutil
import pytest

from environments.leftovers import collect_all_leftovers
from sandboxes.ahead import AheadPool
from sandboxes.desktop.local import LocalDesktopProvider
from sandboxes.desktop.sandbox import DesktopSandbox
from tests.sandboxes.desktop.helpers import desktop_folders, start, word_document

pytestmark = [pytest.mark.desktop, pytest.mark.slow]

REPOSITORY = Path(__file__).resolve().parents[2]


def _maker(provider: LocalDesktopProvider, text: str, made: list[DesktopSandbox]):  # type: ignore[no-untyped-def]
    async def make() -> DesktopSandbox:
        desktop = await start(provider, f"{text}.docx", word_document(f"Made ahead: {text}"))
        made.append(desktop)
        return desktop

    return make


async def _until(condition, timeout: float = 90.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_a_desktop_made_ahead_is_handed_out_ready_and_the_pool_keeps_to_its_size() -> None:
    made: list[DesktopSandbox] = []
    async with LocalDesktopProvider() as provider:
        pool = AheadPool(1)
        async with pool:
            assert pool.prepare("first", _maker(provider, "first", made))
            assert not pool.prepare("second", _maker(provider, "second", made))  # full
            assert pool.prepare("first", _maker(provider, "again", made))  # held already
            assert (len(pool), pool.counts.prepared) == (1, 1)
            await _until(lambda: len(made) == 1)
            await asyncio.sleep(0.1)  # the making's task ends right after
            desktop = await pool.take("first")
            assert desktop is made[0]
            assert pool.counts.ready == 1
            # Ready as handed out: the document's window and its text, without waiting.
            assert any("first.docx" in title for _, title in await desktop.client.windows() or [])
            assert "Made ahead: first" in await desktop.client.accessibility_tree()
            assert len(pool) == 0
            assert await pool.take("never prepared") is None
            assert pool.prepare("second", _maker(provider, "second", made))
            asked = time.monotonic()
            second = await pool.take("second")  # still starting: waited for
            waited = time.monotonic() - asked
            assert second is made[1]
            assert pool.counts.waited == 1
            assert 0 < pool.counts.waited_seconds <= waited
            assert pool.counts.waited_seconds > waited / 2  # the start, not a moment of it
            assert pool.prepare("third", _maker(provider, "third", made))
            await desktop.destroy()
            await second.destroy()
        # Closing the pool stopped the third, made or being made, and prepares nothing more.
        assert provider._live == set()
        assert not pool.prepare("fourth", _maker(provider, "fourth", made))
        assert pool.peak == 1
    assert len(made) <= 3


@pytest.mark.parametrize("outcome", ["ends", "fails", "cancelled"])
async def test_desktops_made_ahead_are_stopped_however_the_work_ends(
    outcome: Literal["ends", "fails", "cancelled"],
) -> None:
    before = desktop_folders()
    made: list[DesktopSandbox] = []
    async with LocalDesktopProvider() as provider:

        async def work() -> None:
            async with AheadPool(2) as pool:
                pool.prepare("a", _maker(provider, "a", made))
                pool.prepare("b", _maker(provider, "b", made))
                if outcome == "cancelled":
                    await asyncio.sleep(3600)  # cancelled while both desktops start
                taken = await pool.take("a")
                assert taken is not None
                await taken.destroy()
                if outcome == "fails":
                    raise RuntimeError("the judge failed")

        task = asyncio.create_task(work())
        if outcome == "cancelled":
            await _until(lambda: len(desktop_folders()) > len(before))
            await asyncio.sleep(1.0)  # their processes are starting now
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        elif outcome == "fails":
            with pytest.raises(RuntimeError, match="the judge failed"):
                await task
        else:
            await task
        # Nothing left before the provider's own cleanup runs.
        assert provider._live == set()
        assert desktop_folders() == before
    if outcome != "cancelled":
        assert len(made) >= 1


KILLED = textwrap.dedent(
    """
    import asyncio, json, sys
    from sandboxes.ahead import AheadPool
    from sandboxes.desktop.local import LocalDesktopProvider
    from tests.sandboxes.desktop.helpers import start, word_document

    async def main():
        provider = LocalDesktopProvider()
        pool = AheadPool(1)
        made = []
        async def make():
            desktop = await start(provider, "k.docx", word_document("made ahead, then killed"))
            made.append(desktop)
            return desktop
        pool.prepare("next", make)
        while not made:
            await asyncio.sleep(0.05)
        handle = made[0].handle
        print(json.dumps({
            "folder": str(handle.folder),
            "cgroup": str(handle.cap.folder) if handle.cap else None,
            "box": handle.process.pid,
        }), flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


async def test_a_desktop_made_ahead_by_a_killed_run_is_collected() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
        cwd=REPOSITORY,
    )
    try:
        assert child.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(child.stdout.readline), 120)
        made = json.loads(line)
        box = psutil.Process(made["box"])
        inside = box.children(recursive=True)
        assert any(process.name().startswith("soffice") for process in inside)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    _, alive = psutil.wait_procs([box, *inside], timeout=15)
    assert alive == []  # the box dies with its run
    folder = Path(made["folder"])
    cgroup = Path(made["cgroup"]) if made["cgroup"] else None
    folder_left = folder.parent.exists()
    removed = await collect_all_leftovers()
    assert not folder.parent.exists()
    if folder_left:  # another job's collection may have got there first
        assert f"directory {folder.parent}" in removed
    assert cgroup is None or not cgroup.exists()
