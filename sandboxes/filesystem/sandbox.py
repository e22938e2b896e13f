"""The filesystem kind of sandbox: a directory tree reached through a ``FileTree``."""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

from sandboxes.base import Sandbox, SandboxProvider, Snapshot
from sandboxes.filesystem.tree import FileTree


class FilesystemSandbox(Sandbox):
    """A directory tree; ``tree`` does the file operations, ``tree.root`` is its visible root."""

    kind: ClassVar[str] = "filesystem"
    tree: FileTree
    """The tree's file operations."""

    @property
    def root(self) -> str:
        """The absolute root path users of this sandbox see (substitutes ``${SANDBOX_ROOT}``)."""
        return self.tree.root

    @abstractmethod
    async def freeze(self) -> FilesystemSnapshot:
        """Freeze the tree (see ``Sandbox.freeze``)."""


class FilesystemSnapshot(Snapshot):
    """A frozen directory tree."""

    kind: ClassVar[str] = "filesystem"

    @abstractmethod
    async def clone(self, *, writable: bool = True) -> FilesystemSandbox:
        """A private copy or the shared read-only view (see ``Snapshot.clone``)."""


class FilesystemProvider(SandboxProvider):
    """Creates filesystem sandboxes on one backend."""

    kind: ClassVar[str] = "filesystem"
