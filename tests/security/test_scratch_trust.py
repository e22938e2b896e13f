"""``sandboxes gc`` cannot be steered into killing processes, through the real command line.

A local user who makes the scratch space first (``/dev/shm`` is world-writable) could plant run
notes naming other processes: the runtime refuses a scratch space it does not own alone. And a
note, even in a space of its own, only leads to a signal when the process runs as the runtime's
user and started when the note says.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import psutil
import pytest

from sandboxes.runs import WORKDIR_ENV, process_alive
from tests.security.test_results_folders import agentjudge

NOBODY = 65534
DEAD_RUN = "aj_zz0000dead"


def _plant_note(scratch: Path, pid: int) -> Path:
    """A dead run's note in ``scratch`` saying it started ``pid``, with the right start time."""
    notes = scratch / DEAD_RUN / "processes"
    notes.mkdir(parents=True)
    note = notes / str(pid)
    note.write_text(str(psutil.Process(pid).create_time()))
    return note


@pytest.mark.skipif(os.geteuid() != 0, reason="plants a folder owned by another user")
def test_a_scratch_space_another_user_made_is_refused_and_its_notes_never_acted_on(
    tmp_path: Path, reaped: list[subprocess.Popen[bytes]]
) -> None:
    victim = subprocess.Popen(["sleep", "600"])
    reaped.append(victim)
    scratch = tmp_path / "agentjudge"
    scratch.mkdir()
    _plant_note(scratch, victim.pid)
    for folder, _, files in os.walk(scratch):
        os.chown(folder, NOBODY, NOBODY)
        for name in files:
            os.chown(os.path.join(folder, name), NOBODY, NOBODY)
    scratch.chmod(0o777)

    result = agentjudge("sandboxes", "gc", **{WORKDIR_ENV: str(scratch)})
    said = result.stdout + result.stderr
    assert result.returncode == 2, said
    assert f"error: {scratch} (the scratch space) belongs to user {NOBODY}" in said
    assert process_alive(victim.pid)


@pytest.mark.skipif(os.geteuid() != 0, reason="starts a process as another user")
def test_a_note_naming_another_users_process_is_not_signalled(
    tmp_path: Path, reaped: list[subprocess.Popen[bytes]]
) -> None:
    victim = subprocess.Popen(["sleep", "600"], user=NOBODY, group=NOBODY)
    reaped.append(victim)
    scratch = tmp_path / "agentjudge"
    scratch.mkdir()
    _plant_note(scratch, victim.pid)

    result = agentjudge("sandboxes", "gc", **{WORKDIR_ENV: str(scratch)})
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"process {victim.pid}" not in result.stdout
    assert process_alive(victim.pid)
