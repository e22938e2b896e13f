"""``python -m suites.search --output datasets/search``: build the search suite from scratch."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from suites.search.build import build_suite
from suites.search.tasks import all_tasks

DESCRIPTION = (
    "Search tasks over a small archived web of three invented sites (an encyclopedia, a shop, "
    "a news site): scripted agents recorded through the browser MCP server on headless "
    "Chromium; each answer split into single-item claims labelled against the sites' ground "
    "truth."
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m suites.search", description=__doc__)
    parser.add_argument("--output", type=Path, default=Path("datasets/search"))
    parser.add_argument("--only", action="append", help="build only these task ids")
    options = parser.parse_args(argv)
    tasks = [t for t in all_tasks() if not options.only or t.id in options.only]
    report = asyncio.run(build_suite(options.output, tasks, description=DESCRIPTION))
    items = [item for trajectory in report.trajectories for item in trajectory.items]
    wrong = sum(item.label == "FAIL" for item in items)
    print(
        f"{len(tasks)} tasks, {len(report.trajectories)} runs, {len(items)} claims "
        f"({wrong} wrong), {report.pages} archived pages -> {options.output}"
    )
    for problem in report.problems:
        print(problem, file=sys.stderr)
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
