"""The reference server's path rule, with the tree's root as the one allowed directory.

Owns how a path the agent gives (absolute under the root, relative to it, or ``~``) is checked,
resolved through the tree (symlinks included) and translated to the relative path ``FileTree``
takes, and the wording of each refusal. Nothing here touches the host filesystem, except to word
the refusal of a symlink that escapes a tree living on this host.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass

from mcp_servers.filesystem.errors import ToolError, node_error, os_failure
from sandboxes.filesystem.local import LocalFileTree
from sandboxes.filesystem.tree import FileStat, FileTree, TreePathError


@dataclass(frozen=True)
class Resolved:
    """A validated path: where the reference server would operate, absolute and for the tree."""

    absolute: str
    relative: str
    stat: FileStat | None
    """``lstat`` of the resolved path (so never a symlink), None when it does not exist."""


def join_path(root: str, relative: str) -> str:
    """``root`` and a relative path below it, joined (``root`` itself for an empty one)."""
    if not relative:
        return root
    return root.rstrip("/") + "/" + relative


def _expand_home(path: str) -> str:
    if path == "~" or path.startswith("~/"):
        return os.path.expanduser("~").rstrip("/") + path[1:]
    return path


def _normalise_absolute(path: str) -> str:
    """Like Node's ``path.resolve`` on an absolute POSIX path (one leading slash, no dots)."""
    normal = posixpath.normpath(path)
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    return normal


def _inside(path: str, root: str) -> bool:
    if "\x00" in path:
        return False
    if root == "/":
        return path.startswith("/")
    return path == root or path.startswith(root + "/")


def _escape_message(tree: FileTree, relative: str, absolute: str) -> str:
    """Word a symlink escape as the reference would.

    Only a tree on this host can say where a link leads; for others the requested path stands
    in for the link's real target.
    """
    root = tree.root
    outside = "Access denied - symlink target outside allowed directories"
    if not isinstance(tree, LocalFileTree):
        return f"{outside}: {absolute} not in {root}"
    if os.path.exists(absolute):
        return f"{outside}: {os.path.realpath(absolute)} not in {root}"
    parts = relative.split("/")
    for count in range(1, len(parts) + 1):
        prefix = join_path(root, "/".join(parts[:count]))
        if not os.path.lexists(prefix):
            break
        if not os.path.exists(prefix):
            return f"Parent directory does not exist: {posixpath.dirname(absolute)}"
        real = os.path.realpath(prefix)
        if not _inside(real, root):
            return (
                "Access denied - parent directory outside allowed directories:"
                f" {real} not in {root}"
            )
    return f"{outside}: {os.path.realpath(absolute)} not in {root}"


async def validate(tree: FileTree, requested: str) -> Resolved:
    root = tree.root
    if "\x00" in requested:
        # Checked before normalising, which could drop the component holding the byte.
        shown = requested.replace("\x00", "\\0")
        raise ToolError(
            f"Access denied - path outside allowed directories: {shown} contains a null byte"
        )
    expanded = _expand_home(requested)
    if re.match(r"^[A-Za-z]:(?:[\\/]|$)", expanded):
        raise ToolError(f"Access denied - Windows-style path received on a POSIX host: {requested}")
    if expanded.startswith("/"):
        absolute = _normalise_absolute(expanded)
    else:
        absolute = _normalise_absolute(posixpath.join(root, expanded))
    if not _inside(absolute, root):
        raise ToolError(
            f"Access denied - path outside allowed directories: {absolute} not in {root}"
        )
    relative = absolute[len(root) :].lstrip("/")
    try:
        resolved = await tree.resolve(relative)
    except TreePathError:
        raise ToolError(_escape_message(tree, relative, absolute)) from None
    except OSError as error:  # a name or path too long, a symlink loop
        raise os_failure(error, "realpath", absolute) from None
    try:
        stat = await tree.stat(resolved)
    except FileNotFoundError:
        await _refuse_dangling_link(tree, relative, absolute)
        return Resolved(join_path(root, resolved), resolved, None)
    except NotADirectoryError:
        raise ToolError(node_error("ENOTDIR", "realpath", absolute)) from None
    except OSError as error:
        raise os_failure(error, "realpath", absolute) from None
    return Resolved(join_path(root, resolved), resolved, stat)


async def _refuse_dangling_link(tree: FileTree, relative: str, absolute: str) -> None:
    """The reference cannot resolve through a broken symlink and blames the parent directory."""
    parts = relative.split("/") if relative else []
    for count in range(1, len(parts) + 1):
        prefix = "/".join(parts[:count])
        try:
            entry = await tree.stat(prefix)
        except OSError:
            return
        if entry.kind != "symlink":
            continue
        try:
            await tree.stat(await tree.resolve(prefix))
        except (OSError, TreePathError):
            raise ToolError(
                f"Parent directory does not exist: {posixpath.dirname(absolute)}"
            ) from None
