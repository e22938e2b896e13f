"""A replay process killed with SIGKILL leaves nothing behind once the next run collects."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from dataset.models import VerifierRef
from dataset.store import load_dataset, write_task
from environments.leftovers import collect_all_leftovers
from sandboxes.postgres.embedded import data_parents
from sandboxes.runs import RunRecord, process_alive, runs_registry
from tests.replay.builders import FS_TASK, PG_TASK, build_dataset, steps, trajectory

ROOT = "${SANDBOX_ROOT}"

SLOW_VERIFIER = """\
import time
time.sleep(120)
"""


def slow_dataset(root: Path) -> Path:
    fs = trajectory("fs-slow", FS_TASK, steps(("create_directory", {"path": f"{ROOT}/x"}, None)))
    pg = trajectory("pg-slow", PG_TASK, steps(("execute_sql", {"sql": "SELECT 1 AS one"}, None)))
    build_dataset(root, [fs, pg], (FS_TASK, PG_TASK))
    dataset = load_dataset(root)
    for task in dataset.tasks.values():
        (root / "tasks" / task.id / "verify.py").write_text(SLOW_VERIFIER)
        write_task(root, task.model_copy(update={"verifier": VerifierRef(timeout_seconds=300)}))
    return root


def owned_paths(run_id: str) -> list[Path]:
    """Scratch directories and embedded data directories (on disk or in RAM) of a run."""
    return sorted(path for parent in data_parents() for path in parent.glob(f"aj_{run_id}*"))


def postmaster_pids(paths: list[Path]) -> list[int]:
    return [
        int((path / "postmaster.pid").read_text().split()[0])
        for path in paths
        if (path / "postmaster.pid").exists()
    ]


def child_run_id(pid: int) -> str:
    for path in runs_registry().glob("*.json"):
        record = RunRecord.model_validate_json(path.read_text())
        if record.pid == pid:
            return record.run_id
    raise AssertionError(f"no run record for pid {pid}")


def verifiers_of(pid: int) -> list[int]:
    """The verifier processes (``python verify.py``, in their boxes) under process ``pid``."""
    try:
        below = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    found = []
    for process in below:
        with contextlib.suppress(psutil.Error):
            if "verify.py" in process.cmdline()[1:2]:
                found.append(process.pid)
    return found


def start_slow_replay(tmp_path: Path, backend: str) -> tuple[subprocess.Popen[bytes], list[int]]:
    """Start ``agentjudge replay`` on two trajectories and wait until both verifiers hang."""
    root = slow_dataset(tmp_path / "ds")
    command = [sys.executable, "-m", "agentjudge", "replay", str(root), "--backend", backend]
    command += ["--output", str(tmp_path / "out"), "--jobs", "2"]
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while len(verifiers := verifiers_of(child.pid)) < 2:
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            raise AssertionError("the replay ended, or its verifiers never started")
        time.sleep(0.2)
    return child, verifiers


BACKENDS = ["local", pytest.param("docker", marks=pytest.mark.docker)]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_leftovers_of_a_killed_replay_are_collected(tmp_path: Path, backend: str) -> None:
    child, verifier_pids = start_slow_replay(tmp_path, backend)
    try:
        run_id = child_run_id(child.pid)
        owned = owned_paths(run_id)
        assert owned, "the replay made no scratch directories"
        postmasters = postmaster_pids(owned)
        containers = docker_names(run_id) if backend == "docker" else []
        if backend == "docker":
            assert containers, "the docker replay made no containers"
        else:
            assert postmasters, "the local replay started no embedded Postgres"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()

    removed = await collect_all_leftovers()
    assert not owned_paths(run_id), removed
    assert not any(process_alive(pid) for pid in postmasters)
    assert not any(process_alive(pid) for pid in verifier_pids)
    if backend == "docker":
        assert docker_names(run_id) == []
    assert json.dumps(removed)  # every removal is reported as text


def docker_names(run_id: str) -> list[str]:
    import docker

    client = docker.from_env()
    labelled = client.containers.list(all=True, filters={"label": f"agentjudge.run={run_id}"})
    return sorted(str(container.name) for container in labelled)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ctrl_c_removes_everything_without_help(tmp_path: Path, backend: str) -> None:
    child, verifier_pids = start_slow_replay(tmp_path, backend)
    run_id = child_run_id(child.pid)
    postmasters = postmaster_pids(owned_paths(run_id))
    child.send_signal(signal.SIGINT)
    assert child.wait(timeout=120) != 0
    assert not owned_paths(run_id)
    assert not (runs_registry() / f"{run_id}.json").exists()
    assert not any(process_alive(pid) for pid in postmasters + verifier_pids)
    if backend == "docker":
        assert docker_names(run_id) == []
