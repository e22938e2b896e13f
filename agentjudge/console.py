"""Printing for the command line: rich tables for summaries, plain lines for problems, and the
one progress display every long phase uses (``PhaseProgress``).

Problems are printed without rich markup so that field paths such as ``steps[2]`` and file names
survive untouched and stay on one line each (easy to grep).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable
from typing import Any

from rich.console import Console

from dataset.problems import Problem

__all__ = ["PhaseProgress", "console", "format_duration", "print_problems"]

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


def format_duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s`` or ``1 h 02 min``."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class PhaseProgress:
    """Progress of one long phase (replaying, judging, importing): done of total, elapsed time,
    an estimate of the time left, and a status text.

    On a terminal, a live ``rich`` bar; in a log or a pipe, a plain line at every tenth of the
    work (and at the end). Work an earlier invocation did (``done``) counts as done from the
    start, so a resumed phase does not restart at 0; the estimate uses this invocation's pace
    only. ``note`` prints a line above the bar (or plainly). Use as a context manager, or call
    ``stop``. With ``total=None`` (work of unknown size, e.g. building an image), only the elapsed
    time runs; in a log, a line says when it started and when it ended.
    """

    def __init__(self, label: str, total: int | None, *, done: int = 0) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.label = label
        self.total = total
        self.reused = done
        self.done = done
        self.status = ""
        self.live = console.is_terminal
        self.started = time.monotonic()
        self._next_line = self._step()
        # No stdout redirection: other output goes through the same console anyway.
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("elapsed"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[status]}"),
            console=console,
            transient=False,
            redirect_stdout=False,
            redirect_stderr=False,
            disable=not self.live,
        )
        self.task: Any = None
        if done:
            console.print(f"{label}: {done} of {total} already done (resuming)", markup=False)
        if total is None and not self.live:
            console.print(f"{label} ...", markup=False)
        self.progress.start()
        self.task = self.progress.add_task(label, total=total, completed=done, status="")
        self._stopped = False

    def _step(self) -> int:
        return self.done + max(1, ((self.total or 0) - self.reused) // 10)

    def remaining_seconds(self) -> float | None:
        """The time left at this invocation's pace so far (None before any work is done)."""
        made = self.done - self.reused
        if made <= 0 or self.total is None:
            return None
        return (time.monotonic() - self.started) / made * (self.total - self.done)

    def line(self) -> str:
        """The progress as one plain line."""
        elapsed = format_duration(time.monotonic() - self.started)
        left = self.remaining_seconds()
        finished = self.total is not None and self.done >= self.total
        estimate = "" if left is None or finished else f", about {format_duration(left)} left"
        status = f": {self.status}" if self.status else ""
        count = "" if self.total is None else f" {self.done}/{self.total}"
        return f"{self.label}{count} ({elapsed} elapsed{estimate}){status}"

    def advance(self, count: int = 1, status: str | None = None) -> None:
        """Count ``count`` more done; ``status``, when given, replaces the status text."""
        self.done += count
        if status is not None:
            self.status = status
        self.progress.update(self.task, advance=count, status=self.status)
        if not self.live and (self.done >= self._next_line or self.done == self.total):
            console.print(self.line(), markup=False)
            self._next_line = self._step()

    def note(self, text: str) -> None:
        """A line printed above the bar (plainly in a log)."""
        console.print(text, markup=False)

    def stop(self) -> None:
        """End the display (idempotent); in a log, work of unknown size says it ended."""
        if self._stopped:
            return
        self._stopped = True
        self.progress.stop()
        if self.total is None and not self.live:
            console.print(self.line(), markup=False)

    def __enter__(self) -> PhaseProgress:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()
