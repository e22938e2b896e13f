"""The results-folder lock: one process at a time, named when busy, gone with its holder."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from storage.locks import (
    LOCK_FILE,
    FolderBusyError,
    ResultsFolderError,
    holder_of,
    lock_folder,
)

HOLD = """\
import sys, time
from pathlib import Path
from storage.locks import lock_folder
lock = lock_folder(Path(sys.argv[1]))
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
"""

TRY = """\
import sys
from pathlib import Path
from storage.locks import FolderBusyError, lock_folder
try:
    lock_folder(Path(sys.argv[1]))
except FolderBusyError as error:
    print(error)
    sys.exit(3)
print("got it")
"""


def _hold(folder: Path, seconds: float = 60) -> subprocess.Popen[str]:
    """A process that holds ``folder`` for ``seconds``, once it has said so."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "locked"
    return child


def _try(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", TRY, str(folder)],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=60,
    )


def test_a_second_process_is_refused_with_the_holder_named(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    holder = _hold(folder)
    try:
        with pytest.raises(FolderBusyError) as raised:
            lock_folder(folder)
        message = str(raised.value)
        assert str(folder) in message
        assert f"pid {holder.pid}" in message
        assert "-c" in message  # the holder's command line
        assert raised.value.holder is not None
        assert raised.value.holder.pid == holder.pid
    finally:
        holder.kill()
        holder.wait()


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    holder = _hold(folder)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    with lock_folder(folder):  # the kernel dropped the lock with the process
        assert holder_of(folder) is not None
        assert holder_of(folder).pid == os.getpid()  # type: ignore[union-attr]
    assert holder_of(folder) is None  # released: the file says nobody


def test_the_lock_is_reentrant_within_a_process_and_freed_by_the_last_release(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "results"
    outer = lock_folder(folder)
    inner = lock_folder(folder)
    inner.release()
    inner.release()  # idempotent: must not drop the outer hold
    refused = _try(folder)
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert f"pid {os.getpid()}" in refused.stdout
    outer.release()
    assert _try(folder).stdout.strip() == "got it"


def test_waiting_blocks_until_the_holder_ends_and_says_whom_it_waits_for(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "results"
    holder = _hold(folder, seconds=1.5)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="storage.locks"), lock_folder(folder, wait=True):
        waited = time.monotonic() - started
        assert holder.poll() is not None  # it got the folder only once the holder was gone
    holder.wait()
    assert waited > 0.5
    assert f"waiting for pid {holder.pid}" in caplog.text
    assert str(folder) in caplog.text


def test_a_child_process_does_not_inherit_the_lock(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    lock = lock_folder(folder)
    # A long-lived helper (a verifier, a database server) started while the lock is held,
    # even one told to keep every descriptor.
    helper = subprocess.Popen(["sleep", "30"], close_fds=False)
    try:
        lock.release()
        assert _try(folder).stdout.strip() == "got it"
    finally:
        helper.kill()
        helper.wait()


def test_concurrent_threads_of_one_process_share_the_hold(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    errors: list[BaseException] = []

    def take() -> None:
        try:
            lock_folder(folder).release()
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    with lock_folder(folder):
        threads = [threading.Thread(target=take) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []


def test_a_file_where_the_folder_should_be_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "results"
    path.write_text("not a folder")
    with pytest.raises(ResultsFolderError, match=f"{path}: is not a folder"):
        lock_folder(path)


def test_a_lock_file_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    (folder / LOCK_FILE).symlink_to(target)
    with pytest.raises(ResultsFolderError, match="lock file"):
        lock_folder(folder)
    assert target.read_text() == "keep me"
