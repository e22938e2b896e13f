"""What a killed run's browsers leave behind, and its collector.

A browser's processes are tracked helpers of its run (the process collector kills them), its
profile and home live in the run's scratch folder (the directory collector removes it), and its
temporary folder, where Chromium keeps its single-instance socket, is
``/tmp/aj_<run>_browser_<n>_tmp`` (``sandboxes.browser.chromium``). This collector, run after
the process collector and before the directory collector, makes sure every browser process of a
dead run has exited (a browser still shutting down could write into a folder being removed) and
removes the temporary folders.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil

import psutil

from sandboxes.browser.chromium import SOCKET_ROOT
from sandboxes.runs import NAME_PREFIX, run_id_of, run_is_alive

EXIT_WAIT_SECONDS = 5.0
"""How long a killed browser process may take to exit."""


def _dead_run_processes(dead: set[str]) -> list[psutil.Process]:
    """This user's processes whose command line names a dead run's resources (a browser's
    profile and temporary folders carry ``aj_<run id>_``)."""
    found = []
    markers = [f"{NAME_PREFIX}_{run_id}_" for run_id in dead]
    for process in psutil.process_iter(["cmdline", "uids"]):
        with contextlib.suppress(psutil.Error, TypeError):
            if process.info["uids"].real != os.getuid() or process.pid == os.getpid():
                continue
            command = " ".join(process.info["cmdline"] or [])
            if any(marker in command for marker in markers):
                found.append(process)
    return found


async def collect_browser_leftovers() -> list[str]:
    """Kill what is left of dead runs' browsers, wait for it to exit, and remove their
    temporary folders."""
    folders = {}
    for path in sorted(SOCKET_ROOT.glob(f"{NAME_PREFIX}_*_browser_*_tmp")):
        run_id = run_id_of(path.name)
        if run_id is not None and not path.is_symlink() and not run_is_alive(run_id):
            folders[path] = run_id
    dead = set(folders.values())
    removed: list[str] = []
    if dead:
        processes = await asyncio.to_thread(_dead_run_processes, dead)
        for process in processes:
            with contextlib.suppress(psutil.Error):
                process.kill()
                removed.append(f"browser process {process.pid}")
        await asyncio.to_thread(psutil.wait_procs, processes, EXIT_WAIT_SECONDS)
    for path, run_id in folders.items():
        await asyncio.to_thread(shutil.rmtree, path, True)
        removed.append(f"browser temporary folder {path} of run {run_id}")
    return removed
