"""A huge observation costs the viewer little per request, over HTTP against a real ``agentjudge
view`` process: a trajectory holding a 300 MB observation is not parsed for its page (the page
says why), a 40 MB tool result in a judge's log reaches the page cut to a bounded size, and the
raw log still streams whole. The viewer's peak memory (``VmHWM``) is read before and after."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from dataset.store import load_dataset
from tests.replay.builders import FS_TASK, MINI
from tests.security.test_results_folders import start_agentjudge, wait_for
from tests.viewer.results import make_results

pytestmark = pytest.mark.slow

OBSERVATION_BYTES = 300 * 10**6
TOOL_RESULT_BYTES = 40 * 10**6
PAGE_BYTES = 4 * 2**20
"""The most a page's answer may weigh, whatever the data holds."""
PEAK_GROWTH = 400 * 2**20
"""The most the viewer's peak memory may grow over all the requests (a 300 MB observation cost
1.3 GB per request before)."""


def _peak(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
    assert found is not None
    return int(found.group(1)) * 1024


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=300) as answer:
            return int(answer.status), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


async def test_huge_observations_are_cut_or_refused_not_loaded_whole(
    tmp_path: Path, reaped: list[subprocess.Popen[bytes]]
) -> None:
    root = tmp_path / "ds"
    shutil.copytree(
        MINI, root, ignore=shutil.ignore_patterns("android-*", "pg-*", "search-*", "word-*")
    )
    trajectory_id = next(
        t.id for t in load_dataset(root).trajectories.values() if t.task_id == FS_TASK
    )
    results = await make_results(root, tmp_path / "results", set(), only={trajectory_id})
    # A 300 MB observation in the trajectory's first step, written as a dataset would hold it.
    path = root / "trajectories" / f"{trajectory_id}.json"
    trajectory = json.loads(path.read_text())
    trajectory["steps"][0]["observation"] = {"text": "a" * OBSERVATION_BYTES}
    path.write_text(json.dumps(trajectory))
    # A 40 MB tool result in the judge's log.
    (log,) = (results / "logs").glob("*.jsonl")
    key = log.stem
    event = {
        **{"event": "tool_call", "turn": 1, "id": "c1", "name": "read_file", "arguments": {}},
        **{"is_error": False, "seconds": 0.1, "result": "b" * TOOL_RESULT_BYTES},
    }
    with log.open("a") as stream:
        stream.write(json.dumps(event) + "\n")

    viewer = start_agentjudge(
        "view", str(results), "--dataset", str(root), "--port", "0", "--no-cache",
        log=tmp_path / "viewer.log",
    )  # fmt: skip
    reaped.append(viewer)
    said = tmp_path / "viewer.log"
    wait_for(lambda: "http://127.0.0.1:" in said.read_text(), "the viewer's address")
    url = re.search(r"http://127\.0\.0\.1:\d+/", said.read_text()).group(0)  # type: ignore[union-attr]
    wait_for(lambda: _get(url + "api/info")[0] == 200, "the viewer to answer")
    before = _peak(viewer.pid)

    status, body = _get(f"{url}api/trajectory/{trajectory_id}")
    assert status == 413, body[:300]
    assert b"more than the viewer reads for a page" in body
    status, body = _get(f"{url}api/run/{key}")
    assert status == 200
    assert len(body) < PAGE_BYTES
    run = json.loads(body)
    assert "more than the viewer reads for a page" in run["trajectory_error"]
    (shown,) = [entry for entry in run["transcript"] if entry.get("id") == "c1"]
    assert shown["result"].startswith("bbbb")
    assert "more characters not shown" in shown["result"]
    status, body = _get(f"{url}logs/{key}.jsonl?raw=1")
    assert status == 200
    assert len(body) > TOOL_RESULT_BYTES  # the raw log still holds everything

    growth = _peak(viewer.pid) - before
    assert growth < PEAK_GROWTH, f"the viewer's peak memory grew by {growth / 2**20:.0f} MiB"
