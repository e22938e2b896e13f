"""``python -m suites.workspace --output datasets/workspace``: build the workspace suite."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from suites.workspace.build import build_suite
from suites.workspace.tasks import all_tasks

DESCRIPTION = (
    "Coding tasks on small Python projects: scripted coding agents recorded against the "
    "workspace kind's tools (commands in the dataset-code box); labels from each task author's "
    "tests on the replayed project."
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m suites.workspace", description=__doc__)
    parser.add_argument("--output", type=Path, default=Path("datasets/workspace"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", action="append", help="build only these task ids")
    options = parser.parse_args(argv)
    tasks = [t for t in all_tasks() if not options.only or t.id in options.only]
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
