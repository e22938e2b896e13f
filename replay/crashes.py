"""Telling a verifier that crashed from one that decided FAIL.

MCPMark's contract reads only the exit code, so a ``verify.py`` that dies on an uncaught exception
(a missing module, a lost connection, a bug) looks like a FAIL. Replay keeps the two apart: a run
that ended non-zero *and* left a Python traceback or a bare exception line in its output, or that
a signal ended, or that ran out of time, reached no verdict. So did one that caught the
database's refusal of its own queries and printed it as a failure (``❌ Database error:
permission denied for function dblink_connect_u``): a privilege or connection error of the
verifier's session says nothing about what the agent did. These helpers find such an ending and
name it in one line, for the replayed run and for the verification stored with a label.
"""

from __future__ import annotations

import re
import signal

_TRACEBACK = "Traceback (most recent call last):"

_EXCEPTION_LINE = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception)|errors\.[A-Z]\w*)(?::\s|:?$)"
)
"""A line as Python ends a traceback with: an exception class, maybe dotted (``ValueError: x``,
``psycopg2.errors.InsufficientPrivilege: permission denied ...``)."""

_BLOCKED_VERIFIER = re.compile(
    r"permission denied for function \S+|must be superuser|could not connect to server"
    r"|connection to server .* failed|server closed the connection unexpectedly"
    r"|password authentication failed",
    re.IGNORECASE,
)
"""Database errors that stop a verifier's own queries, whatever the agent did: a function it
needs is not granted to it, it is no superuser, it cannot connect."""

_SIGNAL_EXIT = 128
"""The box reports a process that signal n ended as 128 + n."""


def crash_line(text: str | None) -> str | None:
    """The exception line of the last traceback in ``text``, else its last bare exception line
    (``ModuleNotFoundError: ...`` printed without a traceback), else its last line reporting a
    database error that blocked the verifier itself; None when it shows none of them."""
    if not text:
        return None
    lines = text.splitlines()
    starts = [index for index, line in enumerate(lines) if line.strip() == _TRACEBACK]
    if starts:
        after = [line for line in lines[starts[-1] + 1 :] if line.strip()]
        # Frames are indented; the first line back at the margin names the exception.
        for line in after:
            if not line[:1].isspace():
                return line.strip()
        return after[-1].strip() if after else _TRACEBACK
    bare = [line.strip() for line in lines if _EXCEPTION_LINE.match(line.strip())]
    if bare:
        return bare[-1]
    blocked = [line.strip() for line in lines if _BLOCKED_VERIFIER.search(line)]
    return blocked[-1] if blocked else None


_LIMIT_SIGNALS: dict[int, str] = {
    signal.SIGXCPU: "it used up its CPU-time limit (as many CPU seconds as its timeout)",
    signal.SIGXFSZ: "it wrote a file past the box's file-size limit",
}
"""Signals the kernel sends for a box's limits, and which limit each names."""


def verifier_error(
    exit_code: int | None, timed_out: bool, output: str, timeout: float
) -> str | None:
    """Why a verifier run reached no verdict, in one line; None when its exit code is its
    verdict (0 PASS, anything else FAIL).

    A timeout counts: the verifier never finished deciding, so its FAIL would say nothing about
    the state (``VerifierRun.timed_out`` still tells it apart from a crash)."""
    if timed_out:
        return f"timed out after {timeout:g} s"
    if exit_code is None or exit_code == 0:
        return None
    number = -exit_code if exit_code < 0 else exit_code - _SIGNAL_EXIT
    if exit_code < 0 or 0 < number < 65:
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        limit = _LIMIT_SIGNALS.get(number)
        said = f": {limit}" if limit else ""
        return f"killed by {name} (exit code {exit_code}){said}"
    return crash_line(output)
