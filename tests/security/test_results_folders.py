"""Hostile uses of results folders, run records and dataset paths, through the real command line.

Each test starts ``agentjudge`` in subprocesses the way a user would and checks the outcome:
a second writer of a results folder stops with exit code 2 naming the holder, and the first's
results are complete and unduplicated; a torn ``verdicts.jsonl`` is repaired so every key lands
once; ``sandboxes gc`` with another ``TMPDIR`` spares a live run and collects a killed one; a
name that is not UTF-8 fails its trajectory once, by name; a verifier or seed linked outside its
task is never run; a missing dataset is exit code 2 naming the path.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.grid_runner import VERDICTS_FILE, JudgeRecord
from dataset.models import VerifierRef
from dataset.store import load_dataset, write_task
from replay.runner import REPORT_FILE
from sandboxes.runs import WORKDIR_ENV, process_alive
from storage.jsonl import QUARANTINE_SUFFIX
from storage.locks import holder_of, lock_folder
from tests.replay.builders import FS_TASK, MINI, PG_TASK, build_dataset

REPOSITORY = Path(__file__).resolve().parents[2]


def _environment(**changes: str | None) -> dict[str, str]:
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY), "COLUMNS": "200"}
    environment.pop("JUDGE_MODEL", None)
    for name, value in changes.items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    return environment


def agentjudge(*arguments: str, **environment: str | None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m agentjudge ARGUMENTS`` to its end, with ``environment``'s changes."""
    return subprocess.run(
        [sys.executable, "-m", "agentjudge", *arguments],
        check=False,
        capture_output=True,
        text=True,
        env=_environment(**environment),
        timeout=600,
        cwd=REPOSITORY,
    )


def start_agentjudge(*arguments: str, log: Path) -> subprocess.Popen[bytes]:
    """Start ``python -m agentjudge ARGUMENTS`` in the background, its output going to ``log``."""
    with log.open("wb") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "agentjudge", *arguments],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=_environment(),
            cwd=REPOSITORY,
        )


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def holds(folder: Path, process: subprocess.Popen[bytes]) -> Callable[[], bool]:
    """Whether ``process`` holds the results folder (its lock file names it)."""

    def check() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"the first process ended early ({process.returncode})")
        holder = holder_of(folder)
        return holder is not None and holder.pid == process.pid

    return check


@pytest.fixture
def mini(tmp_path: Path) -> Path:
    copy = tmp_path / "mini"
    shutil.copytree(MINI, copy)
    return copy


def verdict_keys(folder: Path) -> list[str]:
    """Every line's key; each line must parse."""
    lines = (folder / VERDICTS_FILE).read_text(encoding="utf-8").splitlines()
    return [JudgeRecord.model_validate_json(line).key for line in lines]


# --- one writer per results folder ------------------------------------------------------------


@pytest.mark.slow
def test_a_second_judge_on_the_same_folder_stops_and_the_first_completes(
    tmp_path: Path, mini: Path, mini_replay: Path, reaped: list[subprocess.Popen[bytes]]
) -> None:
    out, replay = tmp_path / "out", mini_replay
    command = ["judge", str(mini), "--model", "mock/pass", "--mode", "llm", "--runs", "2"]
    # One judge run per trajectory, its claims (if any) judged together: two runs each.
    command += ["--items", "together", "--output", str(out), "--replay-output", str(replay)]
    # Holding the replay folder here keeps the first judge in the middle of its run (it waits
    # for the replay folder while it holds its own output folder), for as long as the test needs.
    hold = lock_folder(replay)
    first = start_agentjudge(*command, "--wait", log=tmp_path / "first.log")
    reaped.append(first)
    try:
        wait_for(holds(out, first), "the first judge to take its output folder")
        second = agentjudge(*command)
    finally:
        hold.release()
    assert second.returncode == 2, second.stdout + second.stderr
    said = second.stdout + second.stderr
    assert f"error: {out}: this results folder is in use by another process" in said
    assert f"pid {first.pid}" in said
    assert "agentjudge judge" in said  # the holder's command
    assert "--wait" in said

    assert first.wait(timeout=600) == 0, (tmp_path / "first.log").read_text()
    assert "waiting for" in (tmp_path / "first.log").read_text()
    keys = verdict_keys(out)
    trajectories = len(load_dataset(mini).trajectories)
    assert len(keys) == len(set(keys)) == trajectories * 2
    assert len(list((out / "logs").glob("*.jsonl"))) == trajectories * 2
    assert holder_of(out) is None  # released at the end


@pytest.mark.slow
def test_a_second_replay_on_the_same_folder_stops_and_the_first_completes(
    tmp_path: Path, reaped: list[subprocess.Popen[bytes]]
) -> None:
    root = tmp_path / "ds"
    recorded = load_dataset(MINI).trajectories
    build_dataset(root, [t for t in recorded.values() if t.task_id == FS_TASK], (FS_TASK,))
    (root / "tasks" / FS_TASK / "verify.py").write_text("import time\ntime.sleep(10)\n")
    task = load_dataset(root).tasks[FS_TASK]
    write_task(root, task.model_copy(update={"verifier": VerifierRef(timeout_seconds=120)}))
    out = tmp_path / "out"
    command = ["replay", str(root), "--output", str(out), "--jobs", "1"]
    first = start_agentjudge(*command, log=tmp_path / "first.log")
    reaped.append(first)
    wait_for(holds(out, first), "the first replay to take its folder")
    second = agentjudge(*command)
    assert second.returncode == 2, second.stdout + second.stderr
    assert f"{out}: this results folder is in use by another process: pid {first.pid}" in (
        second.stdout
    )
    first.wait(timeout=600)
    log = (tmp_path / "first.log").read_text()
    # No job crashed ("<label> crashed: <error>", storage.jobs) and nothing raised.
    assert not re.search(r"\S crashed: ", log), log
    assert "Traceback" not in log, log
    lines = (out / REPORT_FILE).read_text().splitlines()
    replayed = [json.loads(line)["trajectory_id"] for line in lines]
    assert sorted(replayed) == sorted(t.id for t in recorded.values() if t.task_id == FS_TASK)
    assert {json.loads(line)["verdict"] for line in lines} == {"faithful"}


# --- torn verdicts.jsonl ------------------------------------------------------------------------


@pytest.mark.slow
def test_a_torn_verdicts_file_is_repaired_and_every_key_lands_once(
    tmp_path: Path, mini: Path, mini_replay: Path
) -> None:
    out = tmp_path / "out"
    command = ["judge", str(mini), "--model", "mock/coin", "--mode", "llm", "--runs", "2"]
    command += ["--output", str(out), "--replay-output", str(mini_replay)]
    first = agentjudge(*command)
    assert first.returncode == 0, first.stdout + first.stderr
    before = verdict_keys(out)
    verdicts = out / VERDICTS_FILE
    whole = verdicts.read_bytes()
    torn = whole[: len(whole) - 40]  # a kill in the middle of the last record
    verdicts.write_bytes(torn)
    again = agentjudge(*command)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "1 judge run(s) to make" in again.stdout
    keys = verdict_keys(out)  # every line parses: nothing was glued onto the fragment
    assert sorted(keys) == sorted(before)
    assert len(keys) == len(set(keys))
    fragment = torn[torn.rindex(b"\n") + 1 :]
    quarantine = out / (VERDICTS_FILE + QUARANTINE_SUFFIX)
    assert quarantine.read_bytes() == fragment + b"\n"


# --- run records and leftovers whatever TMPDIR is -----------------------------------------------

LIVE_RUN = """\
import asyncio, json, sys
from pathlib import Path
from dataset.models import DirectoryTreeState, Task
from sandboxes.filesystem.local import LocalFilesystemProvider
from sandboxes.postgres.embedded import EmbeddedPostgresCluster
from sandboxes.runs import current_run

async def main() -> None:
    cluster = EmbeddedPostgresCluster()
    await cluster.start()
    task = Task(id="t", domain="ds", subdomain="filesystem", instruction="-",
                initial_state=DirectoryTreeState(path="initial"))
    sandbox = await LocalFilesystemProvider().create(task, Path(sys.argv[1]))
    print(json.dumps({"run": current_run().run_id, "postmaster": cluster.pid,
                      "data": str(cluster.data_directory), "tree": sandbox.tree.root}), flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


def test_gc_with_another_tmpdir_spares_a_live_run_and_collects_it_once_killed(
    tmp_path: Path, reaped: list[subprocess.Popen[bytes]]
) -> None:
    shell_a, shell_b = tmp_path / "tmp-a", tmp_path / "tmp-b"
    shell_a.mkdir()
    shell_b.mkdir()
    (tmp_path / "task" / "initial").mkdir(parents=True)
    (tmp_path / "task" / "initial" / "a.txt").write_text("a\n")
    run = subprocess.Popen(
        [sys.executable, "-c", LIVE_RUN, str(tmp_path / "task")],
        stdout=subprocess.PIPE,
        env=_environment(TMPDIR=str(shell_a), **{WORKDIR_ENV: str(shell_a / "work")}),
    )
    reaped.append(run)
    assert run.stdout is not None
    made = json.loads(run.stdout.readline())
    postmaster, data, tree = made["postmaster"], Path(made["data"]), Path(made["tree"])
    assert tree.is_relative_to(shell_a / "work")
    other_shell = {"TMPDIR": str(shell_b), WORKDIR_ENV: str(shell_b / "work")}

    spared = agentjudge("sandboxes", "gc", **other_shell)
    assert spared.returncode == 0, spared.stdout + spared.stderr
    assert made["run"] not in spared.stdout
    assert process_alive(postmaster)
    assert (data / "PG_VERSION").exists()
    assert (tree / "a.txt").read_text() == "a\n"

    os.kill(run.pid, signal.SIGKILL)
    run.wait()
    collected = agentjudge("sandboxes", "gc", **other_shell)
    assert collected.returncode == 0, collected.stdout + collected.stderr
    assert f"embedded postgres {data} (dead run {made['run']})" in collected.stdout
    assert str(tree.parent) in collected.stdout  # the run's scratch directory in shell A's space
    wait_for(lambda: not process_alive(postmaster), "the orphaned postmaster to stop", 30)
    assert not data.exists()
    assert not tree.exists()


# --- hostile dataset files ----------------------------------------------------------------------


def test_a_name_that_is_not_utf8_fails_its_trajectory_once_naming_task_and_file(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ds"
    recorded = load_dataset(MINI).trajectories
    fs_runs = sorted(t.id for t in recorded.values() if t.task_id == FS_TASK)
    build_dataset(root, [recorded[name] for name in fs_runs], (FS_TASK,))
    folder = os.fsencode(root / "tasks" / FS_TASK / "initial" / "notes")
    with open(os.path.join(folder, b"r\xe9union.txt"), "wb") as handle:
        handle.write(b"written on a latin-1 machine")
    out = tmp_path / "out"
    first = agentjudge("replay", str(root), "--output", str(out))
    assert first.returncode == 1, first.stdout + first.stderr
    assert f"task {FS_TASK}" in first.stdout
    assert repr(b"notes/r\xe9union.txt") in first.stdout
    assert "Traceback" not in first.stdout + first.stderr
    again = agentjudge("replay", str(root), "--output", str(out))
    assert f"{len(fs_runs)} report(s) reused" in again.stdout
    lines = (out / REPORT_FILE).read_text().splitlines()
    reports = [json.loads(line) for line in lines]
    assert sorted(report["trajectory_id"] for report in reports) == fs_runs  # once each
    assert {report["verdict"] for report in reports} == {"failed"}


@pytest.mark.parametrize("name", ["verify.py", "seed.sql"])
def test_a_verifier_or_seed_linked_outside_its_task_is_refused_and_never_run(
    tmp_path: Path, name: str
) -> None:
    root = tmp_path / "ds"
    recorded = load_dataset(MINI).trajectories
    build_dataset(root, [t for t in recorded.values() if t.task_id == PG_TASK], (PG_TASK,))
    marker = tmp_path / "ran"
    outside = tmp_path / "elsewhere" / name
    outside.parent.mkdir()
    if name == "verify.py":
        outside.write_text(f"open({str(marker)!r}, 'w').write('verifier ran')\n")
    else:
        original = (root / "tasks" / PG_TASK / name).read_text()
        outside.write_text(f"\\! touch {marker}\n{original}")
    linked = root / "tasks" / PG_TASK / name
    linked.unlink()
    linked.symlink_to(outside)
    expected = f"tasks/{PG_TASK}/{name}, which is a symbolic link to {outside}, outside"

    validated = agentjudge("datasets", "validate", str(root))
    assert validated.returncode == 1
    assert expected in validated.stdout
    replayed = agentjudge("replay", str(root), "--output", str(tmp_path / "out"))
    assert replayed.returncode == 1
    assert expected in replayed.stdout
    assert not marker.exists()


# --- missing dataset paths ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["judge", "{missing}"],
        ["judge", "{missing}", "--model", "mock/pass"],
        ["replay", "{missing}"],
        ["datasets", "validate", "{missing}"],
        ["serve", "trajectory", "some-id", "--dataset", "{missing}"],
    ],
    ids=["judge", "judge with a model", "replay", "validate", "serve"],
)
def test_a_missing_dataset_is_exit_code_2_naming_the_path(
    tmp_path: Path, command: list[str]
) -> None:
    missing = tmp_path / "does-not-exist"
    result = agentjudge(*(part.format(missing=missing) for part in command))
    assert result.returncode == 2, result.stdout + result.stderr
    said = result.stdout + result.stderr
    assert f"error: {missing}: no such dataset folder (the path does not exist)" in said
    assert "Traceback" not in said
    assert list(tmp_path.iterdir()) == []
