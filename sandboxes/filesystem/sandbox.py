"""The filesystem kind of sandbox: a directory tree reached through a ``FileTree``."""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar, TypeVar

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


SandboxT = TypeVar("SandboxT", bound=FilesystemSandbox)
SnapshotT = TypeVar("SnapshotT", bound=FilesystemSnapshot)


class FilesystemProvider(SandboxProvider):
    """Creates filesystem sandboxes on one backend, and keeps the live ones for ``aclose``."""

    kind: ClassVar[str] = "filesystem"

    def __init__(self) -> None:
        self._sandboxes: dict[str, FilesystemSandbox] = {}
        self._snapshots: dict[str, FilesystemSnapshot] = {}

    def track(self, sandbox: SandboxT) -> SandboxT:
        """Remember a live sandbox so ``aclose`` can remove it."""
        self._sandboxes[sandbox.name] = sandbox
        return sandbox

    def forget(self, sandbox: FilesystemSandbox) -> None:
        """Drop a destroyed or frozen sandbox from the live set."""
        self._sandboxes.pop(sandbox.name, None)

    def track_snapshot(self, snapshot: SnapshotT) -> SnapshotT:
        """Remember a live snapshot so ``aclose`` can remove it."""
        self._snapshots[snapshot.name] = snapshot
        return snapshot

    def forget_snapshot(self, snapshot: FilesystemSnapshot) -> None:
        """Drop a destroyed snapshot from the live set."""
        self._snapshots.pop(snapshot.name, None)

    def live(self) -> list[FilesystemSandbox | FilesystemSnapshot]:
        """Everything still to destroy, clones before the snapshots they may depend on."""
        return [*self._sandboxes.values(), *self._snapshots.values()]
