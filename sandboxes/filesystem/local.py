"""The ``local`` filesystem backend: a private directory under the run's scratch directory.

Creation copies the task's initial tree (``shutil.copytree`` with ``copy2``: contents, modes and
modification times; symlinks stay symlinks). Freezing renames the directory into the snapshot;
nothing writes to a snapshot afterwards. A writable clone is, by default, an *overlay mount*: the
snapshot is the read-only lower layer and the kernel copies a file up on its first write, so the
clone costs O(1) and any writer is safe. Where mounting is not allowed (not root), the clone is a
*hard-link farm* built on its first write (until then it reads the snapshot: ``LazyCloneTree``),
which is safe because ``LocalFileTree`` never writes an existing inode: writes go to a temporary
file renamed over the target. A verifier (or anything else that may write in place) on such a
clone gets the farm built first. The read-only view is the snapshot's own directory.

Reads open the file without blocking (a FIFO is refused, not waited on) and read in steps, from
the end for ``read_tail``; a read of more than ``INLINE_READ_BYTES`` runs in a worker thread that
owns the file descriptor. Writable clones carry the provider's quota: the snapshot is measured
once (a walk, on its first writable clone), and each write or new directory adds its charge under
a lock, before it touches the disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import os
import shutil
import stat as stat_module
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from dataset.models import DirectoryTreeState, EmptyState, Task
from sandboxes.base import SandboxError
from sandboxes.filesystem.overlay import mount_overlay, mounts_below, overlay_supported, unmount
from sandboxes.filesystem.sandbox import (
    CLONE_QUOTA_BYTES,
    FilesystemProvider,
    FilesystemSandbox,
    FilesystemSnapshot,
)
from sandboxes.filesystem.tree import (
    BLOCK_BYTES,
    FilePart,
    FileStat,
    FileTree,
    ReadOnlyTreeError,
    SpecialFileError,
    TreePathError,
    charge,
    check_initial_entry,
    check_relative,
    initial_tree_source,
)
from sandboxes.runs import current_run, run_id_of, run_is_alive, scratch_roots

CloneMethod = Literal["overlay", "link", "copy"]
"""How writable clones are made: an overlay mount (O(1), safe for any writer; needs root), a
hard-link farm built on the first write (safe for writers that replace files), or a full copy."""


INLINE_READ_BYTES = 256 * 1024
"""Reads of up to this many bytes run on the event loop's thread; larger ones in a worker thread
(a thread hop costs more than reading a small file)."""

READ_CHUNK_BYTES = 64 * 1024
"""Bounded reads go through a file in steps of this size (a multiple of 1 KiB, counted from the
end for ``read_tail``), so they stop soon after they hold the lines asked for."""


def _kind(mode: int) -> str:
    if stat_module.S_ISLNK(mode):
        return "symlink"
    if stat_module.S_ISDIR(mode):
        return "directory"
    if stat_module.S_ISREG(mode):
        return "file"
    return "other"


def _special_kind(mode: int) -> str:
    if stat_module.S_ISFIFO(mode):
        return "fifo"
    if stat_module.S_ISSOCK(mode):
        return "socket"
    if stat_module.S_ISCHR(mode) or stat_module.S_ISBLK(mode):
        return "device"
    return "special file"


def _read_forward(descriptor: int, limit: int, lines: int | None) -> bytes:
    """Up to ``limit`` bytes from the current offset, stopping once ``lines`` newlines are in."""
    chunks: list[bytes] = []
    total = newlines = 0
    while total < limit:
        chunk = os.read(descriptor, min(READ_CHUNK_BYTES, limit - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if lines is not None:
            newlines += chunk.count(b"\n")
            if newlines >= lines:
                break
    return b"".join(chunks)


def _read_backward(descriptor: int, size: int, limit: int, lines: int | None) -> tuple[int, bytes]:
    """Up to the last ``limit`` bytes of a ``size``-byte file, read from the end in steps and
    stopping once ``lines`` newlines are in; returns the offset they start at and the bytes."""
    chunks: list[bytes] = []
    position = size
    newlines = 0
    while position > 0 and size - position < limit:
        step = min(READ_CHUNK_BYTES, position, limit - (size - position))
        chunk = os.pread(descriptor, step, position - step)
        if len(chunk) != step:  # the file shrank while read: keep the consistent part
            break
        position -= step
        chunks.append(chunk)
        if lines is not None:
            newlines += chunk.count(b"\n")
            if newlines >= lines:
                break
    chunks.reverse()
    return position, b"".join(chunks)


def _charge_of(target: Path) -> int:
    """What the entry at ``target`` counts against a quota now (0 when there is none)."""
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return 0
    return charge(_kind(info.st_mode), info.st_size)


def _missing_directories(target: Path) -> int:
    """How many directories ``mkdir -p target`` would create."""
    count = 0
    while not os.path.lexists(target) and target != target.parent:
        count += 1
        target = target.parent
    return count


def _file_stat(relative: str, result: os.stat_result) -> FileStat:
    return FileStat(
        path=relative,
        kind=_kind(result.st_mode),
        size=result.st_size,
        mode=result.st_mode & 0o7777,
        modified=result.st_mtime,
        accessed=result.st_atime,
        changed=result.st_ctime,
        created=getattr(result, "st_birthtime", None),
    )


class LocalFileTree(FileTree):
    """``FileTree`` over a host directory."""

    def __init__(self, root: Path, *, read_only: bool = False) -> None:
        self.base = root.resolve()
        self.root = str(self.base)
        self.read_only = read_only

    async def host_directory(self) -> Path:
        """The host directory that holds this tree (for a verifier's ``FILESYSTEM_TEST_DIR``)."""
        return self.base

    def _host(self, path: str, *, follow: bool = True) -> Path:
        relative = check_relative(path)
        if not relative:
            return self.base
        base = str(self.base)
        joined = os.path.join(base, relative)
        if follow:
            resolved = os.path.realpath(joined)
            if resolved != base and not resolved.startswith(base + os.sep):
                raise TreePathError(f"{path!r} resolves outside the tree")
            return Path(resolved)
        head, name = os.path.split(joined)
        parent = os.path.realpath(head)
        if parent != base and not parent.startswith(base + os.sep):
            raise TreePathError(f"{path!r} resolves outside the tree")
        return Path(parent, name)

    def _writable(self) -> None:
        if self.read_only:
            raise ReadOnlyTreeError("this tree is a read-only view")

    async def read_bytes(self, path: str) -> bytes:
        return (await self._read(path, None, None, backward=False)).data

    async def read_head(self, path: str, limit: int, *, lines: int | None = None) -> FilePart:
        return await self._read(path, limit, lines, backward=False)

    async def read_tail(self, path: str, limit: int, *, lines: int | None = None) -> FilePart:
        return await self._read(path, limit, lines, backward=True)

    async def _read(
        self, path: str, limit: int | None, lines: int | None, *, backward: bool
    ) -> FilePart:
        # A small read of a file with one link runs inline (its checks are metadata calls);
        # anything larger, and the walk that checks a multiply-linked file, go to a thread,
        # which opens, reads and closes the file itself: a cancelled caller must not close a
        # descriptor the thread still reads.
        host = self._host(path)
        try:
            info = os.stat(host)
        except OSError:
            info = None  # let the open below raise what the OS says
        inline = (
            info is not None
            and info.st_nlink == 1
            and min(info.st_size, INLINE_READ_BYTES + 1 if limit is None else limit)
            <= INLINE_READ_BYTES
        )
        if inline:
            return self._read_part(path, host, limit, lines, backward)
        return await asyncio.to_thread(self._read_part, path, host, limit, lines, backward)

    def _read_part(
        self, path: str, host: Path, limit: int | None, lines: int | None, backward: bool
    ) -> FilePart:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused just below).
        descriptor = os.open(host, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            info = os.fstat(descriptor)
            if stat_module.S_ISDIR(info.st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(host))
            if not stat_module.S_ISREG(info.st_mode):
                raise SpecialFileError(str(host), _special_kind(info.st_mode))
            if info.st_nlink > 1 and not self._links_accounted_for(info):
                raise TreePathError(
                    f"{path!r} is a hard link to a file that also has a name outside the tree"
                )
            os.set_blocking(descriptor, True)
            bound = max(info.st_size, 1) if limit is None else limit
            if backward:
                start, data = _read_backward(descriptor, info.st_size, bound, lines)
                return FilePart(data, start, info.st_size)
            if limit is None:  # the whole file, however long it has grown since
                with os.fdopen(os.dup(descriptor), "rb") as handle:
                    return FilePart(handle.read(), 0, info.st_size)
            return FilePart(_read_forward(descriptor, bound, lines), 0, info.st_size)
        finally:
            os.close(descriptor)

    def _links_accounted_for(self, info: os.stat_result) -> bool:
        """Whether every hard link of a multiply-linked file is a name inside this tree."""
        found = 0
        for directory, _, files in os.walk(self.base):
            for name in files:
                other = os.lstat(os.path.join(directory, name))
                found += (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino)
        return found >= info.st_nlink

    async def write_bytes(self, path: str, data: bytes) -> None:
        self._writable()
        target = self._host(path, follow=False)
        if target.is_symlink():
            target = self._host(path)
        if self.quota is None:
            await asyncio.to_thread(self._write, path, target, data)
            return
        async with self._quota_lock:  # check and write as one step: concurrent writes add up
            adding = charge("file", len(data)) - _charge_of(target)
            self.check_quota(adding, path)
            await asyncio.to_thread(self._write, path, target, data)
            self.usage += adding

    @functools.cached_property
    def _quota_lock(self) -> asyncio.Lock:
        return asyncio.Lock()

    @staticmethod
    def _write(path: str, target: Path, data: bytes) -> None:
        """Write ``data`` to a temporary file beside ``target`` and rename it over ``target``."""
        if target.is_dir():
            raise IsADirectoryError(f"{path!r} is a directory")
        mode = target.stat().st_mode & 0o7777 if target.exists() else 0o644
        descriptor, temporary = tempfile.mkstemp(prefix=".aj-write-", dir=target.parent)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
            os.chmod(temporary, mode)
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise

    async def make_directory(self, path: str) -> None:
        self._writable()
        target = self._host(path)
        if self.quota is None:
            await asyncio.to_thread(target.mkdir, parents=True, exist_ok=True)
            return
        async with self._quota_lock:
            adding = BLOCK_BYTES * _missing_directories(target)
            self.check_quota(adding, path)
            await asyncio.to_thread(target.mkdir, parents=True, exist_ok=True)
            self.usage += adding

    async def move(self, source: str, destination: str) -> None:
        self._writable()
        origin = self._host(source, follow=False)
        target = self._host(destination, follow=False)

        def rename() -> None:
            if not origin.exists() and not origin.is_symlink():
                raise FileNotFoundError(f"{source!r} does not exist")
            if target.exists() or target.is_symlink():
                raise FileExistsError(f"{destination!r} already exists")
            os.rename(origin, target)

        await asyncio.to_thread(rename)

    async def stat(self, path: str) -> FileStat:
        relative = check_relative(path)
        return _file_stat(relative, os.lstat(self._host(path, follow=False)))

    async def list_directory(self, path: str) -> list[FileStat]:
        relative = check_relative(path)
        host = self._host(path)

        def scan() -> list[FileStat]:
            with os.scandir(host) as entries:
                found = [
                    _file_stat(
                        f"{relative}/{entry.name}" if relative else entry.name,
                        entry.stat(follow_symlinks=False),
                    )
                    for entry in entries
                ]
            return sorted(found, key=lambda item: item.path)

        return await asyncio.to_thread(scan)

    async def walk(self, path: str = "") -> list[FileStat]:
        relative = check_relative(path)
        host = self._host(path)

        def scan() -> list[FileStat]:
            found: list[FileStat] = []
            for directory, names, files in os.walk(host):
                names.sort()
                below = os.path.relpath(directory, host)
                prefix = "" if below == "." else below.replace(os.sep, "/")
                for name in [*names, *files]:
                    inner = f"{prefix}/{name}" if prefix else name
                    full = f"{relative}/{inner}" if relative else inner
                    found.append(_file_stat(full, os.lstat(os.path.join(directory, name))))
            return sorted(found, key=lambda item: item.path)

        return await asyncio.to_thread(scan)

    async def resolve(self, path: str) -> str:
        resolved = self._host(path)
        return "" if resolved == self.base else resolved.relative_to(self.base).as_posix()

    async def export(self, destination: Path) -> None:
        await asyncio.to_thread(_copy_tree, self.base, destination)


class LazyCloneTree(LocalFileTree):
    """A writable clone that costs nothing until its first write.

    Until then every read goes to the frozen snapshot (same content); the first write builds the
    hard-link farm at ``target`` and the tree moves there. ``root`` is ``target`` from the start,
    so the paths its users see never change. Judges that may write but never do cost no clone.
    """

    def __init__(self, snapshot: Path, target: Path) -> None:
        super().__init__(snapshot)
        self.snapshot = self.base
        self.target = target.resolve()
        self.root = str(self.target)
        self._materialised = False
        self._lock = asyncio.Lock()
        self._snapshot_inodes: set[tuple[int, int]] | None = None

    def _links_accounted_for(self, info: os.stat_result) -> bool:
        # The farms of this and other clones link the snapshot's files: an inode the frozen
        # snapshot names is the tree's own content, wherever its other links are.
        if self._snapshot_inodes is None:
            inodes: set[tuple[int, int]] = set()
            for directory, _, files in os.walk(self.snapshot):
                for name in files:
                    other = os.lstat(os.path.join(directory, name))
                    inodes.add((other.st_dev, other.st_ino))
            self._snapshot_inodes = inodes
        if (info.st_dev, info.st_ino) in self._snapshot_inodes:
            return True
        return super()._links_accounted_for(info)

    async def materialise(self) -> None:
        """Build the private copy now (idempotent)."""
        async with self._lock:
            if self._materialised:
                return
            try:
                await asyncio.to_thread(_link_tree, self.base, self.target)
            except BaseException:
                await asyncio.to_thread(remove_tree, self.target)
                raise
            self.base = self.target
            self._materialised = True

    async def host_directory(self) -> Path:
        await self.materialise()  # a verifier may write in place: never hand out the snapshot
        return self.base

    async def write_bytes(self, path: str, data: bytes) -> None:
        await self.materialise()
        await super().write_bytes(path, data)

    async def make_directory(self, path: str) -> None:
        await self.materialise()
        await super().make_directory(path)

    async def move(self, source: str, destination: str) -> None:
        await self.materialise()
        await super().move(source, destination)


def _copy_tree(source: Path, destination: Path) -> None:
    shutil.copytree(source, destination, symlinks=True, copy_function=shutil.copy2)


def _copy_initial_tree(task_id: str, source: Path, destination: Path) -> None:
    """``_copy_tree`` of a task's initial tree, each entry checked (``check_initial_entry``)
    before it is copied; symlinks are copied as links, never followed."""

    def check(directory: str, names: list[str]) -> list[str]:
        for name in names:
            check_initial_entry(task_id, source, os.path.join(directory, name))
        return []  # nothing is skipped: a bad entry fails the whole copy

    shutil.copytree(source, destination, symlinks=True, copy_function=shutil.copy2, ignore=check)


def _link_tree(source: Path, destination: Path) -> None:
    """A hard-link farm of ``source``: new directories, each file a new link to the same inode."""
    directories: list[tuple[str, str]] = []

    def link_directory(origin: str, target: str) -> None:
        os.mkdir(target, 0o755)
        directories.append((origin, target))
        with os.scandir(origin) as entries:
            for entry in entries:
                inner = f"{target}/{entry.name}"
                if entry.is_symlink():
                    os.symlink(os.readlink(entry.path), inner)
                elif entry.is_dir(follow_symlinks=False):
                    link_directory(entry.path, inner)
                else:
                    os.link(entry.path, inner)

    link_directory(str(source), str(destination))
    # Filling a directory changed its mtime; give every directory the snapshot's times and mode.
    for origin, target in reversed(directories):
        times = os.stat(origin)
        os.chmod(target, times.st_mode & 0o7777)
        os.utime(target, ns=(times.st_atime_ns, times.st_mtime_ns))


def _mount_clone(snapshot: Path, layers: Path, merged: Path) -> None:
    """An overlay of ``snapshot`` at ``merged``, its writes kept in ``layers``."""
    layers.mkdir()
    (layers / "upper").mkdir()
    (layers / "work").mkdir()
    merged.mkdir()
    mount_overlay(snapshot, layers / "upper", layers / "work", merged)


def _make_directories_writable(root: Path) -> None:
    """Give every directory its owner's write bit (an agent may have removed it)."""
    for directory, _, _ in os.walk(root):
        mode = os.stat(directory).st_mode & 0o7777
        if not mode & 0o200:
            os.chmod(directory, mode | 0o200)


def remove_tree(root: Path) -> None:
    """Delete a tree even where its directories were made read-only."""
    if not root.exists():
        return

    def make_writable(function: Callable[..., Any], path: str, _: Any) -> None:
        os.chmod(os.path.dirname(path), 0o700)
        function(path)

    _make_directories_writable(root)
    shutil.rmtree(root, onerror=make_writable)


class LocalFilesystemSandbox(FilesystemSandbox):
    """A host directory owned by one user."""

    def __init__(
        self,
        provider: LocalFilesystemProvider,
        directory: Path,
        *,
        read_only: bool = False,
        tree: LocalFileTree | None = None,
        layers: Path | None = None,
    ) -> None:
        self.provider = provider
        self.directory = directory
        self.layers = layers
        """For an overlay clone: the folder of its upper and work layers (``directory`` is the
        mount point)."""
        self.name = directory.name
        self.read_only = read_only
        self.tree: LocalFileTree = tree or LocalFileTree(directory, read_only=read_only)
        self._destroyed = False

    async def freeze(self) -> LocalFilesystemSnapshot:
        if self.read_only:
            raise SandboxError(f"sandbox {self.name} is a read-only view and cannot be frozen")
        if self._destroyed:
            raise SandboxError(f"sandbox {self.name} was destroyed")
        frozen = self.provider.run_directory / current_run().new_name("fsnap")
        if self.layers is not None:
            # A mount point cannot be renamed: copy the merged view out, then drop the overlay.
            await asyncio.to_thread(_copy_tree, self.directory, frozen)
            await self.destroy()
        else:
            if isinstance(self.tree, LazyCloneTree):
                await self.tree.materialise()
            await asyncio.to_thread(os.rename, self.directory, frozen)
            self._destroyed = True
            self.provider.forget(self)
        return self.provider.track_snapshot(LocalFilesystemSnapshot(self.provider, frozen))

    async def destroy(self) -> None:
        if self._destroyed or self.read_only:
            self._destroyed = True
            return
        self._destroyed = True
        if self.layers is not None:
            await asyncio.to_thread(unmount, self.directory)
            await asyncio.to_thread(remove_tree, self.layers)
        await asyncio.to_thread(remove_tree, self.directory)
        self.provider.forget(self)


class LocalFilesystemSnapshot(FilesystemSnapshot):
    """A frozen host directory: nothing writes to it (views refuse writes, clones copy up)."""

    def __init__(self, provider: LocalFilesystemProvider, directory: Path) -> None:
        self.provider = provider
        self.directory = directory
        self.name = directory.name
        self._view: LocalFilesystemSandbox | None = None
        self._destroyed = False

    async def clone(self, *, writable: bool = True) -> LocalFilesystemSandbox:
        if self._destroyed:
            raise SandboxError(f"snapshot {self.name} was destroyed")
        if not writable:
            if self._view is None:
                self._view = LocalFilesystemSandbox(self.provider, self.directory, read_only=True)
            return self._view
        target = self.provider.run_directory / current_run().new_name("fs")
        method = self.provider.clone_method
        if method == "link":
            lazy = LazyCloneTree(self.directory, target)
            await self.limit_clone(lazy, self.provider.quota_bytes)
            return self.provider.track(LocalFilesystemSandbox(self.provider, target, tree=lazy))
        layers = target.with_name(target.name + ".layers") if method == "overlay" else None
        try:
            if layers is not None:
                await asyncio.to_thread(_mount_clone, self.directory, layers, target)
            else:
                await asyncio.to_thread(_copy_tree, self.directory, target)
        except BaseException:
            if layers is not None:
                await asyncio.to_thread(unmount, target)
                await asyncio.to_thread(remove_tree, layers)
            await asyncio.to_thread(remove_tree, target)
            raise
        clone = self.provider.track(LocalFilesystemSandbox(self.provider, target, layers=layers))
        await self.limit_clone(clone.tree, self.provider.quota_bytes)
        return clone

    async def destroy(self) -> None:
        if self._destroyed:
            return
        self._destroyed = True
        await asyncio.to_thread(remove_tree, self.directory)
        self.provider.forget_snapshot(self)


class LocalFilesystemProvider(FilesystemProvider):
    """Creates sandboxes as directories under ``<workdir>/aj_<run id>/``."""

    backend = "local"

    def __init__(
        self,
        *,
        clone_method: CloneMethod | None = None,
        quota_bytes: int | None = CLONE_QUOTA_BYTES,
    ) -> None:
        """``clone_method`` defaults to ``overlay`` where this process may mount one, else
        ``link``; ``quota_bytes`` bounds what each writable clone may hold (None: no bound)."""
        super().__init__(quota_bytes=quota_bytes)
        self.run_directory = current_run().directory()
        if clone_method is None:
            clone_method = "overlay" if overlay_supported(self.run_directory) else "link"
        self.clone_method: CloneMethod = clone_method

    async def create(self, task: Task, task_dir: Path) -> LocalFilesystemSandbox:
        state = task.initial_state
        target = self.run_directory / current_run().new_name("fs")
        if isinstance(state, DirectoryTreeState):
            source = initial_tree_source(task.id, task_dir, state.path)
            try:
                await asyncio.to_thread(_copy_initial_tree, task.id, source, target)
            except BaseException:
                await asyncio.to_thread(remove_tree, target)
                raise
        elif isinstance(state, EmptyState):
            await asyncio.to_thread(target.mkdir, mode=0o755)
        else:
            raise SandboxError(
                f"task {task.id}: a filesystem sandbox cannot start from a {state.kind} state"
            )
        return self.track(LocalFilesystemSandbox(self, target))

    async def aclose(self) -> None:
        for item in self.live():
            await item.destroy()


async def collect_local_leftovers() -> list[str]:
    """Delete the scratch directories (``<workdir>/aj_<id>*``, in every scratch space runs have
    used: ``scratch_roots``) of runs that are no longer alive."""
    removed: list[str] = []
    for path in sorted(path for root in scratch_roots() for path in root.glob("aj_*")):
        run_id = run_id_of(path.name)
        if run_id is None or run_is_alive(run_id) or not path.is_dir():
            continue
        for mount_point in mounts_below(path):
            await asyncio.to_thread(unmount, mount_point)
            removed.append(f"overlay mount {mount_point}")
        await asyncio.to_thread(remove_tree, path)
        removed.append(f"directory {path}")
    return removed
