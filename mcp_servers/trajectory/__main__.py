"""``python -m mcp_servers.trajectory``: serve one recorded trajectory over stdio.

Usage: ``python -m mcp_servers.trajectory FILE`` (a trajectory JSON file, normally
``<dataset>/trajectories/<id>.json``) or ``python -m mcp_servers.trajectory --dataset ROOT ID``.
A bad trajectory file is reported on stderr by file and field, with exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio

from dataset.problems import DatasetError
from mcp_servers.serving import serve_stdio
from mcp_servers.trajectory.loading import load_trajectory_file, trajectory_file_in_dataset

EXIT_BAD_INPUT = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mcp_servers.trajectory",
        description=(
            "Serve one recorded agent trajectory over stdio as an MCP server with the read-only "
            "tools VIEW_TRAJECTORY_STEP and trajectory_overview."
        ),
    )
    parser.add_argument(
        "trajectory",
        help="a trajectory JSON file, or with --dataset the trajectory's id",
    )
    parser.add_argument(
        "--dataset",
        type=Path,
        metavar="ROOT",
        help="the dataset folder; TRAJECTORY is then an id looked up in ROOT/trajectories/",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Load the trajectory and serve it until the client hangs up; 2 on bad input."""
    arguments = _parser().parse_args(argv)
    try:
        if arguments.dataset is not None:
            path = trajectory_file_in_dataset(arguments.dataset, arguments.trajectory)
        else:
            path = Path(arguments.trajectory)
        loaded = load_trajectory_file(path)
    except DatasetError as error:
        for problem in error.problems:
            print(problem, file=sys.stderr)
        return EXIT_BAD_INPUT
    for warning in loaded.warnings:
        print(warning, file=sys.stderr)
    anyio.run(serve_stdio, loaded.server().server())
    return 0


if __name__ == "__main__":
    sys.exit(main())
