"""The filesystem MCP server: the reference server's 14 tools over one sandbox's ``FileTree``.

Owns which tools a server offers (all 14, or only the reading ones in read-only mode or on a
read-only tree) and the instructions a client receives. The tools themselves, their path rule
and their output are ``operations``'; the protocol is ``mcp_servers.serving``'s. The tree may live
on this host (``LocalFileTree``) or in a container (``DockerFileTree``): the tools cannot tell.
"""

from __future__ import annotations

from mcp_servers.filesystem.operations import FILESYSTEM_TOOLS
from mcp_servers.serving import ToolServer
from sandboxes.filesystem.tree import FileTree

SERVER_NAME = "filesystem"

_INSTRUCTIONS = (
    "Tools over one directory tree, the only allowed directory ({root}). Paths may be absolute "
    "inside it or relative to it; anything that resolves outside it (through '..', absolute "
    "paths or symbolic links) is refused with an 'Access denied' error. {mode}"
)


def filesystem_server(tree: FileTree, *, read_only: bool = False) -> ToolServer[FileTree]:
    """A server over ``tree``; without the writing tools when ``read_only`` or the tree is."""
    read_only = read_only or tree.read_only
    tools = {
        name: spec for name, spec in FILESYSTEM_TOOLS.items() if not (read_only and spec.writes)
    }
    mode = (
        "This server is read-only: it can inspect the tree but has no tool that changes it."
        if read_only
        else "Writes change this sandbox only; they never reach the recorded state."
    )
    return ToolServer(
        SERVER_NAME,
        tools,
        tree,
        instructions=_INSTRUCTIONS.format(root=tree.root, mode=mode),
    )
