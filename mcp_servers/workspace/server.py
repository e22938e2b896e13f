"""The workspace MCP servers: the agents' tools, and the judge's over a project's end state.

Owns which tools each audience gets and the instructions a client receives; the tools are
``tools``', the protocol ``mcp_servers.serving``'s.
"""

from __future__ import annotations

from mcp_servers.serving import ToolServer
from mcp_servers.workspace.tools import (
    AGENT_TOOLS,
    JUDGE_READING_TOOLS,
    JUDGE_WRITING_TOOLS,
    Workspace,
)
from sandboxes.filesystem.local import LocalFileTree

AGENT_SERVER_NAME = "workspace-agent"
JUDGE_SERVER_NAME = "workspace"

_JUDGE_INSTRUCTIONS = (
    "Tools over the project folder a coding agent left behind. Paths are relative to the "
    "project folder; nothing outside it can be reached. run_command runs a shell command in a "
    "box with no network, a time limit and capped output, on {where}. {mode}"
)


def workspace_agent_server(tree: LocalFileTree) -> ToolServer[Workspace]:
    """The tools the recorded coding agents had, over a writable project folder."""
    return ToolServer(
        AGENT_SERVER_NAME,
        AGENT_TOOLS,
        Workspace(tree=tree, keep_changes=True),
        instructions="A project folder with a shell: run commands, read, write and edit files.",
    )


def workspace_judge_server(tree: LocalFileTree, *, writable: bool) -> ToolServer[Workspace]:
    """A judge's tools over ``tree``: reading ones and throwaway commands, or with ``writable``
    (a private clone) the editing tools too and commands whose changes stay."""
    writable = writable and not tree.read_only
    if writable:
        where = "this private clone, and its changes stay in the clone"
        mode = "Edits change this clone only; they never reach the recorded state."
    else:
        where = "a fresh copy of the folder, thrown away after each command"
        mode = "The folder itself is read-only."
    return ToolServer(
        JUDGE_SERVER_NAME,
        JUDGE_WRITING_TOOLS if writable else JUDGE_READING_TOOLS,
        Workspace(tree=tree, keep_changes=writable),
        instructions=_JUDGE_INSTRUCTIONS.format(where=where, mode=mode),
    )
