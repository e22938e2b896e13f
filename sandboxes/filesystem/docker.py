"""The ``docker`` filesystem backend: the tree lives at ``/sandbox`` inside a container.

Each sandbox is a container of the sandbox image (``sandboxes.docker.images``) without a network,
whose main process is the resident helper (``sandboxes.docker.resident``): every operation is one
request over the helper's Unix socket, a round trip of about a millisecond instead of a ``docker
exec``. The helper resolves each path inside the container, checks that it stays in the tree and
answers failures as errno names, which ``DockerFileTree`` raises as the exceptions the local
backend (``sandboxes.filesystem.local``) would raise, so the two backends behave the same.

Containers come from a warm pool (``sandboxes.docker.pool``; size and idle time from the
``docker_pool_size`` and ``docker_pool_idle_seconds`` settings), so a new sandbox waits for no
container to start. Trees move in and out as one tar stream through the helper, with exact
nanosecond times (``sandboxes.docker.resident.archive``): creation unpacks the task's tree into a
pool container; freezing packs the tree and unpacks it into a snapshot folder on the host, inside
the run's scratch folder, which every pool container of the provider sees read-only at
``/snapshots``. A writable clone is a pool container attached to that folder: it reads the
snapshot until its first write, which copies the snapshot into the container (hard links, modes
and times kept), so a clone costs a request and a judge that never writes copies nothing. The
read-only view is one shared pool container attached read-only: its tree is the read-only bind
mount itself, so nothing in the container can write it.

Bounded reads run in the container: a 4-line read of a 50 MB file moves a few KiB, never the file.
The quota of a writable clone is kept here: the helper reports what each write replaced and how
many directories a ``mkdir`` made, and a write near the quota first asks what it would replace, so
a refused write sends nothing.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import hashlib
import os
import posixpath
import shutil
import tempfile
import time
from pathlib import Path
from typing import IO, Any

import docker
import docker.errors
from docker.models.containers import Container
from docker.types import Mount

from dataset.models import DirectoryTreeState, EmptyState, Task
from sandboxes.base import SandboxError
from sandboxes.docker.images import sandbox_image_tag
from sandboxes.docker.pool import ContainerSpec, ResidentContainer, WarmPool
from sandboxes.docker.resident.archive import UnsafeMemberError, unpack_tree, write_tree
from sandboxes.docker.resident.operations import SNAPSHOTS
from sandboxes.docker.resident_link import ResidentError, ResidentLink
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
    QuotaExceededError,
    ReadOnlyTreeError,
    SpecialFileError,
    TreePathError,
    charge,
    check_initial_entry,
    check_relative,
    initial_tree_source,
)
from sandboxes.runs import current_run
from settings import get_settings

ROOT = "/sandbox"
"""Where the tree lives inside every container."""

_SPOOL_BYTES = 32 * 1024 * 1024  # archives above this spill from memory to a temporary file

_ERRORS: dict[str, type[OSError]] = {
    "ENOENT": FileNotFoundError,
    "ENOTDIR": NotADirectoryError,
    "EEXIST": FileExistsError,
    "EISDIR": IsADirectoryError,
}

_PATH_ERRORS = {
    "ESCAPE": "{path!r} resolves outside the tree",
    "LINKED": "{path!r} is a hard link to a file that also has a name outside the tree",
}
"""The helper's refusals of a path, as ``TreePathError`` messages."""

_KINDS = {"f": "file", "d": "directory", "l": "symlink"}

_INLINE = frozenset({"stat", "resolve", "replaces"})
"""Requests answered in well under a millisecond with an answer of a few bytes: sent from the
event loop's thread (a hop to a worker thread costs more than the round trip on a busy machine).
The others (reads that return data or listings, and writes, which may first copy an attached
snapshot) run in a worker thread, so the loop never waits on them."""

TREE_TMPFS_BYTES = 4 * 1024**3
"""The most a container's tree may hold: ``/sandbox`` is a tmpfs of this size (memory is used only
as files are written; the engine's storage driver can be a slow FUSE overlay)."""

TAIL_WINDOW_BYTES = 64 * 1024
"""A tail read asking for lines first fetches this much of the file's end, and the whole limit
only when those bytes hold too few lines."""


class _TooManyDirectoriesError(OSError):
    """The helper's ``mkdir`` refused: it would make ``count`` directories, more than allowed."""

    def __init__(self, count: int) -> None:
        super().__init__(errno.EDQUOT, f"{count} directories")
        self.count = count


def _replaced_charge(replaced: Any) -> int:
    """The quota charge of what a write replaced, from the helper's answer."""
    if not replaced:
        return 0
    kind, size = replaced
    return charge("file", int(size)) if kind == "f" else BLOCK_BYTES


def _seconds(nanoseconds: int) -> float:
    # The same arithmetic os.stat uses for st_mtime, so equal times compare equal across backends.
    seconds, rest = divmod(nanoseconds, 1_000_000_000)
    return float(seconds) + rest * 1e-9


def _file_stat(record: list[Any], path: str) -> FileStat:
    """A ``FileStat`` from one of the helper's records (kind, size, mode, times, name)."""
    kind, size, mode, modified, accessed, changed, _ = record
    return FileStat(
        path=path,
        kind=_KINDS.get(kind, "other"),
        size=size,
        mode=mode,
        modified=_seconds(modified),
        accessed=_seconds(accessed),
        changed=_seconds(changed),
        created=None,
    )


def _join(base: str, name: str) -> str:
    return f"{base}/{name}" if base and name else base or name


def _tree_signature(task_id: str, source: Path) -> str:
    """A digest of every entry's name, kind, size, mode and times below ``source`` (and of the
    folder itself): equal digests, the same tree. Each entry is checked on the way
    (``check_initial_entry``: a bad one raises ``SandboxError`` naming the task and the entry)."""
    digest = hashlib.sha256(str(source).encode())
    for directory, names, files in os.walk(source):
        names.sort()
        for name in [*names, *files]:
            check_initial_entry(task_id, source, os.path.join(directory, name))
        for path in [directory, *(os.path.join(directory, name) for name in sorted(files))]:
            info = os.lstat(path)
            digest.update(os.fsencode(path))
            digest.update(
                b"%d %d %d %d\0" % (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ino)
            )
    return digest.hexdigest()


def _copy_tree(source: Path, destination: Path) -> None:
    """Copy a (checked) initial tree to the new host folder ``destination``: contents, modes
    and exact times; symlinks stay symlinks."""
    try:
        shutil.copytree(source, destination, symlinks=True)
    except BaseException:
        shutil.rmtree(destination, ignore_errors=True)
        raise


def _empty_tree_archive(target: IO[bytes]) -> None:
    """The archive of an empty tree (its folder only, made now)."""
    write_tree(None, target, ROOT.lstrip("/"), owner_root=True, now_ns=time.time_ns())


def _unpack_into(archive: IO[bytes], destination: Path) -> None:
    """Unpack a tree archive (members ``sandbox/...``) as the new folder ``destination``."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".aj-unpack-", dir=destination.parent))
    try:
        archive.seek(0)
        try:
            unpack_tree(archive, str(scratch))
        except UnsafeMemberError as error:
            raise SandboxError(str(error)) from error
        (scratch / ROOT.lstrip("/")).rename(destination)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class DockerFileTree(FileTree):
    """``FileTree`` over ``/sandbox`` in one container, through its resident helper."""

    def __init__(
        self, link: ResidentLink, container: Container | None = None, *, read_only: bool = False
    ) -> None:
        self.link = link
        self._container = container
        self.exposed = False
        """Whether the container was handed out (something else may have run in it)."""
        self.root = ROOT
        self.read_only = read_only

    @property
    def container(self) -> Container:
        """The container; a writable clone first gets its private copy, as whoever asks for
        the container may write in the tree behind the helper's back (and the container is
        never reused for another sandbox)."""
        if self._container is None:
            raise SandboxError(f"{self.link.name}: no container handle")
        self.exposed = True
        if not self.read_only:
            self.link.call("materialise")
        return self._container

    def _writable(self) -> None:
        if self.read_only:
            raise ReadOnlyTreeError("this tree is a read-only view")

    def _call_sync(
        self, operation: str, *operands: Any, payload: bytes = b"", sink: IO[bytes] | None = None
    ) -> tuple[Any, bytes]:
        """One request; a failure raises what the local OS would raise."""
        try:
            return self.link.call(operation, *operands, payload=payload, sink=sink)
        except ResidentError as error:
            raise self._exception(error, operation, operands) from None

    async def _call(
        self, operation: str, *operands: Any, payload: bytes = b""
    ) -> tuple[Any, bytes]:
        if operation in _INLINE:
            return self._call_sync(operation, *operands)
        return await asyncio.to_thread(self._call_sync, operation, *operands, payload=payload)

    def _exception(
        self, error: ResidentError, operation: str, operands: tuple[Any, ...]
    ) -> Exception:
        code = error.code
        first = operands[0] if operands and isinstance(operands[0], str) else ""
        shown = posixpath.join(ROOT, first) if first else ROOT
        number = getattr(errno, code, None)
        made: Exception
        if code in _PATH_ERRORS:
            made = TreePathError(_PATH_ERRORS[code].format(path=first))
        elif code == "ENOTREG":
            made = SpecialFileError(shown, str(error.detail or "special file"))
        elif code == "EDQUOT":
            made = _TooManyDirectoriesError(int(error.detail or 0))
        elif isinstance(number, int):
            made = _ERRORS.get(code, OSError)(number, os.strerror(number), shown)
        else:
            made = OSError(errno.EIO, f"{operation} failed in {self.link.name}: {error}", shown)
        return made

    async def read_bytes(self, path: str) -> bytes:
        check_relative(path)
        return (await self._call("read", path))[1]

    async def read_head(self, path: str, limit: int, *, lines: int | None = None) -> FilePart:
        check_relative(path)
        bound = None if lines is None else max(0, min(lines, limit + 1))
        size, data = await self._call("head", path, limit, bound)
        return FilePart(data, 0, int(size))

    async def read_tail(self, path: str, limit: int, *, lines: int | None = None) -> FilePart:
        check_relative(path)
        if lines is not None and limit > TAIL_WINDOW_BYTES:
            part = self._part(*await self._call("tail", path, TAIL_WINDOW_BYTES))
            if part.start == 0 or part.data.count(b"\n") >= lines:
                return part
        return self._part(*await self._call("tail", path, limit))

    @staticmethod
    def _part(size: Any, data: bytes) -> FilePart:
        total = int(size)
        return FilePart(data, max(total - len(data), 0), total)

    async def write_bytes(self, path: str, data: bytes) -> None:
        self._writable()
        check_relative(path)
        if self.quota is None:
            await self._call("write", path, payload=data)
            return
        async with self._quota_lock:  # check and write as one step: concurrent writes add up
            adding = charge("file", len(data))
            if self.usage + adding > self.quota:
                # Near the quota, what the write replaces decides (asked before sending it).
                replaced, _ = await self._call("replaces", path)
                self.check_quota(adding - _replaced_charge(replaced), path)
            replaced, _ = await self._call("write", path, payload=data)
            self.usage += adding - _replaced_charge(replaced)

    @functools.cached_property
    def _quota_lock(self) -> asyncio.Lock:
        return asyncio.Lock()

    async def make_directory(self, path: str) -> None:
        self._writable()
        check_relative(path)
        if self.quota is None:
            await self._call("mkdir", path)
            return
        async with self._quota_lock:
            allowed = max(self.quota - self.usage, 0) // BLOCK_BYTES
            try:
                made, _ = await self._call("mkdir", path, allowed)
            except _TooManyDirectoriesError as refusal:
                raise QuotaExceededError(
                    self.usage, self.quota, refusal.count * BLOCK_BYTES, path
                ) from None
            self.usage += int(made) * BLOCK_BYTES

    async def move(self, source: str, destination: str) -> None:
        self._writable()
        check_relative(source)
        check_relative(destination)
        await self._call("move", source, destination)

    async def stat(self, path: str) -> FileStat:
        relative = check_relative(path)
        record, _ = await self._call("stat", relative)
        return _file_stat(record, relative)

    async def list_directory(self, path: str) -> list[FileStat]:
        relative = check_relative(path)
        records, _ = await self._call("list", relative)
        found = [_file_stat(record, _join(relative, record[-1])) for record in records]
        return sorted(found, key=lambda item: item.path)

    async def walk(self, path: str = "") -> list[FileStat]:
        relative = check_relative(path)
        records, _ = await self._call("walk", relative)
        found = [_file_stat(record, _join(relative, record[-1])) for record in records]
        return sorted(found, key=lambda item: item.path)

    async def resolve(self, path: str) -> str:
        check_relative(path)
        resolved, _ = await self._call("resolve", path)
        return str(resolved)

    async def times(self) -> dict[str, tuple[int, int]]:
        """Exact (atime, mtime) in nanoseconds of every entry, the root under ""."""
        records, _ = await self._call("everything")
        return {record[-1]: (record[4], record[3]) for record in records}

    async def archive(self, target: IO[bytes]) -> None:
        """Write the whole tree as a tar (members ``sandbox/...``) with exact times into target."""
        await asyncio.to_thread(self._call_sync, "pack", sink=target)

    async def unpack(self, destination: Path) -> None:
        """Copy the whole tree into the new host folder ``destination`` (exact times)."""
        with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES) as archive:
            await self.archive(archive)
            await asyncio.to_thread(_unpack_into, archive, destination)

    async def export(self, destination: Path) -> None:
        if destination.exists() or destination.is_symlink():
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(destination))
        await self.unpack(destination)


class DockerFilesystemSandbox(FilesystemSandbox):
    """A pool container whose ``/sandbox`` is the tree."""

    tree: DockerFileTree

    def __init__(
        self,
        provider: DockerFilesystemProvider,
        resident: ResidentContainer,
        *,
        read_only: bool = False,
        snapshot: DockerFilesystemSnapshot | None = None,
    ) -> None:
        self.provider = provider
        self.resident = resident
        self.name = resident.name
        self.read_only = read_only
        self.tree = DockerFileTree(resident.link, resident.container, read_only=read_only)
        self.snapshot = snapshot
        """The snapshot this clone was attached to (None for a created sandbox)."""
        self._destroyed = False

    @property
    def container(self) -> Container:
        """The container (a writable clone gets its private copy first)."""
        return self.tree.container

    async def freeze(self) -> DockerFilesystemSnapshot:
        if self.read_only:
            raise SandboxError(f"sandbox {self.name} is a read-only view and cannot be frozen")
        if self._destroyed:
            raise SandboxError(f"sandbox {self.name} was destroyed")
        name = current_run().new_name("fsnap")
        await self.tree.unpack(self.provider.snapshot_folder() / name)
        await self.destroy()
        return self.provider.track_snapshot(DockerFilesystemSnapshot(self.provider, name))

    async def destroy(self) -> None:
        if self._destroyed or self.read_only:
            # A read-only view belongs to its snapshot, which removes the container.
            self._destroyed = True
            return
        self._destroyed = True
        self.provider.forget(self)
        if self.snapshot is not None:
            self.snapshot.clones.discard(self.name)
        await self.provider.give_back(self.resident, clean=not self.tree.exposed)


class DockerFilesystemSnapshot(FilesystemSnapshot):
    """A frozen tree: a folder on the host that the provider's pool containers see read-only."""

    def __init__(self, provider: DockerFilesystemProvider, name: str) -> None:
        self.provider = provider
        self.name = name
        self.folder = provider.snapshot_folder() / name
        """The frozen tree on the host (``/snapshots/<name>`` in the containers)."""
        self.clones: set[str] = set()
        """The live writable clones attached to it."""
        self._view: DockerFilesystemSandbox | None = None
        self._view_lock = asyncio.Lock()  # concurrent first readers must not start two views
        self._destroyed = False

    async def _attached(self, writable: bool) -> DockerFilesystemSandbox:
        resident = await self.provider.take_container()
        try:
            await resident.link.acall("attach", self.name, writable)
        except BaseException as error:
            await asyncio.to_thread(resident.remove)
            if isinstance(error, ResidentError):
                raise SandboxError(f"attaching snapshot {self.name}: {error}") from error
            raise
        return DockerFilesystemSandbox(
            self.provider, resident, read_only=not writable, snapshot=self
        )

    async def clone(self, *, writable: bool = True) -> DockerFilesystemSandbox:
        if self._destroyed:
            raise SandboxError(f"snapshot {self.name} was destroyed")
        if not writable:
            async with self._view_lock:
                if self._view is None:
                    self._view = await self._attached(writable=False)
                return self._view
        clone = self.provider.track(await self._attached(writable=True))
        self.clones.add(clone.name)
        await self.limit_clone(clone.tree, self.provider.quota_bytes)
        return clone

    async def destroy(self) -> None:
        if self._destroyed:
            return
        if self.clones:
            raise SandboxError(
                f"snapshot {self.name} is still used by a clone ({', '.join(sorted(self.clones))});"
                " destroy the clones first"
            )
        async with self._view_lock:
            if self._view is not None:
                await self.provider.give_back(
                    self._view.resident, clean=not self._view.tree.exposed
                )
                self._view = None
        await asyncio.to_thread(shutil.rmtree, self.folder, True)
        self._destroyed = True
        self.provider.forget_snapshot(self)


class DockerFilesystemProvider(FilesystemProvider):
    """Creates filesystem sandboxes in pool containers of the sandbox image.

    ``image`` defaults to the tag of the current recipe; build it first with
    ``sandboxes.docker.images.ensure_sandbox_image``. ``pool_size`` containers wait ready (0: none;
    default the ``docker_pool_size`` setting); one that waits ``pool_idle_seconds`` unused goes.
    """

    backend = "docker"

    def __init__(
        self,
        image: str | None = None,
        *,
        quota_bytes: int | None = CLONE_QUOTA_BYTES,
        pool_size: int | None = None,
        pool_idle_seconds: float | None = None,
        tree_tmpfs: bool = True,
    ) -> None:
        """``quota_bytes`` bounds what each writable clone may hold (None: no bound);
        ``tree_tmpfs=False`` keeps trees in the containers' root filesystem instead of a tmpfs
        (slower where the engine's storage driver is a FUSE overlay)."""
        super().__init__(quota_bytes=quota_bytes)
        settings = get_settings()
        self.image = image or sandbox_image_tag()
        self.pool_size = settings.docker_pool_size if pool_size is None else pool_size
        self.pool_idle_seconds = (
            settings.docker_pool_idle_seconds if pool_idle_seconds is None else pool_idle_seconds
        )
        self.tree_tmpfs = tree_tmpfs
        self._client: docker.DockerClient | None = None
        self._pool: WarmPool | None = None
        self._snapshots_folder: Path | None = None
        self._seeds: dict[tuple[str, str], str] = {}
        """Copies of initial trees on the host, by task id and tree digest."""
        self._seeds_lock = asyncio.Lock()

    @property
    def client(self) -> docker.DockerClient:
        """The Engine client (made on first use)."""
        if self._client is None:
            try:
                self._client = docker.from_env(timeout=300)
            except docker.errors.DockerException as error:
                raise SandboxError(f"connecting to the Docker engine: {error}") from error
        return self._client

    def snapshot_folder(self) -> Path:
        """The host folder of this provider's snapshots (made on first use, in the run's
        scratch folder), mounted read-only at ``/snapshots`` in its containers."""
        if self._snapshots_folder is None:
            folder = current_run().directory() / current_run().new_name("fsnaps")
            folder.mkdir(mode=0o700)
            self._snapshots_folder = folder
        return self._snapshots_folder

    @property
    def pool(self) -> WarmPool:
        """The provider's warm pool of containers (made on first use)."""
        if self._pool is None:
            spec = ContainerSpec(
                image=self.image,
                kind="filesystem",
                tag="fs",
                mounts=(
                    Mount(SNAPSHOTS, str(self.snapshot_folder()), type="bind", read_only=True),
                ),
                tmpfs=((ROOT, f"size={TREE_TMPFS_BYTES // 1024}k,mode=755"),)
                if self.tree_tmpfs
                else (),
            )
            self._pool = WarmPool(self.client, spec, self.pool_size, self.pool_idle_seconds)
        return self._pool

    async def take_container(self) -> ResidentContainer:
        """A started container with its helper answering, from the pool."""
        return await self.pool.take()

    async def give_back(self, resident: ResidentContainer, *, clean: bool) -> None:
        """Return a container whose sandbox is done (to the pool when ``clean``, see
        ``WarmPool.give_back``; else it is removed)."""
        if self._pool is None:
            await asyncio.to_thread(resident.remove)
            return
        await self._pool.give_back(resident, clean=clean)

    async def create(self, task: Task, task_dir: Path) -> DockerFilesystemSandbox:
        state = task.initial_state
        source: Path | None
        if isinstance(state, DirectoryTreeState):
            source = initial_tree_source(task.id, task_dir, state.path).resolve()
        elif isinstance(state, EmptyState):
            source = None
        else:
            raise SandboxError(
                f"task {task.id}: a filesystem sandbox cannot start from a {state.kind} state"
            )
        if source is None:
            resident = await self.take_container()
            try:
                await resident.link.acall("unpack", writer=_empty_tree_archive)
            except BaseException as error:
                await asyncio.to_thread(resident.remove)
                if isinstance(error, ResidentError):
                    raise SandboxError(f"task {task.id}: an empty tree: {error}") from error
                raise
            return self.track(DockerFilesystemSandbox(self, resident))
        seed = await self._seed(task.id, source)
        resident = await self.take_container()
        try:
            await resident.link.acall("attach", seed, True)
        except BaseException as error:
            await asyncio.to_thread(resident.remove)
            if isinstance(error, ResidentError):
                raise SandboxError(f"task {task.id}: attaching its tree: {error}") from error
            raise
        return self.track(DockerFilesystemSandbox(self, resident))

    async def _seed(self, task_id: str, source: Path) -> str:
        """The name of the snapshot folder holding a copy of the task's initial tree, copied on
        the host once per task and tree content (later sandboxes of the task attach the same
        copy; a tree changed on disk since is copied again)."""
        key = (task_id, await asyncio.to_thread(_tree_signature, task_id, source))
        async with self._seeds_lock:
            if key not in self._seeds:
                name = current_run().new_name("fseed")
                await asyncio.to_thread(_copy_tree, source, self.snapshot_folder() / name)
                self._seeds[key] = name
            return self._seeds[key]

    async def aclose(self) -> None:
        problems: list[str] = []
        # Clones before snapshots: a snapshot refuses to go while a clone uses it.
        for item in self.live():
            try:
                await item.destroy()
            except (SandboxError, docker.errors.DockerException) as error:
                problems.append(f"{item.name}: {error}")
        if self._pool is not None:
            await self._pool.aclose()
            self._pool = None
        if self._snapshots_folder is not None:
            await asyncio.to_thread(shutil.rmtree, self._snapshots_folder, True)
            self._snapshots_folder = None
        if self._client is not None:
            self._client.close()
            self._client = None
        if problems:
            raise SandboxError("could not remove every Docker sandbox: " + "; ".join(problems))
