"""``agentjudge judge`` keeps its user informed, run as a user would (separate processes):

* against an OpenAI-compatible endpoint nobody listens on, the grid stops within 30 s with the
  cause on the terminal, instead of recording every run INVALID;
* Ctrl-C (SIGINT to the process group, as a terminal sends it) in the middle of a grid ends with
  one line saying what was saved and how to resume, and no traceback; the rerun resumes and its
  progress starts from the runs already done.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.grid_runner import VERDICTS_FILE, read_records

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"
TASK = "fs-meeting-notes-index"
NOISE = ("Traceback", "never retrieved", "Connection closed", "Task was destroyed")


def _dataset(root: Path) -> Path:
    """The mini dataset's filesystem task and its two trajectories (a replay of seconds)."""
    (root / "tasks").mkdir(parents=True)
    shutil.copy(MINI / "dataset.json", root / "dataset.json")
    shutil.copytree(MINI / "tasks" / TASK, root / "tasks" / TASK)
    (root / "trajectories").mkdir()
    for path in (MINI / "trajectories").glob(f"{TASK}--*.json"):
        shutil.copy(path, root / "trajectories" / path.name)
    return root


def _environment(**extra: str) -> dict[str, str]:
    names = ("JUDGE_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY")
    environment = {key: value for key, value in os.environ.items() if key not in names}
    environment.update(COLUMNS="200", **extra)
    return environment


def _judge(dataset: Path, output: Path, *arguments: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "agentjudge",
        "judge",
        str(dataset),
        "--output",
        str(output / "judge"),
        "--replay-output",
        str(output / "replay"),
        *arguments,
    ]


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port bound by this test and never listened on: connections are refused."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


def test_an_unreachable_endpoint_stops_the_grid_with_its_cause(
    tmp_path: Path, closed_port: int
) -> None:
    dataset = _dataset(tmp_path / "data")
    command = _judge(dataset, tmp_path, "--model", "openai/gpt-x", "--mode", "llm", "--runs", "20")
    started = time.monotonic()
    done = subprocess.run(
        command,
        env=_environment(OPENAI_BASE_URL=f"http://127.0.0.1:{closed_port}/v1"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    seconds = time.monotonic() - started
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert seconds < 30, f"took {seconds:.1f} s:\n{output}"
    assert "stopped the judge grid: the model cannot be used" in output
    assert "connection" in output
    assert "refused" in output.lower()  # the cause itself, not only that something failed
    # Reported once per cause, not once per attempt.
    assert output.count("model error (connection; retrying)") == 1, output
    assert not any(noise in output for noise in NOISE), output
    # The runs the failures cut short are not recorded as judge results.
    verdicts = tmp_path / "judge" / VERDICTS_FILE
    if verdicts.exists():
        assert all(r.verdict.model_failure is None for r in read_records(verdicts).values())


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_ctrl_c_mid_grid_says_what_is_saved_and_the_rerun_resumes(tmp_path: Path) -> None:
    dataset = _dataset(tmp_path / "data")
    grid = ("--model", "mock/pass@0.5s", "--mode", "llm", "--runs", "8", "--jobs", "1")
    command = _judge(dataset, tmp_path, *grid)
    verdicts = tmp_path / "judge" / VERDICTS_FILE
    process = subprocess.Popen(
        command,
        env=_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None and _lines(verdicts) < 2:
            time.sleep(0.05)
        assert process.poll() is None, "the grid ended before it could be interrupted"
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    output = stdout + stderr
    assert process.returncode == 130, output
    saved = len(read_records(verdicts))
    assert 2 <= saved < 16
    lines = [line for line in output.splitlines() if line.startswith("Interrupted:")]
    assert lines == [
        f"Interrupted: {saved} judge run(s) in {verdicts} and 2 replay report(s) in "
        f"{tmp_path / 'replay' / 'fidelity.jsonl'} saved; run the same command again to resume."
    ], output
    assert not any(noise in output for noise in NOISE), output

    again = subprocess.run(
        command, env=_environment(), capture_output=True, text=True, timeout=300, check=False
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"{16 - saved} judge run(s) to make, {saved} reused." in again.stdout
    # The progress starts from the runs already done, and ends at the whole grid.
    assert f"judging: {saved} of 16 already done (resuming)" in again.stdout
    assert "judging 16/16" in again.stdout
    assert len(read_records(verdicts)) == 16
