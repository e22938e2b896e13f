"""The rule every importer follows when it takes a file from a source folder into a dataset.

A source folder (a run folder, an export, a download folder) is untrusted: only regular files are
read, and a symbolic link is followed only while it stays inside the folder the user named; its
target is then copied as a plain file, never as a link. A link leading out (``memo.docx ->
~/secret``, ``1.xml -> /etc/passwd``), a FIFO or a device is refused with ``SourceFileError``
naming the file. Every importer takes files through this module (OSWorld downloads, mobile
screens and UI dumps, search page archives, tree copies), so all follow the one link policy. Must
not decide which files an importer wants.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal

from storage.files import write_bytes_atomic

__all__ = [
    "Refusal",
    "SourceFileError",
    "copy_source",
    "copy_source_file",
    "copy_source_tree",
    "read_source_file",
    "source_file_inside",
]


Refusal = Literal["missing", "outside", "not_regular", "folder_link"]
"""Why a source file is refused: it cannot be read (missing, a link loop), it is (or leads)
outside the source folder, it is not a regular file, or it is a link to a folder."""


class SourceFileError(ValueError):
    """A source file that is not a regular file inside its source folder; names the file."""

    def __init__(self, message: str, *, path: Path, reason: Refusal) -> None:
        super().__init__(message)
        self.path = path
        """The file as the source named it."""
        self.reason: Refusal = reason
        """Why it is refused."""


def source_file_inside(path: Path, root: Path) -> Path:
    """``path`` resolved, when it is a regular file inside ``root`` (links followed only inside)."""
    if not _named_inside(path, root):
        raise SourceFileError(
            f"{path}: is outside the source folder {root}; not imported",
            path=path,
            reason="outside",
        )
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError) as error:
        raise SourceFileError(
            f"{path}: cannot be read: {error}", path=path, reason="missing"
        ) from None
    base = root.resolve()
    if not resolved.is_relative_to(base):
        raise SourceFileError(
            f"{path}: leads to {resolved}, outside the source folder {root}; not imported",
            path=path,
            reason="outside",
        )
    if not stat.S_ISREG(resolved.stat().st_mode):
        raise SourceFileError(
            f"{path}: is not a regular file; not imported", path=path, reason="not_regular"
        )
    return resolved


def _named_inside(path: Path, root: Path) -> bool:
    """Whether ``path`` is named inside ``root`` (its '..' parts, and links above its last part,
    taken into account), before anything is read."""
    if Path(os.path.normpath(path.absolute())).is_relative_to(os.path.normpath(root.absolute())):
        return True
    try:
        return (path.absolute().parent.resolve() / path.name).is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


def read_source_file(path: Path, root: Path) -> bytes:
    """The bytes of ``path``, a regular file inside ``root`` (see ``source_file_inside``)."""
    resolved = source_file_inside(path, root)
    # O_NOFOLLOW: a link swapped in after the check is refused rather than read.
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        descriptor = os.open(resolved, flags)
    except OSError as error:
        raise SourceFileError(
            f"{path}: cannot be read: {error.strerror}", path=path, reason="missing"
        ) from None
    with os.fdopen(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            raise SourceFileError(
                f"{path}: is not a regular file; not imported", path=path, reason="not_regular"
            )
        return stream.read()


def copy_source_file(path: Path, root: Path, target: Path) -> None:
    """Copy ``path`` (a regular file inside ``root``) to ``target`` as a plain file."""
    # Written by rename: a link left at ``target`` is replaced, never written through.
    write_bytes_atomic(target, read_source_file(path, root))


def copy_source_tree(
    source: Path, target: Path, *, refused: list[SourceFileError] | None = None
) -> None:
    """Copy the folder ``source`` to ``target``: folders and regular files only, a link inside
    ``source`` copied as the plain file it leads to, a link leading out (or to a folder) refused.

    The first refusal is raised; with ``refused`` given, each is added to it instead and the
    copy goes on without that file."""
    for top, folders, files in os.walk(source, followlinks=False):
        here = Path(top)
        (target / here.relative_to(source)).mkdir(parents=True, exist_ok=True)
        for name in [*folders, *files]:
            path = here / name
            try:
                if name in folders:
                    if path.is_symlink():
                        raise SourceFileError(
                            f"{path}: is a link to a folder; not imported",
                            path=path,
                            reason="folder_link",
                        )
                else:
                    copy_source_file(path, source, target / path.relative_to(source))
            except SourceFileError as error:
                if refused is None:
                    raise
                refused.append(error)
        folders[:] = [name for name in folders if not (here / name).is_symlink()]


def copy_source(source: Path, target: Path, refused: list[SourceFileError]) -> None:
    """Copy ``source``, a folder tree (see ``copy_source_tree``) or a single file the user named
    (inside its own folder), to ``target``; refusals are added to ``refused``."""
    if source.is_dir() and not source.is_symlink():
        copy_source_tree(source, target, refused=refused)
        return
    try:
        copy_source_file(source, source.parent, target)
    except SourceFileError as error:
        refused.append(error)
