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
"""

from __future__ import annotations

import posixpath
from abc import ABC, abstractmethod
from pathlib import Path

from pydantic import BaseModel, ConfigDict


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
