"""The file operations a filesystem sandbox offers, whatever its backend.

Paths given to a ``FileTree`` are *relative* POSIX paths inside the sandbox ("" is the root, no
``..``, no leading ``/``); tool layers (MCP servers, replay) translate and police the absolute
paths an agent used before calling in. Backends still refuse any path that is not relative and
normal, and any symlink whose target leaves the tree, so a bug upstream cannot escape. A regular
file with hard links is read only when all of its links are names inside the tree (or, for a
clone, inside the snapshot it shares files with): a link planted to a file outside would otherwise
leak that file's content.

Writes never modify an existing file in place: ``write_bytes`` writes a temporary file and renames
it over the target. Clones of a frozen tree rely on this (they share unchanged files with it).

Reads are bounded: ``read_head`` and ``read_tail`` read at most a given number of bytes from one
end of a file (and may stop early once they hold enough lines), and only regular files are read (a
FIFO would block, a device would never end). ``read_bytes`` reads a whole file and is for callers
that trust its size; the tools of ``mcp_servers.filesystem`` use the bounded reads.

A writable tree may carry a size *quota* (``limit_size``): ``usage`` is kept up to date by every
write, so a check costs nothing, and a write that would add bytes past the quota raises
``QuotaExceededError`` before anything is written. Usage counts what the tree holds, the way a
disk stores it: a regular file its size rounded up to whole ``BLOCK_BYTES`` blocks, any other
entry one block (so empty files and directories are not free).

Also owns the checks every backend applies to a task's initial tree before copying it in
(``initial_tree_source``, ``check_initial_entry``): the tree must be a folder inside the task's
folder, and each entry a file, folder or symlink (copied as a link, never followed) whose name is
UTF-8. A name that is not UTF-8 could not be shown to an agent or judge, nor recorded in JSON; a
device or FIFO could hang or leak the copy. Either fails the sandbox's creation, naming the task
and the entry.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat as stat_module
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from dataset.assets import state_file, state_file_folder
from sandboxes.base import SandboxError


class TreePathError(ValueError):
    """A path is not a normal relative path inside the tree, or resolves outside it."""


class ReadOnlyTreeError(PermissionError):
    """A write was attempted on a read-only view."""


class SpecialFileError(OSError):
    """A read was asked of something that is not a regular file (a FIFO, a device, a socket)."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", path)
        self.kind = kind


BLOCK_BYTES = 4096
"""The unit a quota counts in: a file costs its size rounded up to whole blocks, any other
entry (directory, symlink) one block."""


def charge(kind: str, size: int) -> int:
    """What one entry of ``kind`` (``FileStat.kind``) and ``size`` counts against a quota."""
    if kind == "file":
        return -(-size // BLOCK_BYTES) * BLOCK_BYTES
    return BLOCK_BYTES


class QuotaExceededError(OSError):
    """A write would take a tree past its size quota; nothing was written."""

    def __init__(self, usage: int, quota: int, adding: int, path: str) -> None:
        super().__init__(
            errno.EDQUOT,
            f"quota reached: the sandbox holds {usage} of {quota} bytes, and writing {path!r}"
            f" would add {adding} more",
        )
        self.usage = usage
        self.quota = quota
        self.adding = adding

    def __str__(self) -> str:
        return str(self.args[1])


@dataclass(frozen=True)
class FilePart:
    """Bytes read from one end of a regular file."""

    data: bytes
    start: int
    """Offset in the file of ``data[0]`` (0 for a read from the start)."""
    size: int
    """The file's size when it was opened."""

    @property
    def whole(self) -> bool:
        """Whether ``data`` is the entire file."""
        return self.start == 0 and len(self.data) >= self.size


class FileStat(BaseModel):
    """What ``lstat`` says about one entry of the tree."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    path: str
    """Relative POSIX path of the entry ("" for the root)."""
    kind: str
    """``file``, ``directory``, ``symlink`` or ``other``."""
    size: int
    """Size in bytes (of the link itself for a symlink)."""
    mode: int
    """Permission bits (``st_mode & 0o7777``)."""
    modified: float
    """Modification time, seconds since the epoch."""
    accessed: float
    """Access time, seconds since the epoch."""
    changed: float
    """Inode change time (``st_ctime``), seconds since the epoch."""
    created: float | None
    """Birth time when the platform reports one, else None."""

    @property
    def name(self) -> str:
        """The last path component ("" for the root)."""
        return posixpath.basename(self.path)


def check_relative(path: str) -> str:
    """Return ``path`` if it is a normal relative POSIX path inside the tree, else raise."""
    if "\x00" in path:
        raise TreePathError("path contains a null byte")
    if path == "..":
        raise TreePathError("path leaves the tree: '..'")
    if path in ("", "."):
        return ""
    if path.startswith("/") or posixpath.normpath(path) != path or path.startswith("../"):
        raise TreePathError(f"not a normal relative path: {path!r}")
    return path


class FileTree(ABC):
    """Async file operations on one sandbox's tree."""

    root: str
    """The absolute path of the tree's root as the sandbox's users see it (host or container)."""

    read_only: bool
    """True when every write raises ``ReadOnlyTreeError``."""

    quota: int | None = None
    """The most bytes (as ``charge`` counts them) the tree may hold; None: unbounded."""

    usage: int = 0
    """What the tree holds, as ``charge`` counts it (kept up to date when ``quota`` is set)."""

    def limit_size(self, quota: int | None, usage: int) -> None:
        """Give the tree a quota, starting from ``usage`` (what ``measure`` returned)."""
        self.quota = quota
        self.usage = usage

    def check_quota(self, adding: int, path: str) -> None:
        """Raise ``QuotaExceededError`` when adding ``adding`` bytes would pass the quota.

        Writes that add nothing (or free space) always pass, even on a tree already above it.
        """
        if self.quota is not None and adding > 0 and self.usage + adding > self.quota:
            raise QuotaExceededError(self.usage, self.quota, adding, path)

    async def measure(self) -> int:
        """What the whole tree holds, as a quota counts it (one walk)."""
        return sum(charge(entry.kind, entry.size) for entry in await self.walk())

    @abstractmethod
    async def read_bytes(self, path: str) -> bytes:
        """The whole content of a regular file (symlinks inside the tree are followed).

        Unbounded: for callers that know the file's size. Raises ``TreePathError`` for a file
        that is also linked from outside the tree, ``SpecialFileError`` for anything but a
        regular file.
        """

    @abstractmethod
    async def read_head(self, path: str, limit: int, *, lines: int | None = None) -> FilePart:
        """At most ``limit`` bytes from the start of a regular file.

        With ``lines``, the read may stop as soon as what it holds contains that many newlines
        (it may hold more bytes than they need). Checks as ``read_bytes``.
        """

    @abstractmethod
    async def read_tail(self, path: str, limit: int, *, lines: int | None = None) -> FilePart:
        """At most the last ``limit`` bytes of a regular file.

        With ``lines``, the read may stop as soon as what it holds contains that many newlines
        (it may hold more bytes than they need). Checks as ``read_bytes``.
        """

    @abstractmethod
    async def write_bytes(self, path: str, data: bytes) -> None:
        """Create or replace a file atomically (temporary file + rename). The parent must exist."""

    @abstractmethod
    async def make_directory(self, path: str) -> None:
        """Create a directory and its missing parents; no error when it already exists."""

    @abstractmethod
    async def move(self, source: str, destination: str) -> None:
        """Rename a file or directory; fails when the destination exists."""

    @abstractmethod
    async def stat(self, path: str) -> FileStat:
        """``lstat`` of one entry; ``FileNotFoundError`` when it does not exist."""

    @abstractmethod
    async def list_directory(self, path: str) -> list[FileStat]:
        """The entries directly inside a directory, sorted by name."""

    @abstractmethod
    async def walk(self, path: str = "") -> list[FileStat]:
        """Every entry below ``path`` (not ``path`` itself), depth first, sorted by path.

        Symlinked directories are listed but not descended into.
        """

    @abstractmethod
    async def resolve(self, path: str) -> str:
        """The relative path ``path`` resolves to once symlinks are followed.

        Raises ``TreePathError`` when the resolution leaves the tree. A path that does not exist
        resolves as far as it can (its missing tail is appended unchanged).
        """

    @abstractmethod
    async def export(self, destination: Path) -> None:
        """Copy the whole tree into the host directory ``destination`` (which must not exist),
        preserving modification times. Used to run verifiers on any backend."""


def initial_tree_source(task_id: str, task_dir: Path, relative: str) -> Path:
    """The folder a task's initial tree is copied from: ``relative`` to ``task_dir`` (or, as
    ``dataset:assets/...``, to the dataset), which must be a folder and, symlinks followed,
    inside the task's folder (the dataset's ``assets/``); raise ``SandboxError`` otherwise."""
    source, allowed = state_file(task_dir, relative), state_file_folder(task_dir, relative)
    real, folder = os.path.realpath(source), os.path.realpath(allowed)
    if real != folder and not real.startswith(folder + os.sep):
        where = "the task folder" if allowed == task_dir else "the dataset's assets/ folder"
        raise SandboxError(
            f"task {task_id}: initial tree {source} leads outside {where} (to {real})"
        )
    if not source.is_dir():
        raise SandboxError(f"task {task_id}: initial tree {source} is not a directory")
    return source


def check_initial_entry(task_id: str, source: Path, path: str) -> None:
    """Refuse an entry of a task's initial tree (``path``, on the host, below ``source``) whose
    name is not UTF-8 or which is not a regular file, folder or symlink.

    Raises ``SandboxError`` naming the task and the entry (its raw bytes, for a bad name).
    """
    name = os.path.basename(path)
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raw = os.fsencode(os.path.relpath(path, source))
        raise SandboxError(
            f"task {task_id}: the initial tree holds a file name that is not UTF-8: {raw!r} "
            f"(in {source}); such a name cannot be replayed, shown or recorded: rename it"
        ) from None
    mode = os.lstat(path).st_mode
    if not (stat_module.S_ISREG(mode) or stat_module.S_ISDIR(mode) or stat_module.S_ISLNK(mode)):
        raise SandboxError(
            f"task {task_id}: the initial tree holds {os.path.relpath(path, source)!r}, which is "
            "not a file, folder or symbolic link (a device, FIFO or socket)"
        )
