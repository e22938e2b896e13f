"""Tool failures worded like the reference server: Node.js's ``CODE: description, syscall 'path'``.

Owns ``ToolError`` (a failure whose text the server would send) and the translation of the
tree's ``OSError``s into Node's errno codes and messages. Two failures the reference server never
meets are worded plainly instead: a write past the clone's size quota, and a read of something
that is not a regular file (which the reference would hang on or read forever).
"""

from __future__ import annotations

import errno as errno_module

from sandboxes.filesystem.tree import QuotaExceededError, ReadOnlyTreeError, SpecialFileError


class ToolError(Exception):
    """A tool failure; ``str()`` is the message the server would send (without ``Error: ``)."""


_ERRNO_TEXT = {
    "ENOENT": "no such file or directory",
    "EEXIST": "file already exists",
    "ENOTDIR": "not a directory",
    "EISDIR": "illegal operation on a directory",
    "EACCES": "permission denied",
    "EPERM": "operation not permitted",
    "EROFS": "read-only file system",
    "EINVAL": "invalid argument",
    "ENOTEMPTY": "directory not empty",
    "EXDEV": "cross-device link not permitted",
    "ELOOP": "too many symbolic links encountered",
    "ENAMETOOLONG": "name too long",
    "ENOSPC": "no space left on device",
    "EBUSY": "resource busy or locked",
}


def node_error(code: str, syscall: str, path: str | None = None, dest: str | None = None) -> str:
    """Node's ``uvException`` message: ``CODE: description, syscall 'path' -> 'dest'``."""
    text = f"{code}: {_ERRNO_TEXT.get(code, code.lower())}, {syscall}"
    if path is not None:
        text += f" '{path}'"
    if dest is not None:
        text += f" -> '{dest}'"
    return text


_ERROR_CODES: list[tuple[type[OSError], str]] = [
    (ReadOnlyTreeError, "EROFS"),
    (FileNotFoundError, "ENOENT"),
    (FileExistsError, "EEXIST"),
    (NotADirectoryError, "ENOTDIR"),
    (IsADirectoryError, "EISDIR"),
]


def _errno_code(error: OSError) -> str:
    for kind, code in _ERROR_CODES:
        if isinstance(error, kind):
            return code
    if error.errno is not None and error.errno in errno_module.errorcode:
        return errno_module.errorcode[error.errno]
    return "EACCES" if isinstance(error, PermissionError) else "EIO"


def os_failure(error: OSError, syscall: str, path: str, dest: str | None = None) -> ToolError:
    """The failure Node reports for ``error`` in ``syscall`` (a directory read names no path)."""
    if isinstance(error, QuotaExceededError):
        return ToolError(
            f"quota reached: the sandbox holds {error.usage} of {error.quota} bytes;"
            f" this change to {path} would add {error.adding} more"
        )
    if isinstance(error, SpecialFileError):
        return ToolError(f"Cannot read {path}: it is a {error.kind}, not a regular file")
    code = _errno_code(error)
    if code == "EISDIR" and syscall == "read":
        return ToolError(node_error(code, "read"))
    return ToolError(node_error(code, syscall, path, dest))
