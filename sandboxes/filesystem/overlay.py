"""Overlay mounts: an O(1) private writable clone of a frozen tree (Linux, root only).

The frozen tree is the read-only lower layer; the clone's writes go to its own upper layer (the
kernel copies a file up on its first write, whoever writes it and however). Mounting needs
CAP_SYS_ADMIN; ``overlay_supported`` probes once and the local backend falls back to hard-link
farms where it is not available. Mounts are made with ``mount(2)`` through ctypes: starting the
``mount`` program per judge would cost more than the clone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import tempfile
from pathlib import Path

MNT_DETACH = 2
"""``umount2`` flag: detach now, finish when the last user lets go."""

_UNSAFE_IN_OPTIONS = frozenset(",:\\")


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def _fail(call: str, path: Path) -> OSError:
    number = ctypes.get_errno()
    return OSError(number, f"{call}: {os.strerror(number)}", str(path))


def mount_overlay(lower: Path, upper: Path, work: Path, merged: Path) -> None:
    """Mount ``lower`` (read-only) + ``upper`` (writes) at ``merged``; all must exist."""
    paths = [str(path) for path in (lower, upper, work, merged)]
    if any(character in _UNSAFE_IN_OPTIONS for path in paths for character in path):
        raise OSError(f"overlay paths may not contain ',', ':' or '\\': {paths}")
    options = f"lowerdir={paths[0]},upperdir={paths[1]},workdir={paths[2]}".encode()
    if _libc().mount(b"overlay", paths[3].encode(), b"overlay", 0, options) != 0:
        raise _fail("mount overlay", merged)


def unmount(path: Path) -> None:
    """Detach the mount at ``path``; not mounted is fine."""
    if _libc().umount2(str(path).encode(), MNT_DETACH) != 0:
        number = ctypes.get_errno()
        if number not in (22, 2):  # EINVAL: not a mount point; ENOENT: gone
            raise _fail("umount", path)


@functools.cache
def overlay_supported(scratch: Path) -> bool:
    """Whether an overlay can be mounted under ``scratch`` (probed once per folder)."""
    try:
        probe = Path(tempfile.mkdtemp(prefix=".aj-overlay-probe-", dir=scratch))
    except OSError:
        return False
    layers = [probe / name for name in ("lower", "upper", "work", "merged")]
    try:
        for layer in layers:
            layer.mkdir()
        mount_overlay(*layers)
    except OSError:
        return False
    else:
        unmount(layers[3])
        return True
    finally:
        for layer in reversed(layers):
            for inner in layer.iterdir() if layer.exists() else []:
                os.rmdir(inner)  # overlay's work/ holds an empty work/ directory
            if layer.exists():
                layer.rmdir()
        probe.rmdir()


def mounts_below(folder: Path) -> list[Path]:
    """Mount points at or below ``folder``, deepest first (from ``/proc/self/mountinfo``)."""
    prefix = str(folder.resolve())
    found: list[Path] = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        point = line.split()[4].encode().decode("unicode_escape")
        if point == prefix or point.startswith(prefix + "/"):
            found.append(Path(point))
    return sorted(found, key=lambda path: len(path.parts), reverse=True)
