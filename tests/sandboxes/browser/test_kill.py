"""A process holding a browser sandbox, killed with SIGKILL, leaves no browser process, profile
or socket folder behind once the next run collects."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from environments.leftovers import collect_all_leftovers
from tests.sandboxes.browser.archived_site import HOME, write_site

HOLDER = """
import asyncio, sys
from pathlib import Path
from sandboxes.browser.sandbox import BrowserProvider
from sandboxes.runs import current_run

async def main():
    provider = BrowserProvider()
    archive = await provider.archive(Path(sys.argv[1]))
    sandbox = await provider.open(archive, [sys.argv[2]])
    process = await provider.browser()
    print(current_run().run_id, process.folder, process.socket_folder, *process.pids, flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


def _chromium_processes(marker: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if marker in cmdline:
            found.append(process)
    return found


@pytest.mark.slow
async def test_kill_9_leaves_no_browser_after_gc(tmp_path: Path) -> None:
    site = write_site(tmp_path / "site")
    root = Path(__file__).parents[3]
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(site), HOME],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
        start_new_session=True,
    )
    try:
        assert holder.stdout is not None
        line = holder.stdout.readline().split()
        assert line, "the holder did not start its browser"
        run_id, folder, sockets = line[0], Path(line[1]), Path(line[2])
        pids = [int(pid) for pid in line[3:]]
        assert len(pids) >= 2  # the driver and the browser
        marker = str(folder)  # the profile lives there: every browser process names it
        browsers = _chromium_processes(marker)
        assert len(browsers) >= 2  # the browser and at least one renderer or helper
        assert any(sockets.glob("org.chromium.Chromium.*/SingletonSocket"))
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=10)
    finally:
        if holder.poll() is None:
            holder.kill()
    removed = await collect_all_leftovers()
    deadline = time.monotonic() + 10
    while _chromium_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _chromium_processes(marker) == []
    assert not any(
        psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie" for pid in pids
    )
    assert not folder.exists()
    assert not folder.parent.exists()
    assert not sockets.exists()
    assert any(run_id in line for line in removed), removed
