"""``python -m mcp_servers.desktop``: serve a running desktop's GUI tools over stdio.

Usage: ``python -m mcp_servers.desktop --url http://127.0.0.1:5000`` (a control server speaking
OSWorld's protocol: the project's own, or an OSWorld VM's) or ``--socket PATH`` (a local
desktop's Unix socket), with ``--observation screenshot|a11y_tree|screenshot_a11y_tree|som`` and,
optionally, ``--trajectory FILE`` to offer the recorded run's ``VIEW_TRAJECTORY_STEP`` and
``trajectory_overview`` from the same server. An unreachable desktop or a bad trajectory file is
reported on stderr, with exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

import anyio

from dataset.problems import DatasetError
from mcp_servers.desktop.server import desktop_server, with_tools_of
from mcp_servers.serving import ToolServer, serve_stdio
from mcp_servers.trajectory.loading import load_trajectory_file
from sandboxes.desktop.client import DesktopClient
from sandboxes.desktop.observations import DEFAULT_TOKEN_BUDGET, ObservationKind

EXIT_BAD_INPUT = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mcp_servers.desktop",
        description=(
            "Serve a running desktop over stdio as an MCP server with AJ-Bench's GUI actions "
            "(CLICK ... WAIT) and OBSERVE, each answering with the screen."
        ),
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="the control server's URL, e.g. http://127.0.0.1:5000")
    where.add_argument("--socket", type=Path, help="a local desktop's control socket")
    parser.add_argument(
        "--observation",
        choices=get_args(ObservationKind),
        default="screenshot_a11y_tree",
        help="what every answer shows (default: both)",
    )
    parser.add_argument(
        "--token-budget",
        type=int,
        default=DEFAULT_TOKEN_BUDGET,
        help=f"tokens of the linearised tree (default {DEFAULT_TOKEN_BUDGET})",
    )
    parser.add_argument(
        "--trajectory", type=Path, help="a trajectory JSON file whose record to offer too"
    )
    return parser


async def _serve(client: DesktopClient, where: str, server: ToolServer[Any]) -> int:
    if not await client.is_up():
        await client.aclose()
        print(f"error: no desktop control server answers at {where}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        await serve_stdio(server.server())
    finally:
        await client.aclose()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Connect to the desktop and serve it until the client hangs up; 2 on bad input."""
    arguments = _parser().parse_args(argv)
    trajectory: ToolServer[Any] | None = None
    if arguments.trajectory is not None:
        try:
            trajectory = load_trajectory_file(arguments.trajectory).server()
        except DatasetError as error:
            for problem in error.problems:
                print(problem, file=sys.stderr)
            return EXIT_BAD_INPUT
    client = (
        DesktopClient(socket_path=arguments.socket)
        if arguments.socket is not None
        else DesktopClient(arguments.url)
    )
    server: ToolServer[Any] = desktop_server(
        client, observation=arguments.observation, token_budget=arguments.token_budget
    )
    if trajectory is not None:
        server = with_tools_of(server, trajectory)
    where = str(arguments.socket or arguments.url)
    result: int = anyio.run(_serve, client, where, server)
    return result


if __name__ == "__main__":
    sys.exit(main())
