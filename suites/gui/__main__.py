"""``python -m suites.gui --output datasets/gui``: build the GUI suite (``--only`` some tasks)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from suites.gui.build import build_suite
from suites.gui.tasks import all_tasks

DESCRIPTION = (
    "Writer, Calc and Impress tasks on generated Office documents, recorded on real LibreOffice "
    "desktops by scripted agents (computer_13 and pyautogui actions, a screenshot and an "
    "accessibility tree per step, reasoning); labels from each task's verifier on the document "
    "a faithful replay saved."
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m suites.gui", description=__doc__)
    parser.add_argument("--output", type=Path, default=Path("datasets/gui"))
    parser.add_argument(
        "--only", action="append", help="rebuild only these task ids inside an existing suite"
    )
    parser.add_argument("--jobs", type=int, default=2, help="runs recorded at once (default 2)")
    options = parser.parse_args(argv)
    tasks = all_tasks()
    known = {t.task.id for t in tasks}
    unknown = sorted(set(options.only or ()) - known)
    if unknown:
        parser.error(f"no such task: {', '.join(unknown)}")
    report = asyncio.run(
        build_suite(
            options.output,
            tasks,
            description=DESCRIPTION,
            only=set(options.only) if options.only else None,
            jobs=options.jobs,
        )
    )
    passed = sum(t.label is not None and t.label.value == "PASS" for t in report.trajectories)
    print(f"{len(report.trajectories)} runs built ({passed} PASS) -> {options.output}")
    for problem in report.problems:
        print(problem, file=sys.stderr)
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
