"""Opening a file for writing inside a folder that someone else may have prepared.

Owns the rule every writer of a results folder, dataset or scratch space follows: a file is
reached from its folder one component at a time without following a symbolic link, and is
written only when it is a regular file with a single name. A planted ``verdicts.jsonl ->
~/.bashrc``, a ``logs -> /etc`` folder, a FIFO or a hard link to another file is refused with an
error naming the path, never written through. Must not decide what goes into the file.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from pathlib import Path

from storage.locks import ResultsFolderError

__all__ = ["UnsafeFileError", "open_confined"]

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafeFileError(ResultsFolderError):
    """A file the runtime would write is a link, not a regular file, or outside its folder;
    the message names it."""


def open_confined(path: Path, flags: int, *, within: Path | None = None, mode: int = 0o644) -> int:
    """Open ``path`` (a file inside ``within``, default its own folder) and return its descriptor.

    Every folder between ``within`` and the file must be a real folder (missing ones are made,
    ``mode`` 0o755) and the file itself, when it exists, a regular file with one name; a symbolic
    link anywhere below ``within`` is refused. ``within`` itself is the caller's choice and may be
    reached through links. ``flags`` are ``os.open`` flags (``O_NOFOLLOW`` and ``O_CLOEXEC`` are
    added).
    """
    folder = path.parent if within is None else within
    try:
        relative = path.relative_to(folder)
    except ValueError:
        raise UnsafeFileError(f"{path}: is outside {folder}, so it is not written") from None
    parts = relative.parts
    if not parts or any(part in ("..", ".") for part in parts):
        raise UnsafeFileError(f"{path}: does not name a file inside {folder}")
    directory = _open_folder(folder, folder, None)
    try:
        reached = folder
        for part in parts[:-1]:
            reached = reached / part
            inner = _open_folder(reached, part, directory, create=bool(flags & os.O_CREAT))
            os.close(directory)
            directory = inner
        return _open_file(path, parts[-1], directory, flags, mode)
    finally:
        os.close(directory)


def _open_folder(shown: Path, name: str | Path, parent: int | None, *, create: bool = False) -> int:
    if create and parent is not None:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o755, dir_fd=parent)
    try:
        if parent is None:  # the caller's folder: links to it are the caller's choice
            return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        return os.open(name, _FOLDER_FLAGS, dir_fd=parent)
    except OSError as error:
        if parent is not None and _is_link(name, parent):
            raise UnsafeFileError(
                f"{shown}: is a symbolic link; files are not written through it"
            ) from None
        raise UnsafeFileError(f"{shown}: cannot be opened as a folder: {error.strerror}") from None


def _open_file(path: Path, name: str, directory: int, flags: int, mode: int) -> int:
    # O_NONBLOCK keeps a planted FIFO from blocking the open; it is cleared again below.
    wanted = flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        descriptor = os.open(name, wanted, mode, dir_fd=directory)
    except OSError as error:
        if _is_link(name, directory):
            raise UnsafeFileError(
                f"{path}: is a symbolic link; it is not written through"
            ) from None
        if isinstance(error, FileNotFoundError):
            raise
        raise UnsafeFileError(f"{path}: cannot be opened: {error.strerror}") from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise UnsafeFileError(f"{path}: is not a regular file; it is not written")
        if status.st_nlink > 1:
            raise UnsafeFileError(
                f"{path}: has {status.st_nlink} names (a hard link to another file); "
                "it is not written"
            )
        if not flags & os.O_NONBLOCK:
            fcntl.fcntl(
                descriptor, fcntl.F_SETFL, fcntl.fcntl(descriptor, fcntl.F_GETFL) & ~os.O_NONBLOCK
            )
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def _is_link(name: str | Path, directory: int) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=directory).st_mode)
    except OSError:
        return False
