"""Printing for the command line: rich tables for summaries, plain lines for problems.

Problems are printed without rich markup so that field paths such as ``steps[2]`` and file names
survive untouched and stay on one line each (easy to grep).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

from rich.console import Console

from dataset.problems import Problem

__all__ = ["console", "print_problems"]

_PIPED_WIDTH = 160
"""A log or a pipe has no width of its own; rich would squeeze tables into 80 columns."""

console = Console(
    highlight=False,
    soft_wrap=True,
    width=None if os.environ.get("COLUMNS") or sys.stdout.isatty() else _PIPED_WIDTH,
)


def print_problems(problems: Iterable[Problem]) -> tuple[int, int]:
    """Print each problem on its own line; return ``(errors, warnings)`` counted."""
    errors = warnings = 0
    for problem in problems:
        sys.stdout.write(f"{problem}\n")
        if problem.severity == "error":
            errors += 1
        else:
            warnings += 1
    sys.stdout.flush()
    return errors, warnings
