"""The operations the resident helper performs on the tree at ``/sandbox``.

Paths arrive relative to the tree (the host checked them, and they are checked again here). They
are resolved inside the container and must stay in the tree; failures are answered as errno names
(``ENOENT``, ``ENOTDIR``, ...) or the helper's own codes: ``ESCAPE`` (resolves outside the tree),
``LINKED`` (a hard link also named outside it), ``ENOTREG`` (not a regular file) and ``EDQUOT``
(a ``mkdir`` would make more directories than allowed). The host raises from them what the local
backend would raise for the same path, so both backends behave the same.

The tree's folder is a tmpfs mounted at ``/sandbox`` (the container's own root filesystem may be a
slow FUSE overlay), empty when the container starts. A frozen snapshot is attached by serving it
from its read-only folder (``/snapshots/<name>``, bind-mounted from the host): a read-only view
stays so, and a writable clone reads the snapshot until its first write, which first copies the
snapshot into ``/sandbox`` (hard links, modes and exact times kept). A write goes to a temporary
file beside its target, renamed over it once complete, after every check that can fail.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from typing import IO, Any

from .archive import UnsafeMemberError, unpack_tree, write_tree

ROOT = "/sandbox"
"""Where the tree lives: the mount point of a tmpfs, empty until a tree is unpacked or copied."""

SNAPSHOTS = "/snapshots"
"""Where the host's frozen snapshots are mounted, read-only."""

READ_BYTES = 1 << 20

_KINDS = {stat.S_IFREG: "f", stat.S_IFDIR: "d", stat.S_IFLNK: "l"}


class HelperError(Exception):
    """A failure answered to the host: ``code`` and, for some codes, ``detail``."""

    def __init__(self, code: str, detail: Any = None) -> None:
        super().__init__(code, detail)
        self.code = code
        self.detail = detail


Answer = tuple[Any, bytes | Iterator[bytes] | Callable[[IO[bytes]], None]]
"""What an operation returns: its result and its payload (bytes, chunks, or a function that
writes the payload to a file)."""


def _record(path: str, relative: str) -> list[Any]:
    info = os.lstat(path)
    kind = _KINDS.get(stat.S_IFMT(info.st_mode), "o")
    return [
        kind,
        info.st_size,
        info.st_mode & 0o7777,
        info.st_mtime_ns,
        info.st_atime_ns,
        info.st_ctime_ns,
        relative,
    ]


def _special_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"


def _relative(path: Any) -> str:
    if not isinstance(path, str) or "\0" in path:
        raise HelperError("EINVAL", "a path must be a string without null bytes")
    if path in ("", "."):
        return ""
    if path.startswith("/") or ".." in path.split("/") or os.path.normpath(path) != path:
        raise HelperError("ESCAPE", path)
    return path


def _exists(path: str) -> bool:
    return os.path.lexists(path)


def _ancestor(path: str) -> str:
    """The nearest existing ancestor of ``path``."""
    head = path.rsplit("/", 1)[0]
    while head and not _exists(head):
        head = head.rsplit("/", 1)[0]
    return head or "/"


def _missing(path: str) -> HelperError:
    return HelperError("ENOENT" if os.path.isdir(_ancestor(path)) else "ENOTDIR")


def _need_directory(path: str) -> None:
    if os.path.isdir(path):
        return
    if _exists(path):
        raise HelperError("ENOTDIR")
    raise _missing(path)


def _replaced(path: str) -> list[Any] | None:
    """What a write to ``path`` replaces: ``["f", size]``, ``["o", 0]`` (another kind) or None."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISREG(info.st_mode):
        return ["f", info.st_size]
    return ["o", 0]


def _copy_tree(source: str, target: str) -> None:
    """Copy the folder ``source`` into the empty folder ``target``: links stay links, hard links
    stay hard links, modes and exact times are kept (folders' times set last)."""
    folders: list[tuple[str, os.stat_result]] = [(target, os.lstat(source))]
    copied: dict[tuple[int, int], str] = {}
    for directory, names, files in os.walk(source):
        below = os.path.relpath(directory, source)
        place = target if below == "." else os.path.join(target, below)
        for name in [*names, *files]:
            origin = os.path.join(directory, name)
            destination = os.path.join(place, name)
            info = os.lstat(origin)
            if stat.S_ISLNK(info.st_mode):
                os.symlink(os.readlink(origin), destination)
            elif stat.S_ISDIR(info.st_mode):
                os.mkdir(destination)
                folders.append((destination, info))
                continue
            elif stat.S_ISREG(info.st_mode):
                key = (info.st_dev, info.st_ino)
                if info.st_nlink > 1 and key in copied:
                    os.link(copied[key], destination)
                    continue
                shutil.copyfile(origin, destination, follow_symlinks=False)
                os.chmod(destination, info.st_mode & 0o7777)
                copied[key] = destination
            else:
                continue  # a FIFO or device never enters a tree; never copy one
            os.utime(destination, ns=(info.st_atime_ns, info.st_mtime_ns), follow_symlinks=False)
    for folder, info in reversed(folders):
        os.chmod(folder, info.st_mode & 0o7777)
        os.utime(folder, ns=(info.st_atime_ns, info.st_mtime_ns))


class Tree:
    """The tree at ``root`` and the operations on it (``do_<operation>``), one at a time."""

    def __init__(self, root: str = ROOT, snapshots: str = SNAPSHOTS) -> None:
        self.visible = root
        self.snapshots = snapshots
        self.attached: str | None = None
        """The snapshot folder served in place of the tree (until a writable clone's copy)."""
        self.read_only = False

    # Paths ------------------------------------------------------------------------------------

    def base(self) -> str:
        """The tree's folder, links followed (an attached snapshot's folder until copied)."""
        return os.path.realpath(self.attached or self.visible)

    def _inside(self, path: str, base: str) -> bool:
        return path == base or path.startswith(base + "/")

    def full(self, relative: str) -> str:
        """``relative`` with every link followed; it must stay in the tree."""
        base = self.base()
        path = os.path.realpath(os.path.join(base, relative)) if relative else base
        if not self._inside(path, base):
            raise HelperError("ESCAPE")
        return path

    def last(self, relative: str) -> str:
        """``relative`` with links followed in its folder but not in its last part."""
        base = self.base()
        if not relative:
            return base
        folder, _, name = relative.rpartition("/")
        parent = os.path.realpath(os.path.join(base, folder)) if folder else base
        if not self._inside(parent, base):
            raise HelperError("ESCAPE")
        return f"{parent}/{name}"

    def _landing(self, relative: str) -> str:
        """Where a write to ``relative`` lands (a link inside the tree is followed)."""
        target = self.last(relative)
        return self.full(relative) if os.path.islink(target) else target

    def _readable(self, relative: str) -> tuple[str, os.stat_result]:
        path = self.full(relative)
        if os.path.isdir(path):
            raise HelperError("EISDIR")
        if not _exists(path):
            raise _missing(path)
        if os.path.islink(path):
            raise HelperError("ELOOP")  # still a link once resolved: a loop
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise HelperError("ENOTREG", _special_kind(info.st_mode))
        if info.st_nlink > 1 and not self._own_links(info):
            raise HelperError("LINKED")
        return path, info

    def _own_links(self, info: os.stat_result) -> bool:
        """Whether every hard link of a file is a name inside the tree."""
        found = 0
        for directory, _, files in os.walk(self.base()):
            for name in files:
                other = os.lstat(os.path.join(directory, name))
                found += (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino)
        return found >= info.st_nlink

    def _writable(self) -> None:
        if self.read_only:
            raise HelperError("EROFS")
        if self.attached is not None:
            self._materialise()

    def _materialise(self) -> None:
        """Copy the attached snapshot into the tree's own folder, which is served from now on."""
        assert self.attached is not None
        try:
            _copy_tree(os.path.realpath(self.attached), self.visible)
        except BaseException:
            _empty(self.visible)
            raise
        self.attached = None

    # Reads ------------------------------------------------------------------------------------

    def do_ping(self) -> Answer:
        return {"pid": os.getpid()}, b""

    def do_resolve(self, path: str) -> Answer:
        full = self.full(_relative(path))
        base = self.base()
        return ("" if full == base else full[len(base) + 1 :]), b""

    def do_stat(self, path: str) -> Answer:
        target = self.last(_relative(path))
        if not _exists(target):
            raise _missing(target)
        return _record(target, ""), b""

    def do_list(self, path: str) -> Answer:
        folder = self.full(_relative(path))
        _need_directory(folder)
        with os.scandir(folder) as entries:
            found = [_record(entry.path, entry.name) for entry in entries]
        return found, b""

    def _below(self, folder: str, with_root: bool) -> list[list[Any]]:
        found = [_record(folder, "")] if with_root else []
        for directory, names, files in os.walk(folder):
            below = os.path.relpath(directory, folder)
            prefix = "" if below == "." else below + "/"
            for name in [*names, *files]:
                found.append(_record(os.path.join(directory, name), prefix + name))
        return found

    def do_walk(self, path: str) -> Answer:
        folder = self.full(_relative(path))
        if not os.path.isdir(folder):
            return [], b""
        return self._below(folder, with_root=False), b""

    def do_everything(self) -> Answer:
        return self._below(self.base(), with_root=True), b""

    def do_read(self, path: str) -> Answer:
        full, info = self._readable(_relative(path))

        def chunks() -> Iterator[bytes]:
            with open(full, "rb") as handle:
                while block := handle.read(READ_BYTES):
                    yield block

        return info.st_size, chunks()

    def do_head(self, path: str, limit: int, lines: int | None = None) -> Answer:
        full, info = self._readable(_relative(path))
        with open(full, "rb") as handle:
            data = handle.read(max(0, int(limit)))
        if lines is not None:
            position = -1
            for _ in range(max(0, int(lines))):
                position = data.find(b"\n", position + 1)
                if position < 0:
                    break
            else:
                data = data[: position + 1]
        return info.st_size, data

    def do_tail(self, path: str, limit: int) -> Answer:
        full, info = self._readable(_relative(path))
        with open(full, "rb") as handle:
            handle.seek(max(0, info.st_size - max(0, int(limit))))
            data = handle.read()
        return info.st_size, data

    def do_replaces(self, path: str) -> Answer:
        return _replaced(self._landing(_relative(path))), b""

    def do_materialise(self) -> Answer:
        """Give a writable clone its private copy now (others are about to write in it)."""
        if not self.read_only and self.attached is not None:
            self._materialise()
        return None, b""

    def do_reset(self) -> Answer:
        """Drop the tree: the container is as it started, ready for the next sandbox (only ever
        asked of a container in which nothing but the helper worked)."""
        _empty(self.visible)
        self.attached = None
        self.read_only = False
        return None, b""

    def do_pack(self) -> Answer:
        base = self.base()

        def write(target: IO[bytes]) -> None:
            write_tree(base, target, ROOT.lstrip("/"))

        return None, write

    # Writes -----------------------------------------------------------------------------------

    def do_write(self, path: str, data: bytes) -> Answer:
        relative = _relative(path)
        self._writable()
        target = self._landing(relative)
        if os.path.isdir(target):
            raise HelperError("EISDIR")
        folder = target.rsplit("/", 1)[0] or "/"
        _need_directory(folder)
        mode = os.stat(target).st_mode & 0o7777 if os.path.exists(target) else 0o644
        replaced = _replaced(target)
        # Refused names must fail before the temporary file exists (some filesystems, FUSE
        # overlays among them, answer a lookup of an over-long name with ENOENT).
        if len(os.fsencode(os.path.basename(target))) > os.pathconf(folder, "PC_NAME_MAX"):
            raise HelperError("ENAMETOOLONG")
        descriptor, temporary = tempfile.mkstemp(prefix=".aj-write-", dir=folder)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
            os.chmod(temporary, mode)
            os.rename(temporary, target)
        except BaseException:
            if _exists(temporary):
                os.unlink(temporary)
            raise
        return replaced, b""

    def do_mkdir(self, path: str, allowed: int | None = None) -> Answer:
        relative = _relative(path)
        self._writable()
        target = self.full(relative)
        if os.path.isdir(target):
            return 0, b""
        if _exists(target):
            raise HelperError("EEXIST")
        ancestor = _ancestor(target)
        if not os.path.isdir(ancestor):
            raise HelperError("ENOTDIR")
        count = 0
        step = target
        while step != ancestor and step:
            count += 1
            step = step.rsplit("/", 1)[0]
        if allowed is not None and count > int(allowed):
            raise HelperError("EDQUOT", count)
        os.makedirs(target)
        return count, b""

    def do_move(self, source: str, destination: str) -> Answer:
        origin_relative, target_relative = _relative(source), _relative(destination)
        self._writable()
        origin = self.last(origin_relative)
        target = self.last(target_relative)
        if not _exists(origin):
            raise HelperError("ENOENT")
        if _exists(target):
            raise HelperError("EEXIST")
        _need_directory(target.rsplit("/", 1)[0] or "/")
        if target.startswith(origin + "/"):
            raise HelperError("EINVAL")
        os.rename(origin, target)
        return None, b""

    def do_unpack(self, source: IO[bytes]) -> Answer:
        """Make the archive (members ``sandbox/...``) the tree; the tree must be empty."""
        if self.attached is not None or os.listdir(self.visible):
            raise HelperError("EEXIST", "the tree already exists")
        try:
            unpack_tree(source, self.visible, strip=ROOT.lstrip("/"))
        except (UnsafeMemberError, tarfile.TarError) as error:
            _empty(self.visible)
            raise HelperError("EINVAL", str(error)) from None
        return None, b""

    def do_attach(self, name: str, writable: bool) -> Answer:
        """Serve the snapshot ``name`` as the tree (read-only, or copied on the first write)."""
        if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
            raise HelperError("EINVAL", f"bad snapshot name {name!r}")
        source = os.path.join(self.snapshots, name)
        if not os.path.isdir(source):
            raise HelperError("ENOENT", f"no snapshot {name}")
        if self.attached is not None or os.listdir(self.visible):
            raise HelperError("EEXIST", "the tree already exists")
        self.attached = source
        self.read_only = not writable
        return None, b""


def _empty(folder: str) -> None:
    """Remove everything inside ``folder`` (a mount point: the folder itself stays)."""
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)


OPERATIONS = frozenset(
    {
        "ping", "resolve", "stat", "list", "walk", "everything", "read", "head", "tail",
        "replaces", "materialise", "reset", "pack", "write", "mkdir", "move", "unpack", "attach",
    }
)  # fmt: skip
"""The operations a request may name (``Tree.do_<name>``)."""

PAYLOAD_BYTES = frozenset({"write"})
"""Operations whose request payload is read whole and passed as the last argument."""

PAYLOAD_STREAM = frozenset({"unpack"})
"""Operations whose request payload is passed as a readable file."""


def error_code(error: OSError) -> str:
    """The errno name of an ``OSError`` raised while serving (``EIO`` when it has none)."""
    return errno.errorcode.get(error.errno or errno.EIO, "EIO")
