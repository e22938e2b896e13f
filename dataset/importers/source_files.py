"""The rule every importer follows when it takes a file from a source folder into a dataset.

A source folder (a run folder, an export, a download folder) is untrusted: only regular files are
read, and a symbolic link is followed only while it stays inside the folder the user named; its
target is then copied as a plain file, never as a link. A link leading out (``memo.docx ->
~/secret``, ``1.xml -> /etc/passwd``), a FIFO or a device is refused with ``SourceFileError``
naming the file. Must not decide which files an importer wants.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from storage.files import write_bytes_atomic

__all__ = [
    "SourceFileError",
    "copy_source_file",
    "copy_source_tree",
    "read_source_file",
    "source_file_inside",
]


class SourceFileError(ValueError):
    """A source file that is not a regular file inside its source folder; names the file."""


def source_file_inside(path: Path, root: Path) -> Path:
    """``path`` resolved, when it is a regular file inside ``root`` (links followed only inside)."""
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError) as error:
        raise SourceFileError(f"{path}: cannot be read: {error}") from None
    base = root.resolve()
    if not resolved.is_relative_to(base):
        raise SourceFileError(
            f"{path}: leads to {resolved}, outside the source folder {root}; not imported"
        )
    if not stat.S_ISREG(resolved.stat().st_mode):
        raise SourceFileError(f"{path}: is not a regular file; not imported")
    return resolved


def read_source_file(path: Path, root: Path) -> bytes:
    """The bytes of ``path``, a regular file inside ``root`` (see ``source_file_inside``)."""
    resolved = source_file_inside(path, root)
    # O_NOFOLLOW: a link swapped in after the check is refused rather than read.
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        descriptor = os.open(resolved, flags)
    except OSError as error:
        raise SourceFileError(f"{path}: cannot be read: {error.strerror}") from None
    with os.fdopen(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            raise SourceFileError(f"{path}: is not a regular file; not imported")
        return stream.read()


def copy_source_file(path: Path, root: Path, target: Path) -> None:
    """Copy ``path`` (a regular file inside ``root``) to ``target`` as a plain file."""
    # Written by rename: a link left at ``target`` is replaced, never written through.
    write_bytes_atomic(target, read_source_file(path, root))


def copy_source_tree(source: Path, target: Path) -> None:
    """Copy the folder ``source`` to ``target``: folders and regular files only, a link inside
    ``source`` copied as the plain file it leads to, a link leading out (or to a folder) refused."""
    for top, folders, files in os.walk(source, followlinks=False):
        here = Path(top)
        for name in folders:
            if (here / name).is_symlink():
                raise SourceFileError(f"{here / name}: is a link to a folder; not imported")
        for name in files:
            path = here / name
            copy_source_file(path, source, target / path.relative_to(source))
    target.mkdir(parents=True, exist_ok=True)
