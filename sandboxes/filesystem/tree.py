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

Also owns the checks every backend applies to a task's initial tree before copying it in
(``initial_tree_source``, ``check_initial_entry``): the tree must be a folder inside the task's
folder, and each entry a file, folder or symlink (copied as a link, never followed) whose name is
UTF-8. A name that is not UTF-8 could not be shown to an agent or judge, nor recorded in JSON; a
device or FIFO could hang or leak the copy. Either fails the sandbox's creation, naming the task
and the entry.
"""

from __future__ import annotations

import os
import posixpath
import stat as stat_module
from abc import ABC, abstractmethod
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from sandboxes.base import SandboxError


class TreePathError(ValueError):
    """A path is not a normal relative path inside the tree, or resolves outside it."""


class ReadOnlyTreeError(PermissionError):
    """A write was attempted on a read-only view."""


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

    @abstractmethod
    async def read_bytes(self, path: str) -> bytes:
        """The content of a regular file (symlinks inside the tree are followed).

        Raises ``TreePathError`` for a file that is also linked from outside the tree.
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
    """The folder a task's initial tree is copied from: ``task_dir / relative``, which must be a
    folder and, symlinks followed, inside ``task_dir``; raise ``SandboxError`` otherwise."""
    source = task_dir / relative
    real, folder = os.path.realpath(source), os.path.realpath(task_dir)
    if real != folder and not real.startswith(folder + os.sep):
        raise SandboxError(
            f"task {task_id}: initial tree {source} leads outside the task folder (to {real})"
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
