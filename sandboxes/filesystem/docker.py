"""The ``docker`` filesystem backend: the tree lives at ``/sandbox`` inside a container.

Each sandbox is a container of the sandbox image (``sandboxes.docker.images``) that runs ``sleep
infinity`` without a network. Files move through the Engine's archive API (``put_archive`` /
``get_archive``); every other operation is one ``exec`` of a small POSIX shell script
(``docker_tree.sh``, next to this module) that resolves the path inside the container, checks it
stays in the tree and reports failures as errno names, which ``DockerFileTree`` raises as the
exceptions the local backend (``sandboxes.filesystem.local``) would raise. The two backends
behave the same.

Freezing turns the container's tree into an image labelled with the run id: by default a one-layer
image on top of the sandbox image, loaded from the tree's archive (``docker load``; a fraction of
a second), or with ``freeze_method="commit"`` a ``docker commit`` (seconds on storage drivers that
diff naively, such as fuse-overlayfs; times rounded to whole seconds). Writable clones are new
containers of that image; the read-only view is one shared container with a read-only root
filesystem.

The Engine's archives carry whole-second times only, so whenever a tree leaves a container
(freeze, export) the exact nanosecond times are re-read with ``find`` and put back.

Bounded reads run in the container too: ``head -c LIMIT | head -n LINES`` reads forwards and stops
at the lines asked for, ``tail -c`` seeks to the end, so a 4-line read of a 50 MB file moves a few
KiB, never the file. The quota of a writable clone is kept here: the script reports what each
write replaced and how many directories a ``mkdir`` made, and a write near the quota first asks
what it would replace, so a refused write uploads nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import hashlib
import io
import json
import os
import posixpath
import secrets
import shutil
import tarfile
import tempfile
import time
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import IO, Any, Literal

import docker
import docker.errors
from docker.models.containers import Container

from dataset.models import DirectoryTreeState, EmptyState, Task
from sandboxes.base import SandboxError
from sandboxes.docker.containers import demuxed_output, remove_container
from sandboxes.docker.images import BUILD_COMMAND, IMAGE_LABEL, STAGING_DIR, sandbox_image_tag
from sandboxes.docker.leftovers import run_labels
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

ROOT = "/sandbox"
"""Where the tree lives inside every container."""

FreezeMethod = Literal["load", "commit"]
"""How a container's tree becomes an image: a loaded one-layer image, or ``docker commit``."""

_SPOOL_BYTES = 32 * 1024 * 1024  # archives above this spill from memory to a temporary file

TREE_SCRIPT = "docker_tree.sh"
"""The POSIX shell script (a resource of this package) behind every operation but file transfers.
Arguments: root, operation, operands. Failures the caller maps to exceptions exit 3 with an errno
name as the last line of stderr; success ends its output with ``_TRAILER``."""


@cache
def _tree_script() -> str:
    package = __package__ or "sandboxes.filesystem"
    return resources.files(package).joinpath(TREE_SCRIPT).read_text(encoding="utf-8")


_ERRORS: dict[str, type[OSError]] = {
    "ENOENT": FileNotFoundError,
    "ENOTDIR": NotADirectoryError,
    "EEXIST": FileExistsError,
    "EISDIR": IsADirectoryError,
}

_WORDED_ERRORS = (errno.ENAMETOOLONG, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EROFS)
"""Failures of coreutils inside the script, recognised by the message they print."""

_TRAILER = b"AJ-END"
"""What every successful run of the script prints last."""

_READS = frozenset(
    {"resolve", "stat", "list", "walk", "everything", "read", "head", "tail", "replaces"}
)
"""Script operations that change nothing (safe to run again)."""

_EXEC_ATTEMPTS = 4

_KINDS = {"f": "file", "d": "directory", "l": "symlink"}

TAIL_WINDOW_BYTES = 64 * 1024
"""A tail read asking for lines first fetches this much of the file's end, and the whole limit
only when those bytes hold too few lines (each fetch is one ``exec``)."""


class _TooManyDirectoriesError(OSError):
    """The script's ``mkdir`` refused: it would make ``count`` directories, more than allowed."""

    def __init__(self, count: int) -> None:
        super().__init__(errno.EDQUOT, f"{count} directories")
        self.count = count


def _replaced_charge(answer: bytes) -> int | None:
    """The quota charge of what a write replaced, from the script's ``replaced`` answer."""
    text = answer.decode("ascii", "replace").strip()
    if text == "-":
        return 0
    if text == "o":
        return BLOCK_BYTES
    if text.startswith("f ") and text[2:].isdigit():
        return charge("file", int(text[2:]))
    return None  # the engine lost the answer


def _ns(text: bytes) -> int:
    """``find``'s ``%T@`` (seconds with a fraction) as integer nanoseconds."""
    seconds, _, fraction = text.decode().partition(".")
    if seconds.startswith("-"):
        return round(float(text) * 1e9)
    return int(seconds) * 1_000_000_000 + int((fraction + "000000000")[:9])


def _seconds(nanoseconds: int) -> float:
    # The same arithmetic os.stat uses for st_mtime, so equal times compare equal across backends.
    seconds, rest = divmod(nanoseconds, 1_000_000_000)
    return float(seconds) + rest * 1e-9


class _Entry:
    """One ``find`` record."""

    __slots__ = ("accessed", "changed", "kind", "mode", "modified", "relative", "size")

    def __init__(self, record: bytes) -> None:
        kind, size, mode, modified, accessed, changed, relative = record.split(b" ", 6)
        self.kind = _KINDS.get(kind.decode(), "other")
        self.size = int(size)
        self.mode = int(mode, 8)
        self.modified = _ns(modified)
        self.accessed = _ns(accessed)
        self.changed = _ns(changed)
        self.relative = relative.decode("utf-8", "surrogateescape")

    def file_stat(self, path: str) -> FileStat:
        return FileStat(
            path=path,
            kind=self.kind,
            size=self.size,
            mode=self.mode,
            modified=_seconds(self.modified),
            accessed=_seconds(self.accessed),
            changed=_seconds(self.changed),
            created=None,
        )


def _entries(output: bytes) -> list[_Entry]:
    return [_Entry(record) for record in output.split(b"\0") if record]


def _join(base: str, name: str) -> str:
    return f"{base}/{name}" if base and name else base or name


def _engine_error(action: str, error: docker.errors.DockerException) -> SandboxError:
    return SandboxError(f"{action}: {error}")


class _ChunkReader(io.RawIOBase):
    """A file object over an iterator of byte chunks (the Engine's archive stream)."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._buffer = b""

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        while not self._buffer:
            try:
                self._buffer = next(self._chunks)
            except StopIteration:
                return 0
        view = memoryview(target)
        count = min(len(view), len(self._buffer))
        view[:count] = self._buffer[:count]
        self._buffer = self._buffer[count:]
        return count


def _pax_time(nanoseconds: int) -> str:
    seconds, rest = divmod(nanoseconds, 1_000_000_000)
    return f"{seconds}.{rest:09d}"


def _stamp(info: tarfile.TarInfo, modified: int, accessed: int | None = None) -> None:
    """Give a tar member exact times (tarfile would round them through a float)."""
    info.mtime = modified // 1_000_000_000
    headers = dict(info.pax_headers)
    headers["mtime"] = _pax_time(modified)
    if accessed is not None:
        headers["atime"] = _pax_time(accessed)
    headers.pop("ctime", None)
    info.pax_headers = headers


def _host_tree_archive(source: Path | None, target: IO[bytes], task_id: str = "") -> None:
    """Archive a host directory (or an empty one) as ``sandbox/...`` with exact times and modes.

    Symlinks stay symlinks and hard links stay hard links; owners become root. Each entry is
    checked first (``check_initial_entry``, on behalf of task ``task_id``).
    """
    base = ROOT.lstrip("/")
    with tarfile.open(fileobj=target, mode="w", format=tarfile.PAX_FORMAT) as archive:
        if source is None:
            info = tarfile.TarInfo(base)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            _stamp(info, time.time_ns())
            archive.addfile(info)
            return
        paths = [source]
        for directory, names, files in os.walk(source):
            for name in [*names, *files]:
                check_initial_entry(task_id, source, os.path.join(directory, name))
                paths.append(Path(directory, name))
        for path in paths:
            relative = path.relative_to(source).as_posix()
            info = archive.gettarinfo(str(path), base if relative == "." else f"{base}/{relative}")
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            status = path.lstat()
            _stamp(info, status.st_mtime_ns, status.st_atime_ns)
            if info.isreg():
                with path.open("rb") as handle:
                    archive.addfile(info, handle)
            else:
                archive.addfile(info)


def _extract_filter(member: tarfile.TarInfo, destination: str) -> tarfile.TarInfo:
    """Refuse members that would land outside the destination; keep modes and links as they are."""
    parts = member.name.split("/")
    if member.name.startswith("/") or ".." in parts:
        raise SandboxError(f"refusing archive member {member.name!r}")
    if member.islnk() and (member.linkname.startswith("/") or ".." in member.linkname.split("/")):
        raise SandboxError(f"refusing hard link {member.name!r} -> {member.linkname!r}")
    return member


class DockerFileTree(FileTree):
    """``FileTree`` over ``/sandbox`` in one container, driven through the Engine API."""

    def __init__(self, container: Container, *, read_only: bool = False) -> None:
        self.container = container
        self.root = ROOT
        self.read_only = read_only

    def _writable(self) -> None:
        if self.read_only:
            raise ReadOnlyTreeError("this tree is a read-only view")

    def _exec(self, operation: str, *operands: str) -> tuple[int, bytes, bytes]:
        """One run of the script; retried when the engine loses the answer of a read.

        Under load the engine's exec attach now and then delivers nothing although the script
        ran. Every successful run ends its output with ``_TRAILER``: a read whose trailer is
        missing is asked again (reads change nothing); a write that exited 0 is done, whatever
        reached us of its (empty) output.
        """
        for _ in range(_EXEC_ATTEMPTS):
            try:
                result = self.container.exec_run(
                    ["sh", "-c", _tree_script(), "tree", ROOT, operation, *operands], demux=True
                )
            except docker.errors.DockerException as error:
                raise _engine_error(
                    f"{operation} in container {self.container.name}", error
                ) from error
            stdout, stderr = demuxed_output(result)
            code = -1 if result.exit_code is None else result.exit_code  # None: still running
            if code == 0 and stdout.endswith(_TRAILER):
                return 0, stdout[: -len(_TRAILER)], stderr
            if code == 0 and operation not in _READS:
                return 0, b"", stderr
            if code != 0 and stderr.strip():
                return code, stdout, stderr
            if code != 0 and operation not in _READS:
                return code, stdout, stderr
        raise OSError(
            errno.EIO,
            f"{operation} in {self.container.name}: the engine lost the answer"
            f" {_EXEC_ATTEMPTS} times",
            posixpath.join(ROOT, operands[0]) if operands and operands[0] else ROOT,
        )

    def _run(self, operation: str, *operands: str) -> bytes:
        """Run one script operation in the container; raise what the local OS would raise."""
        exit_code, stdout, stderr = self._exec(operation, *operands)
        if exit_code == 0:
            return stdout
        message = stderr.decode("utf-8", "replace").strip()
        code = message.rsplit("\n", 1)[-1] if exit_code == 3 else ""
        shown = posixpath.join(ROOT, operands[0]) if operands and operands[0] else ROOT
        if code == "ESCAPE":
            raise TreePathError(f"{operands[0]!r} resolves outside the tree")
        if code == "LINKED":
            raise TreePathError(
                f"{operands[0]!r} is a hard link to a file that also has a name outside the tree"
            )
        if code == "ENOTREG":
            lines = message.split("\n")
            raise SpecialFileError(shown, lines[-2].strip() if len(lines) > 1 else "special file")
        if code == "EDQUOT":
            lines = message.split("\n")
            raise _TooManyDirectoriesError(int(lines[-2]) if len(lines) > 1 else 0)
        if code in _ERRORS:
            number = getattr(errno, code)
            raise _ERRORS[code](number, os.strerror(number), shown)
        if code in ("EINVAL", "ELOOP"):
            number = getattr(errno, code)
            raise OSError(number, os.strerror(number), shown)
        for number in _WORDED_ERRORS:  # a tool in the script failed: recognise its strerror
            if os.strerror(number) in message:
                raise OSError(number, os.strerror(number), shown)
        raise OSError(errno.EIO, f"{operation} failed in {self.container.name}: {message}", shown)

    async def _call(self, operation: str, *operands: str) -> bytes:
        return await asyncio.to_thread(self._run, operation, *operands)

    async def read_bytes(self, path: str) -> bytes:
        check_relative(path)
        resolved = (await self._call("read", path)).decode("utf-8", "surrogateescape")
        return await asyncio.to_thread(self._fetch, resolved)

    def _fetch(self, resolved: str) -> bytes:
        try:
            stream, _ = self.container.get_archive(resolved)
        except docker.errors.NotFound as error:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), resolved) from error
        except docker.errors.DockerException as error:
            raise _engine_error(f"reading {resolved}", error) from error
        with tarfile.open(fileobj=io.BufferedReader(_ChunkReader(stream)), mode="r|") as archive:
            for member in archive:
                handle = archive.extractfile(member)
                if handle is None:
                    raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), resolved)
                return handle.read()
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), resolved)

    async def read_head(self, path: str, limit: int, *, lines: int | None = None) -> FilePart:
        check_relative(path)
        operands = [path, str(limit)]
        if lines is not None:
            operands.append(str(max(0, min(lines, limit + 1))))
        return self._part(await self._call("head", *operands), from_end=False)

    async def read_tail(self, path: str, limit: int, *, lines: int | None = None) -> FilePart:
        check_relative(path)
        if lines is not None and limit > TAIL_WINDOW_BYTES:
            part = self._part(await self._call("tail", path, str(TAIL_WINDOW_BYTES)), True)
            if part.start == 0 or part.data.count(b"\n") >= lines:
                return part
        return self._part(await self._call("tail", path, str(limit)), from_end=True)

    @staticmethod
    def _part(answer: bytes, from_end: bool) -> FilePart:
        """A ``head`` / ``tail`` answer (the size, a newline, the bytes) as a ``FilePart``."""
        size, _, data = answer.partition(b"\n")
        total = int(size)
        return FilePart(data, max(total - len(data), 0) if from_end else 0, total)

    async def write_bytes(self, path: str, data: bytes) -> None:
        self._writable()
        check_relative(path)
        if self.quota is None:
            await self._write(path, data)
            return
        async with self._quota_lock:  # check and write as one step: concurrent writes add up
            adding = charge("file", len(data))
            if self.usage + adding > self.quota:
                # Near the quota, what the write replaces decides (asked before uploading).
                replaced = _replaced_charge(await self._call("replaces", path))
                self.check_quota(adding - (replaced or 0), path)
            replaced = _replaced_charge(await self._write(path, data))
            if replaced is None:
                self.usage = await self.measure()
            else:
                self.usage += adding - replaced

    @functools.cached_property
    def _quota_lock(self) -> asyncio.Lock:
        return asyncio.Lock()

    async def _write(self, path: str, data: bytes) -> bytes:
        staged = f"w-{secrets.token_hex(8)}"
        await asyncio.to_thread(self._stage, staged, data)
        return await self._call("write", path, f"{STAGING_DIR}/{staged}")

    def _stage(self, name: str, data: bytes) -> None:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            now = time.time_ns()
            _stamp(info, now, now)
            archive.addfile(info, io.BytesIO(data))
        try:
            self.container.put_archive(STAGING_DIR, buffer.getvalue())
        except docker.errors.DockerException as error:
            raise _engine_error(f"uploading into {self.container.name}", error) from error

    async def make_directory(self, path: str) -> None:
        self._writable()
        check_relative(path)
        if self.quota is None:
            await self._call("mkdir", path)
            return
        async with self._quota_lock:
            allowed = max(self.quota - self.usage, 0) // BLOCK_BYTES
            try:
                made = await self._call("mkdir", path, str(allowed))
            except _TooManyDirectoriesError as refusal:
                raise QuotaExceededError(
                    self.usage, self.quota, refusal.count * BLOCK_BYTES, path
                ) from None
            count = made.decode("ascii", "replace").strip()
            if count.isdigit():
                self.usage += int(count) * BLOCK_BYTES
            else:  # the engine lost the answer
                self.usage = await self.measure()

    async def move(self, source: str, destination: str) -> None:
        self._writable()
        check_relative(source)
        check_relative(destination)
        await self._call("move", source, destination)

    async def stat(self, path: str) -> FileStat:
        relative = check_relative(path)
        entries = _entries(await self._call("stat", relative))
        if len(entries) != 1:
            raise OSError(errno.EIO, f"unexpected stat output for {relative!r}")
        return entries[0].file_stat(relative)

    async def list_directory(self, path: str) -> list[FileStat]:
        relative = check_relative(path)
        entries = _entries(await self._call("list", relative))
        found = [entry.file_stat(_join(relative, entry.relative)) for entry in entries]
        return sorted(found, key=lambda item: item.path)

    async def walk(self, path: str = "") -> list[FileStat]:
        relative = check_relative(path)
        entries = _entries(await self._call("walk", relative))
        found = [entry.file_stat(_join(relative, entry.relative)) for entry in entries]
        return sorted(found, key=lambda item: item.path)

    async def resolve(self, path: str) -> str:
        check_relative(path)
        resolved = (await self._call("resolve", path)).decode("utf-8", "surrogateescape")
        return "" if resolved == ROOT else resolved[len(ROOT) + 1 :]

    async def times(self) -> dict[str, tuple[int, int]]:
        """Exact (atime, mtime) in nanoseconds of every entry, the root under ""."""
        entries = _entries(await self._call("everything"))
        return {entry.relative: (entry.accessed, entry.modified) for entry in entries}

    async def archive(self, target: IO[bytes]) -> None:
        """Write the whole tree as a tar (members ``sandbox/...``) with exact times into target."""
        times = await self.times()
        await asyncio.to_thread(self._archive, times, target)

    def _archive(self, times: dict[str, tuple[int, int]], target: IO[bytes]) -> None:
        try:
            stream, _ = self.container.get_archive(ROOT)
        except docker.errors.DockerException as error:
            raise _engine_error(f"archiving the tree of {self.container.name}", error) from error
        base = ROOT.lstrip("/")
        source = io.BufferedReader(_ChunkReader(stream))
        with (
            tarfile.open(fileobj=source, mode="r|") as reader,
            tarfile.open(fileobj=target, mode="w", format=tarfile.PAX_FORMAT) as writer,
        ):
            for member in reader:
                relative = member.name[len(base) + 1 :] if member.name != base else ""
                if relative in times:
                    accessed, modified = times[relative]
                    _stamp(member, modified, accessed)
                writer.addfile(member, reader.extractfile(member) if member.isreg() else None)

    async def export(self, destination: Path) -> None:
        if destination.exists() or destination.is_symlink():
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(destination))
        times = await self.times()
        await asyncio.to_thread(self._export, times, destination)

    def _export(self, times: dict[str, tuple[int, int]], destination: Path) -> None:
        destination.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".aj-export-", dir=destination.parent))
        try:
            try:
                stream, _ = self.container.get_archive(ROOT)
            except docker.errors.DockerException as error:
                raise _engine_error(f"exporting {self.container.name}", error) from error
            source = io.BufferedReader(_ChunkReader(stream))
            with tarfile.open(fileobj=source, mode="r|") as archive:
                archive.extractall(scratch, filter=_extract_filter)
            extracted = scratch / ROOT.lstrip("/")
            # The archive rounds times to whole seconds; put the exact ones back.
            for relative, (accessed, modified) in times.items():
                with contextlib.suppress(FileNotFoundError):
                    os.utime(
                        extracted / relative if relative else extracted,
                        ns=(accessed, modified),
                        follow_symlinks=False,
                    )
            extracted.rename(destination)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


class DockerFilesystemSandbox(FilesystemSandbox):
    """A container whose ``/sandbox`` is the tree."""

    tree: DockerFileTree

    def __init__(
        self, provider: DockerFilesystemProvider, container: Container, *, read_only: bool = False
    ) -> None:
        self.provider = provider
        self.container = container
        self.name = str(container.name)
        self.read_only = read_only
        self.tree = DockerFileTree(container, read_only=read_only)
        self._destroyed = False

    async def freeze(self) -> DockerFilesystemSnapshot:
        if self.read_only:
            raise SandboxError(f"sandbox {self.name} is a read-only view and cannot be frozen")
        if self._destroyed:
            raise SandboxError(f"sandbox {self.name} was destroyed")
        name = current_run().new_name("fsnap")
        if self.provider.freeze_method == "commit":
            await asyncio.to_thread(self.provider.commit_image, self.container, name)
        else:
            await self.provider.load_image(self.tree, name)
        self._destroyed = True
        await asyncio.to_thread(remove_container, self.container)
        self.provider.forget(self)
        return self.provider.track_snapshot(DockerFilesystemSnapshot(self.provider, name))

    async def destroy(self) -> None:
        if self._destroyed or self.read_only:
            # A read-only view belongs to its snapshot, which removes the container.
            self._destroyed = True
            return
        self._destroyed = True
        await asyncio.to_thread(remove_container, self.container)
        self.provider.forget(self)


class DockerFilesystemSnapshot(FilesystemSnapshot):
    """An image holding the frozen tree; clones are containers of it."""

    def __init__(self, provider: DockerFilesystemProvider, name: str) -> None:
        self.provider = provider
        self.name = name
        self.image = f"{name}:latest"
        self._view: DockerFilesystemSandbox | None = None
        self._view_lock = asyncio.Lock()  # concurrent first readers must not start two views
        self._destroyed = False

    async def clone(self, *, writable: bool = True) -> DockerFilesystemSandbox:
        if self._destroyed:
            raise SandboxError(f"snapshot {self.name} was destroyed")
        if not writable:
            async with self._view_lock:
                if self._view is None:
                    container = await asyncio.to_thread(
                        self.provider.start_container, self.image, "fsview", None, read_only=True
                    )
                    self._view = DockerFilesystemSandbox(self.provider, container, read_only=True)
                return self._view
        container = await asyncio.to_thread(self.provider.start_container, self.image, "fs", None)
        clone = self.provider.track(DockerFilesystemSandbox(self.provider, container))
        await self.limit_clone(clone.tree, self.provider.quota_bytes)
        return clone

    async def destroy(self) -> None:
        if self._destroyed:
            return
        async with self._view_lock:
            if self._view is not None:
                await asyncio.to_thread(remove_container, self._view.container)
                self._view = None
        await asyncio.to_thread(self.provider.remove_image, self.image)
        self._destroyed = True
        self.provider.forget_snapshot(self)


class DockerFilesystemProvider(FilesystemProvider):
    """Creates filesystem sandboxes as containers of the sandbox image.

    ``image`` defaults to the tag of the current recipe; build it first with
    ``sandboxes.docker.images.ensure_sandbox_image``.
    """

    backend = "docker"

    def __init__(
        self,
        image: str | None = None,
        *,
        freeze_method: FreezeMethod = "load",
        quota_bytes: int | None = CLONE_QUOTA_BYTES,
    ) -> None:
        """``quota_bytes`` bounds what each writable clone may hold (None: no bound)."""
        super().__init__(quota_bytes=quota_bytes)
        self.image = image or sandbox_image_tag()
        self.freeze_method: FreezeMethod = freeze_method
        self._client: docker.DockerClient | None = None

    @property
    def client(self) -> docker.DockerClient:
        """The Engine client (made on first use)."""
        if self._client is None:
            try:
                self._client = docker.from_env(timeout=300)
            except docker.errors.DockerException as error:
                raise _engine_error("connecting to the Docker engine", error) from error
        return self._client

    def start_container(
        self, image: str, tag: str, tree: IO[bytes] | None, *, read_only: bool = False
    ) -> Container:
        """Create and start a container of ``image``, with ``tree`` (a ``/sandbox`` tar) in it."""
        name = current_run().new_name(tag)
        try:
            container = self.client.containers.create(
                image,
                command=["sleep", "infinity"],
                name=name,
                labels=run_labels("filesystem"),
                network_mode="none",
                read_only=read_only,
                detach=True,
            )
        except docker.errors.ImageNotFound as error:
            raise SandboxError(f"image {image} is missing (build it: {BUILD_COMMAND})") from error
        except docker.errors.DockerException as error:
            raise _engine_error(f"creating container {name}", error) from error
        try:
            if tree is not None:
                tree.seek(0)
                container.put_archive("/", tree)
            container.start()
        except BaseException as error:
            remove_container(container)
            if isinstance(error, docker.errors.DockerException):
                raise _engine_error(f"starting container {name}", error) from error
            raise
        return container

    def commit_image(self, container: Container, name: str) -> None:
        """Freeze by ``docker commit`` into ``name:latest``, labelled with the run id."""
        try:
            container.commit(
                repository=name,
                tag="latest",
                changes=[
                    f"LABEL {key}={value}"
                    for key, value in {**run_labels("filesystem"), IMAGE_LABEL: "fsnap"}.items()
                ],
            )
        except docker.errors.DockerException as error:
            raise _engine_error(f"committing {container.name}", error) from error

    async def load_image(self, tree: DockerFileTree, name: str) -> None:
        """Freeze by loading ``name:latest``: the sandbox image plus one layer with the tree."""
        with tempfile.TemporaryFile() as layer:
            await tree.archive(layer)
            await asyncio.to_thread(self._load, layer, name)

    def _load(self, layer: IO[bytes], name: str) -> None:
        try:
            base = self.client.images.get(self.image).attrs
        except docker.errors.DockerException as error:
            raise _engine_error(f"reading image {self.image}", error) from error
        layer.seek(0)
        digest = hashlib.sha256()
        for block in iter(lambda: layer.read(1 << 20), b""):
            digest.update(block)
        size = layer.tell()
        config = dict(base.get("Config") or {})
        config["Labels"] = {
            **(config.get("Labels") or {}),
            **run_labels("filesystem"),
            IMAGE_LABEL: "fsnap",
            "agentjudge.name": name,
        }
        base_layers: list[str] = list(base["RootFS"]["Layers"])
        document = json.dumps(
            {
                "architecture": base.get("Architecture", "amd64"),
                "os": base.get("Os", "linux"),
                "created": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
                "config": config,
                "rootfs": {
                    "type": "layers",
                    "diff_ids": [*base_layers, f"sha256:{digest.hexdigest()}"],
                },
            }
        ).encode()
        config_name = f"{hashlib.sha256(document).hexdigest()}.json"
        # The base layers are already in the Engine, which loads only layers it lacks: their
        # files need not be in the archive.
        manifest = json.dumps(
            [
                {
                    "Config": config_name,
                    "RepoTags": [f"{name}:latest"],
                    "Layers": [
                        *(f"base{index}/layer.tar" for index in range(len(base_layers))),
                        "tree/layer.tar",
                    ],
                }
            ]
        ).encode()
        with tempfile.TemporaryFile() as bundle:
            with tarfile.open(fileobj=bundle, mode="w") as archive:
                for member_name, content in ((config_name, document), ("manifest.json", manifest)):
                    info = tarfile.TarInfo(member_name)
                    info.size = len(content)
                    archive.addfile(info, io.BytesIO(content))
                info = tarfile.TarInfo("tree/layer.tar")
                info.size = size
                layer.seek(0)
                archive.addfile(info, layer)
            bundle.seek(0)
            try:
                self.client.images.load(bundle)
            except docker.errors.DockerException as error:
                raise _engine_error(f"loading snapshot image {name}", error) from error

    def remove_image(self, image: str) -> None:
        """Remove a snapshot image; refuse while clones still use it."""
        try:
            self.client.images.remove(image)
        except docker.errors.ImageNotFound:
            return
        except docker.errors.APIError as error:
            if error.status_code == 409:
                raise SandboxError(
                    f"snapshot image {image} is still used by a clone; destroy the clones first"
                ) from error
            raise _engine_error(f"removing image {image}", error) from error

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
        with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES) as tree:
            await asyncio.to_thread(_host_tree_archive, source, tree, task.id)
            container = await asyncio.to_thread(
                self.start_container,
                self.image,
                "fs",
                tree,
            )
        return self.track(DockerFilesystemSandbox(self, container))

    async def aclose(self) -> None:
        problems: list[str] = []
        # Clones before snapshots: a snapshot's image cannot go while a container uses it.
        for item in self.live():
            try:
                await item.destroy()
            except (SandboxError, docker.errors.DockerException) as error:
                problems.append(f"{item.name}: {error}")
        if self._client is not None:
            self._client.close()
            self._client = None
        if problems:
            raise SandboxError("could not remove every Docker sandbox: " + "; ".join(problems))
