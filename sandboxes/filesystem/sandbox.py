"""The filesystem kind of sandbox: a directory tree reached through a ``FileTree``.

Owns what every backend shares: the sandbox, snapshot and provider interfaces, and the size quota
of writable clones (``CLONE_QUOTA_BYTES`` by default, ``quota_bytes`` on the provider), which a
snapshot measures once and hands to each clone's tree (``FileTree.limit_size``).
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar, TypeVar

from sandboxes.base import Sandbox, SandboxProvider, Snapshot
from sandboxes.filesystem.tree import FileTree

CLONE_QUOTA_BYTES = 512 * 1024 * 1024
"""Default size quota of a writable clone: what its tree may hold in all (the snapshot's content
included), counted as ``sandboxes.filesystem.tree.charge`` does."""


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
    _usage: int | None = None

    async def limit_clone(self, tree: FileTree, quota: int | None) -> None:
        """Give a new writable clone's ``tree`` the quota, starting from the snapshot's usage
        (measured on the first clone, the one walk; the snapshot never changes)."""
        if quota is None:
            return
        if self._usage is None:
            self._usage = await tree.measure()
        tree.limit_size(quota, self._usage)

    @abstractmethod
    async def clone(self, *, writable: bool = True) -> FilesystemSandbox:
        """A private copy or the shared read-only view (see ``Snapshot.clone``)."""


SandboxT = TypeVar("SandboxT", bound=FilesystemSandbox)
SnapshotT = TypeVar("SnapshotT", bound=FilesystemSnapshot)


class FilesystemProvider(SandboxProvider):
    """Creates filesystem sandboxes on one backend, and keeps the live ones for ``aclose``."""

    kind: ClassVar[str] = "filesystem"

    def __init__(self, *, quota_bytes: int | None = CLONE_QUOTA_BYTES) -> None:
        """``quota_bytes``: the size quota of each writable clone (None: none)."""
        if quota_bytes is not None and quota_bytes <= 0:
            raise ValueError(f"quota_bytes must be positive, not {quota_bytes}")
        self.quota_bytes = quota_bytes
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
