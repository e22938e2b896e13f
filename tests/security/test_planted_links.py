"""Links, hard links and FIFOs planted in a results folder, through the real command line and the
real viewer over HTTP: nothing is ever written through them, and the user is told which file.

A results folder may come from someone else (a colleague's run, an archive). Each test plants a
file in place of one the runtime writes (``verdicts.jsonl``, its ``.torn`` quarantine, the
``logs`` folder, ``label_corrections.jsonl``) pointing at a "victim" file outside, runs the
command a user would, and checks the victim's bytes are untouched.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bench.grid_runner import VERDICTS_FILE
from dataset.store import load_dataset
from storage.jsonl import QUARANTINE_SUFFIX
from tests.replay.builders import FS_TASK, MINI, build_dataset
from tests.security.test_results_folders import REPOSITORY, _environment, agentjudge

VICTIM_TEXT = "export PATH=/usr/bin  # a shell start-up file\n"


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """A dataset with the mini example's filesystem task and its runs (quick to replay)."""
    recorded = load_dataset(MINI).trajectories
    chosen = [t for t in recorded.values() if t.task_id == FS_TASK]
    return build_dataset(tmp_path / "ds", chosen, (FS_TASK,))


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "home" / ".bashrc"
    path.parent.mkdir()
    path.write_text(VICTIM_TEXT)
    return path


def judge(small: Path, out: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    command = ["judge", str(small), "--model", "mock/pass", "--mode", "llm"]
    command += ["--output", str(out), "--replay-output", str(tmp_path / "replay")]
    return agentjudge(*command)


def assert_refused(result: subprocess.CompletedProcess[str], expected: str, victim: Path) -> None:
    """The command stopped with exit code 2 saying ``expected``; the victim is untouched."""
    said = result.stdout + result.stderr
    assert result.returncode == 2, said
    assert expected in said
    assert victim.read_text() == VICTIM_TEXT


@pytest.mark.slow
@pytest.mark.parametrize("planted", ["symbolic link", "hard link"])
def test_a_verdicts_file_linked_to_another_file_is_refused_and_never_written(
    tmp_path: Path, small: Path, victim: Path, planted: str
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    if planted == "symbolic link":
        (out / VERDICTS_FILE).symlink_to(victim)
        expected = f"{out / VERDICTS_FILE}: is a symbolic link"
    else:
        os.link(victim, out / VERDICTS_FILE)
        expected = "has 2 names (a hard link to another file)"
    assert_refused(judge(small, out, tmp_path), expected, victim)


@pytest.mark.slow
def test_a_quarantine_linked_elsewhere_gets_no_torn_fragment(
    tmp_path: Path, small: Path, victim: Path
) -> None:
    out = tmp_path / "out"
    first = judge(small, out, tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    verdicts = out / VERDICTS_FILE
    whole = verdicts.read_bytes()
    verdicts.write_bytes(whole[:-40])  # a kill in the middle of the last record
    (out / (VERDICTS_FILE + QUARANTINE_SUFFIX)).symlink_to(victim)
    expected = f"{VERDICTS_FILE}{QUARANTINE_SUFFIX}: is a symbolic link"
    assert_refused(judge(small, out, tmp_path), expected, victim)


@pytest.mark.slow
def test_a_logs_folder_linked_elsewhere_receives_no_run_log(
    tmp_path: Path, small: Path, victim: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = victim.parent / "autostart"
    elsewhere.mkdir()
    (out / "logs").symlink_to(elsewhere)
    result = judge(small, out, tmp_path)
    assert "Traceback" not in result.stderr
    assert list(elsewhere.iterdir()) == []
    said = result.stdout + result.stderr
    assert result.returncode == 1, said  # each judge run fails, naming the link
    assert f"crashed: UnsafeFileError: {out / 'logs'}: is a symbolic link" in said


# --- the viewer ---------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _post(url: str, payload: dict[str, str]) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(
        url,
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.slow
def test_the_viewer_refuses_a_correction_into_a_linked_corrections_file(
    tmp_path: Path, small: Path, victim: Path
) -> None:
    out = tmp_path / "out"
    first = judge(small, out, tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    (out / "label_corrections.jsonl").symlink_to(victim)
    port = _free_port()
    viewer = subprocess.Popen(
        [sys.executable, "-m", "agentjudge", "view", str(out), "--port", str(port)],
        env=_environment(),
        cwd=REPOSITORY,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/info", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline or viewer.poll() is not None:
                    raise AssertionError("the viewer did not answer") from None
                time.sleep(0.2)
        trajectory = next(iter(load_dataset(small).trajectories))
        status, answer = _post(
            f"{base}/api/corrections", {"trajectory_id": trajectory, "label": "PASS"}
        )
    finally:
        viewer.terminate()
        viewer.wait(timeout=30)
    assert status == 409, answer
    assert "is a symbolic link" in str(answer["error"])
    assert victim.read_text() == VICTIM_TEXT
