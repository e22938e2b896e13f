"""``python -m mcp_servers.filesystem``: serve one directory tree over stdio.

``--root DIR`` serves a host directory; ``--container NAME`` serves the tree at ``/sandbox`` in a
running Docker container (a sandbox of the ``docker`` backend), through the container's resident
helper. ``--read-only`` drops the tools
that write.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from mcp_servers.filesystem.server import filesystem_server
from mcp_servers.serving import serve_stdio
from sandboxes.filesystem.tree import FileTree


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mcp_servers.filesystem",
        description="Serve a directory tree over stdio with the reference filesystem tools.",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--root", type=Path, help="the host directory to serve (allowed directory)")
    where.add_argument(
        "--container", help="a running Docker container whose /sandbox directory to serve"
    )
    parser.add_argument(
        "--read-only", action="store_true", help="offer only the tools that do not write"
    )
    return parser


def _tree(arguments: argparse.Namespace) -> FileTree:
    if arguments.root is not None:
        from sandboxes.filesystem.local import LocalFileTree

        root: Path = arguments.root
        if not root.is_dir():
            raise SystemExit(f"error: --root {root}: not a directory")
        return LocalFileTree(root, read_only=arguments.read_only)
    import docker
    import docker.errors

    from sandboxes.base import SandboxError
    from sandboxes.docker.pool import link_of
    from sandboxes.filesystem.docker import DockerFileTree

    try:
        container = docker.from_env().containers.get(arguments.container)
        link = link_of(container)
    except (docker.errors.DockerException, SandboxError) as error:
        raise SystemExit(f"error: --container {arguments.container}: {error}") from None
    return DockerFileTree(link, container, read_only=arguments.read_only)


def main(argv: list[str] | None = None) -> None:
    arguments = _parser().parse_args(argv)
    tree = _tree(arguments)
    server = filesystem_server(tree, read_only=arguments.read_only).server()
    try:
        asyncio.run(serve_stdio(server))
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
