"""The command line of a suite built from scripted runs with verifier labels (``python -m
suites.ds``, ``python -m suites.workspace``): its options, the build, and the closing summary."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

from suites.ds.build import BuildReport

Task = TypeVar("Task")


def build_suite_command(
    argv: Sequence[str] | None,
    *,
    prog: str,
    doc: str | None,
    output: Path,
    jobs: int,
    description: str,
    tasks: Callable[[], list[Task]],
    task_id: Callable[[Task], str],
    build: Callable[..., Coroutine[Any, Any, BuildReport]],
) -> int:
    """Parse ``--output``, ``--jobs`` and ``--only``, build the chosen tasks with ``build`` (the
    suite's ``build_suite(output, tasks, *, jobs, description)``), print one line of counts and
    every problem (to standard error); 1 when there was a problem."""
    parser = argparse.ArgumentParser(prog=prog, description=doc)
    parser.add_argument("--output", type=Path, default=output)
    parser.add_argument("--jobs", type=int, default=jobs)
    parser.add_argument("--only", action="append", help="build only these task ids")
    options = parser.parse_args(argv)
    chosen = [t for t in tasks() if not options.only or task_id(t) in options.only]
    report: BuildReport = asyncio.run(
        build(options.output, chosen, jobs=options.jobs, description=description)
    )
    passed = sum(
        run.trajectory.label is not None and run.trajectory.label.value == "PASS"
        for run in report.runs
    )
    print(f"{len(chosen)} tasks, {len(report.runs)} runs ({passed} PASS) -> {options.output}")
    for problem in report.problems:
        print(problem, file=sys.stderr)
    return 1 if report.problems else 0
