"""``PhaseProgress`` in a log (not a terminal): plain lines with done/total, elapsed time and an
estimate; a resumed phase starts from the work already done; work of unknown size says when it
started and ended."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from agentjudge import console as console_module
from agentjudge.console import PhaseProgress, format_duration


@pytest.fixture
def printed(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    buffer = io.StringIO()
    logged = Console(file=buffer, width=200, force_terminal=False, highlight=False)
    monkeypatch.setattr(console_module, "console", logged)
    return buffer


def test_a_resumed_phase_counts_earlier_work_as_done(printed: io.StringIO) -> None:
    with PhaseProgress("judging", 30, done=10) as bar:
        for _ in range(20):
            bar.advance(status="PASS")
    lines = printed.getvalue().splitlines()
    assert lines[0] == "judging: 10 of 30 already done (resuming)"
    counts = [int(m.group(1)) for line in lines if (m := re.match(r"judging (\d+)/30 ", line))]
    # A line at every tenth of the 20 runs made now (every 2), never restarting below 10.
    assert counts == list(range(12, 31, 2))
    assert re.fullmatch(r"judging 12/30 \(\d+ s elapsed, about \d+ s left\): PASS", lines[1])
    assert "left" not in lines[-1]  # nothing is left at the end


def test_work_of_unknown_size_says_when_it_started_and_ended(printed: io.StringIO) -> None:
    with PhaseProgress("building image", None):
        pass
    assert printed.getvalue().splitlines() == [
        "building image ...",
        "building image (0 s elapsed)",
    ]


def test_durations_read_naturally() -> None:
    assert format_duration(42.4) == "42 s"
    assert format_duration(185) == "3 min 05 s"
    assert format_duration(3720) == "1 h 02 min"
