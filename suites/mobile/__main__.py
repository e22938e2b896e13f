"""``python -m suites.mobile --output datasets/mobile``: build the mobile suite from scratch."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from suites.mobile.build import build_suite
from suites.mobile.tasks import all_tasks

DESCRIPTION = (
    "Phone tasks on four small web apps (notes, contacts, settings, shop) shown by the android "
    "kind's phone-sized Chromium: scripted agents recorded through the device MCP server "
    "(screenshots, element lists, UI dumps, AndroidWorld actions, reasoning); labels from each "
    "task's verifier on the apps' own state after a faithful replay."
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m suites.mobile", description=__doc__)
    parser.add_argument("--output", type=Path, default=Path("datasets/mobile"))
    parser.add_argument("--only", action="append", help="build only these task ids")
    options = parser.parse_args(argv)
    tasks = [t for t in all_tasks() if not options.only or t.task.id in options.only]
    report = asyncio.run(build_suite(options.output, tasks, description=DESCRIPTION))
    passed = sum(t.label is not None and t.label.value == "PASS" for t in report.trajectories)
    print(
        f"{len(tasks)} tasks, {len(report.trajectories)} runs ({passed} PASS) -> {options.output}"
    )
    for problem in report.problems:
        print(problem, file=sys.stderr)
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
