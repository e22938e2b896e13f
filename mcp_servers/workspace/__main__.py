"""``python -m mcp_servers.workspace --root DIR``: serve a project folder over stdio.

By default the judge's tools: reading ones, and commands on a throwaway copy of the folder.
``--writable`` adds the editing tools and keeps commands' changes in the folder; ``--agent``
serves the recorded coding agents' four tools instead (writable).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from mcp_servers.serving import serve_stdio
from mcp_servers.workspace.server import workspace_agent_server, workspace_judge_server
from sandboxes.filesystem.local import LocalFileTree


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mcp_servers.workspace",
        description="Serve a project folder over stdio with the workspace tools.",
    )
    parser.add_argument("--root", type=Path, required=True, help="the project folder to serve")
    audience = parser.add_mutually_exclusive_group()
    audience.add_argument(
        "--writable", action="store_true", help="the judge's tools, editing ones included"
    )
    audience.add_argument("--agent", action="store_true", help="the coding agents' own tools")
    return parser


def main(argv: list[str] | None = None) -> None:
    arguments = _parser().parse_args(argv)
    root: Path = arguments.root
    if not root.is_dir():
        raise SystemExit(f"error: --root {root}: not a directory")
    writable = arguments.writable or arguments.agent
    tree = LocalFileTree(root, read_only=not writable)
    tools = (
        workspace_agent_server(tree)
        if arguments.agent
        else workspace_judge_server(tree, writable=writable)
    )
    try:
        asyncio.run(serve_stdio(tools.server()))
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
