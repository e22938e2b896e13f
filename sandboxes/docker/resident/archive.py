"""Tree archives with exact times, written and unpacked the same way at both ends.

Trees move into and out of containers as one tar stream (PAX format). Tar headers keep whole
seconds only, so every member also carries its modification and access times in nanoseconds as
PAX records, written and read back here; owners are kept as numbers. Unpacking refuses members
that would land outside the destination, directly or through a symbolic link unpacked earlier.
"""

from __future__ import annotations

import os
import tarfile
from collections.abc import Callable
from typing import IO


def _pax_time(nanoseconds: int) -> str:
    seconds, rest = divmod(nanoseconds, 1_000_000_000)
    return f"{seconds}.{rest:09d}"


def _nanoseconds(text: str) -> int:
    seconds, _, fraction = text.partition(".")
    if seconds.startswith("-"):
        return round(float(text) * 1e9)
    return int(seconds) * 1_000_000_000 + int((fraction + "000000000")[:9])


def stamp(info: tarfile.TarInfo, modified: int, accessed: int | None = None) -> None:
    """Give a tar member exact times (``tarfile`` would round them through a float)."""
    info.mtime = modified // 1_000_000_000
    headers = dict(info.pax_headers)
    headers["mtime"] = _pax_time(modified)
    if accessed is not None:
        headers["atime"] = _pax_time(accessed)
    headers.pop("ctime", None)
    info.pax_headers = headers


def write_tree(
    source: str | None,
    target: IO[bytes],
    base: str,
    *,
    check: Callable[[str], None] | None = None,
    owner_root: bool = False,
    now_ns: int = 0,
) -> None:
    """Archive the directory ``source`` as ``base/...`` (an empty ``base`` when None).

    Symbolic links stay links, hard links stay hard links; ``check`` is called with each entry's
    path before it is added; ``owner_root`` records every entry as owned by root.
    """
    with tarfile.open(fileobj=target, mode="w|", format=tarfile.PAX_FORMAT) as archive:
        if source is None:
            info = tarfile.TarInfo(base)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            stamp(info, now_ns)
            archive.addfile(info)
            return
        paths = [source]
        for directory, names, files in os.walk(source):
            names.sort()
            for name in [*names, *sorted(files)]:
                path = os.path.join(directory, name)
                if check is not None:
                    check(path)
                paths.append(path)
        for path in paths:
            relative = os.path.relpath(path, source)
            info = archive.gettarinfo(path, base if relative == "." else f"{base}/{relative}")
            if owner_root:
                info.uid = info.gid = 0
                info.uname = info.gname = "root"
            status = os.lstat(path)
            stamp(info, status.st_mtime_ns, status.st_atime_ns)
            if info.isreg():
                with open(path, "rb") as handle:
                    archive.addfile(info, handle)
            else:
                archive.addfile(info)


class UnsafeMemberError(ValueError):
    """An archive member would land outside the destination."""


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + os.sep)


def _checked(member: tarfile.TarInfo, destination: str) -> tarfile.TarInfo:
    parts = member.name.split("/")
    if member.name.startswith("/") or ".." in parts:
        raise UnsafeMemberError(f"refusing archive member {member.name!r}")
    if member.islnk() and (member.linkname.startswith("/") or ".." in member.linkname.split("/")):
        raise UnsafeMemberError(f"refusing hard link {member.name!r} -> {member.linkname!r}")
    if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
        raise UnsafeMemberError(f"refusing archive member {member.name!r} of a special kind")
    for name in (member.name, member.linkname) if member.islnk() else (member.name,):
        parent = os.path.realpath(os.path.join(destination, os.path.dirname(name)))
        if not _inside(parent, destination):
            raise UnsafeMemberError(
                f"archive member {member.name!r} reaches outside through a link"
            )
    return member


def _stripped(member: tarfile.TarInfo, base: str) -> tarfile.TarInfo:
    """``member`` named relative to its archive's top folder ``base`` (``.`` for that folder)."""
    for field in ("name", "linkname") if member.islnk() else ("name",):
        name = getattr(member, field)
        if name == base:
            setattr(member, field, ".")
        elif name.startswith(base + "/"):
            setattr(member, field, name[len(base) + 1 :])
        else:
            raise UnsafeMemberError(f"archive member {name!r} is outside {base!r}")
    return member


def unpack_tree(source: IO[bytes], destination: str, *, strip: str | None = None) -> None:
    """Unpack a stream written by ``write_tree`` below the existing folder ``destination`` (with
    ``strip``, the archive's top folder of that name becomes ``destination`` itself), then give
    every entry its exact times (children before their folders)."""
    destination = os.path.realpath(destination)
    times: list[tuple[str, int, int]] = []
    with tarfile.open(fileobj=source, mode="r|") as archive:
        for member in archive:
            if strip is not None:
                _stripped(member, strip)
            archive.extract(member, destination, set_attrs=True, filter=_checked)
            headers = member.pax_headers
            modified = _nanoseconds(headers["mtime"]) if "mtime" in headers else None
            if modified is None:
                modified = int(member.mtime) * 1_000_000_000
            accessed = _nanoseconds(headers["atime"]) if "atime" in headers else modified
            times.append(
                (os.path.normpath(os.path.join(destination, member.name)), accessed, modified)
            )
    for path, accessed, modified in reversed(times):
        try:
            os.utime(path, ns=(accessed, modified), follow_symlinks=False)
        except FileNotFoundError:
            continue
