"""Single-writer results folders: one process at a time may write a results folder.

Owns ``lock_folder``: an exclusive ``flock`` on ``<folder>/.agentjudge.lock``, held for as long as
a process writes the folder (replay reports, judge verdicts, an evaluation's baselines and
report). The kernel drops the lock when the holder exits, however it exits (``kill -9``
included), so there is never a stale lock to clear by hand. The lock file also says who holds it
(pid, command line, host, since when), so that a second process can name the holder when it
stops, or say whom it waits for. Within one process the lock is re-entrant: an evaluation holding
its folder may open the same folder's results file again.

The lock file is never deleted: removing it while another process waits on it would let a third
process lock a new file under the same name and write alongside the second.

Must not know what the folder holds; callers decide which folder is a results folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shlex
import socket
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = [
    "LOCK_FILE",
    "FolderBusyError",
    "FolderLock",
    "LockHolder",
    "ResultsFolderError",
    "holder_of",
    "lock_folder",
]

LOCK_FILE = ".agentjudge.lock"
"""The lock file inside every results folder a process writes."""

COMMAND_CHARACTERS = 300
"""A holder's command line is cut to this many characters in the lock file."""

_log = logging.getLogger(__name__)


class LockHolder(BaseModel):
    """Who holds a results folder: written into the lock file by the process that locked it."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    pid: int
    """The holder's process id."""
    command: str
    """Its command line (cut to ``COMMAND_CHARACTERS``)."""
    hostname: str
    """The machine it runs on."""
    since: float
    """When it took the lock (seconds since the epoch)."""

    def describe(self) -> str:
        """``pid 123 (agentjudge judge ds) on host, since 12:00:03``."""
        started = datetime.fromtimestamp(self.since, UTC).astimezone().strftime("%H:%M:%S")
        where = "" if self.hostname == socket.gethostname() else f" on {self.hostname}"
        return f"pid {self.pid} ({self.command}){where}, since {started}"


class ResultsFolderError(RuntimeError):
    """A results folder cannot be used: it is a file, cannot be created, or is busy; the
    message names the folder."""


class FolderBusyError(ResultsFolderError):
    """Another process holds the results folder; the message names the folder and the holder."""

    def __init__(self, folder: Path, holder: LockHolder | None) -> None:
        self.folder = folder
        self.holder = holder
        who = holder.describe() if holder is not None else "a process that did not say who it is"
        super().__init__(
            f"{folder}: this results folder is in use by another process: {who}. "
            "One process at a time may write a results folder"
        )


@dataclass
class _Held:
    """A folder this process has locked, and how many ``FolderLock`` objects share the lock."""

    descriptor: int
    count: int


_held: dict[Path, _Held] = {}
_held_guard = threading.RLock()
"""Guards ``_held``. Re-entrant: a hold released by the garbage collector (an unclosed
``ResumableJobs``) may run inside ``lock_folder`` on the same thread."""


class FolderLock:
    """This process's hold on a results folder; ``release`` (or leaving the ``with`` block) lets
    it go once every holder in the process has released it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._released = False

    def release(self) -> None:
        """Let go of this hold (idempotent)."""
        if self._released:
            return
        self._released = True
        with _held_guard:
            held = _held.get(self.folder)
            if held is None:
                return
            held.count -= 1
            if held.count > 0:
                return
            del _held[self.folder]
            with contextlib.suppress(OSError):
                os.ftruncate(held.descriptor, 0)  # nobody holds it now
            os.close(held.descriptor)  # closing the last descriptor drops the flock

    def __enter__(self) -> FolderLock:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def lock_folder(folder: Path, *, wait: bool = False) -> FolderLock:
    """Take the results folder ``folder`` (created if missing) for this process.

    When another process holds it, raise ``FolderBusyError`` naming the holder, or with
    ``wait=True`` log who holds it and block until it is released. Re-entrant within a process.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ResultsFolderError(f"{folder}: is not a folder, so it cannot hold results") from None
    except OSError as error:
        raise ResultsFolderError(f"{folder}: cannot be created: {error.strerror}") from error
    key = folder.resolve()
    with _held_guard:
        held = _held.get(key)
        if held is not None:
            held.count += 1
            return FolderLock(key)
        descriptor = _open_lock_file(key / LOCK_FILE)
        try:
            _acquire(descriptor, folder, wait=wait)
            _write_holder(descriptor)
        except BaseException:
            os.close(descriptor)
            raise
        _held[key] = _Held(descriptor, 1)
        return FolderLock(key)


def holder_of(folder: Path) -> LockHolder | None:
    """Who the lock file of ``folder`` says holds it (None when nobody wrote one)."""
    try:
        text = (folder / LOCK_FILE).read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None
    try:
        return LockHolder.model_validate_json(text) if text.strip() else None
    except ValidationError:
        return None


def _open_lock_file(path: Path) -> int:
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
    try:
        # Close-on-exec matters: a verifier or a database server started while the lock is held
        # must not inherit it and keep the folder locked after this process is gone.
        return os.open(path, flags, 0o644)
    except OSError as error:
        raise ResultsFolderError(
            f"{path}: cannot open the results folder's lock file: {error.strerror}"
        ) from error


def _acquire(descriptor: int, folder: Path, *, wait: bool) -> None:
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        holder = _read_holder(descriptor)
    if not wait:
        raise FolderBusyError(folder, holder)
    who = holder.describe() if holder is not None else "another process"
    _log.warning("%s: waiting for %s to finish with this results folder", folder, who)
    fcntl.flock(descriptor, fcntl.LOCK_EX)


def _read_holder(descriptor: int) -> LockHolder | None:
    # The holder writes its record right after locking; give it a moment if it is mid-write.
    for _ in range(5):
        text = os.pread(descriptor, 4096, 0)
        if text.strip():
            try:
                return LockHolder.model_validate_json(text)
            except ValidationError:
                pass
        time.sleep(0.02)
    return None


def _write_holder(descriptor: int) -> None:
    command = shlex.join(getattr(sys, "orig_argv", sys.argv))
    if len(command) > COMMAND_CHARACTERS:
        command = command[: COMMAND_CHARACTERS - 3] + "..."
    holder = LockHolder(
        pid=os.getpid(), command=command, hostname=socket.gethostname(), since=time.time()
    )
    data = holder.model_dump_json().encode("utf-8")
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, data, 0)
