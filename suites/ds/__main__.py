"""``python -m suites.ds --output datasets/ds``: build the DS suite from scratch."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from suites.ds.build import build_suite
from suites.ds.tasks import all_tasks

DESCRIPTION = (
    "Filesystem and Postgres tasks authored for judging: scripted agents of several styles "
    "recorded against the real MCP servers; labels from each task's verifier on the replayed "
    "state."
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m suites.ds", description=__doc__)
    parser.add_argument("--output", type=Path, default=Path("datasets/ds"))
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--only", action="append", help="build only these task ids")
    options = parser.parse_args(argv)
    tasks = [t for t in all_tasks() if not options.only or t.task.id in options.only]
    report = asyncio.run(
        build_suite(options.output, tasks, jobs=options.jobs, description=DESCRIPTION)
    )
    passed = sum(
        run.trajectory.label is not None and run.trajectory.label.value == "PASS"
        for run in report.runs
    )
    print(f"{len(tasks)} tasks, {len(report.runs)} runs ({passed} PASS) -> {options.output}")
    for problem in report.problems:
        print(problem, file=sys.stderr)
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
