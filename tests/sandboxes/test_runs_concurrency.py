"""Leftover collection next to live runs: one process holds real sandboxes while another runs the
full ``gc`` over and over; nothing of the live run may be touched, and a run killed meanwhile is
still collected.

Everything runs in a mount namespace of its own (its own ``/tmp``, so its own run registry and
Chromium folders; its own ``/dev/shm``, so its own default scratch space and RAM folder for
Postgres; no cgroups, no Docker engine): a ``gc`` there sees only the runs this test makes, never
the machine's. Three cases:

- ``steady``: the plain case.
- ``forked``: the live run forked a child that ended the ordinary way, running the exit hooks it
  inherited (one of them ended the parent's run: its record went, and the parent looked dead).
- ``stepped``: the wall clock was stepped by whole seconds after the live run started (a paused or
  restored VM, NTP). ``/proc/stat`` then gives another boot time, and every start time computed
  from it moves: a live run's recorded start no longer matched, and it looked dead. The step is
  shown to the collecting process only, through a copy of ``/proc/stat`` with the boot time
  moved, mounted over the real one in its own namespace (the machine's clock is left alone).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.geteuid() != 0 or shutil.which("unshare") is None,
        reason="a private mount namespace needs root and unshare",
    ),
]

RUN = r"""
import asyncio, atexit, json, os, sys
from pathlib import Path

import asyncpg

from dataset.models import EmptyState, Task
from sandboxes.filesystem.local import LocalFilesystemProvider
from sandboxes.postgres.embedded import EmbeddedPostgresCluster
from sandboxes.runs import current_run, runs_registry


async def main(browser_wanted: bool, fork: bool) -> None:
    run = current_run()
    task = Task(id="t", domain="ds", subdomain="filesystem", instruction="i",
                initial_state=EmptyState())
    provider = LocalFilesystemProvider()
    tree = await provider.create(task, Path.cwd())
    (tree.directory / "keep.txt").write_text("in use")
    cluster = EmbeddedPostgresCluster(in_memory=True)
    await cluster.start()
    paths = [run.directory(), tree.directory / "keep.txt", runs_registry() / f"{run.run_id}.json",
             cluster.data_directory]
    browser = None
    if browser_wanted:
        from sandboxes.chromium import ChromiumProcess
        browser = await ChromiumProcess.start()
        paths += [browser.folder, browser.socket_folder]
    if fork:
        child = os.fork()
        if child == 0:  # ends the ordinary way: the exit hooks it inherited run
            atexit._run_exitfuncs()
            os._exit(0)
        os.waitpid(child, 0)
    print(json.dumps({"run": run.run_id, "paths": [str(path) for path in paths],
                      "postmaster": cluster.pid}), flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    missing = [str(path) for path in paths if not path.exists()]
    admin = cluster.admin
    try:
        connection = await asyncpg.connect(host=admin.host, port=admin.port, user=admin.user,
                                           password=admin.password, database=admin.database)
        postgres = await connection.fetchval("SELECT 1") == 1
        await connection.close()
    except Exception:
        postgres = False
    shown = None
    if browser is not None:
        try:
            page = await (await browser.new_context()).new_page()
            await page.set_content("<p>still here</p>")
            shown = await page.inner_text("p")
        except Exception as error:
            shown = repr(error)
        await browser.close()
    print(json.dumps({"missing": missing, "postgres": postgres, "browser": shown}), flush=True)
    await tree.destroy()
    await cluster.stop()


asyncio.run(main(sys.argv[1] == "1", sys.argv[2] == "1"))
"""

GC = r"""
import asyncio, json, sys
from environments.leftovers import collect_all_leftovers


async def main(rounds: int) -> None:
    removed = []
    for _ in range(rounds):
        removed += await collect_all_leftovers()
    print(json.dumps(removed), flush=True)


asyncio.run(main(int(sys.argv[1])))
"""

SCENE = r"""
import json, os, re, signal, subprocess, sys, time
from pathlib import Path

case, run_program, gc_program = sys.argv[1:4]
# The checkout (with its venv) may itself live under one of the folders hidden below (a clone in
# /tmp): it is bound back at its place, reached through a handle on the folder taken beforehand.
checkout = os.path.realpath(os.getcwd())
for target in ("/tmp", "/dev/shm", "/sys/fs/cgroup"):
    held = os.open(target, os.O_PATH)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4g,mode=1777", "tmpfs", target],
                   check=True)
    if checkout.startswith(target + "/"):
        os.makedirs(checkout, exist_ok=True)
        inside = os.path.relpath(checkout, target)
        subprocess.run(["mount", "--no-canonicalize", "--bind",
                        f"/proc/{os.getpid()}/fd/{held}/{inside}", checkout],
                       check=True)
    os.close(held)
python = sys.executable


def start(browser: bool, fork: bool) -> tuple[subprocess.Popen, dict]:
    process = subprocess.Popen(
        [python, "-c", run_program, "1" if browser else "0", "1" if fork else "0"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    if not line:
        raise SystemExit(f"a run did not start (exit {process.wait()})")
    return process, json.loads(line)


live, ready = start(case == "stepped", case == "forked")
killed, doomed = start(False, False)
os.kill(killed.pid, signal.SIGKILL)
killed.wait()

gc = [python, "-c", gc_program, "8"]
if case == "stepped":
    stat = Path("/proc/stat").read_text()
    boot = int(re.search(r"^btime (\d+)$", stat, re.M).group(1))
    Path("/tmp/stat").write_text(stat.replace(f"btime {boot}", f"btime {boot + 7}"))
    mount = "mount --bind /tmp/stat /proc/stat && exec \"$0\" \"$@\""
    gc = ["unshare", "-m", "--propagation", "private", "sh", "-c", mount, *gc]
collected = subprocess.run(gc, capture_output=True, text=True)
if collected.returncode != 0:
    raise SystemExit(collected.stderr[-3000:])

live.stdin.write("check\n")
live.stdin.flush()
after = json.loads(live.stdout.readline())
live.wait(60)
try:
    postmaster_left = os.kill(doomed["postmaster"], 0) is None and "Z" not in Path(
        f"/proc/{doomed['postmaster']}/stat").read_text().split(")")[-1].split()[0]
except (OSError, IndexError):
    postmaster_left = False
print(json.dumps({
    "live": ready, "after": after, "removed": json.loads(collected.stdout),
    "killed": doomed, "killed_left": [path for path in doomed["paths"] if Path(path).exists()],
    "killed_postmaster_left": postmaster_left,
}))
"""


def scene(case: str) -> dict[str, Any]:
    """Run the case in a mount namespace of its own; what the runs and the collector saw."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("AGENTJUDGE_") and name not in ("TMPDIR", "XDG_DATA_HOME")
    }
    environment["PYTHONPATH"] = str(REPO)
    environment["DOCKER_HOST"] = "unix:///nonexistent/docker.sock"  # the machine's engine: never
    command = ["unshare", "-m", "--propagation", "private", sys.executable, "-c", SCENE]
    finished = subprocess.run(
        [*command, case, RUN, GC],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr[-4000:]
    result: dict[str, Any] = json.loads(finished.stdout.splitlines()[-1])
    return result


@pytest.mark.parametrize("case", ["steady", "forked", "stepped"])
def test_gc_beside_a_live_run_touches_nothing_of_it_and_still_collects_a_killed_one(
    case: str,
) -> None:
    seen = scene(case)
    live, after, removed = seen["live"], seen["after"], seen["removed"]
    assert after["missing"] == [], removed
    assert after["postgres"], removed
    if case == "stepped":
        assert after["browser"] == "still here", removed
    assert not [line for line in removed if live["run"] in line]
    # The run killed meanwhile is collected: its folders, its data and its server.
    assert seen["killed_left"] == [], removed
    assert not seen["killed_postmaster_left"], removed
    assert any(seen["killed"]["run"] in line for line in removed)
