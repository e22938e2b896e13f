"""Fixtures shared by the hostile-input tests."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest


@pytest.fixture
def reaped() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Background processes a test starts; killed if the test leaves them running."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()
