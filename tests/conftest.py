"""Test-wide settings: a private scratch directory for every sandbox the suite creates, a private
user data folder, and the ``needs_shared`` marker.

Set before any test module imports the runtime, so runs made by tests (and the child processes
they start) never mix with, or garbage-collect, a real run's sandboxes, and label corrections
that tests record never land in the user's own data folder. A test marked ``needs_shared``
(``tests.shared_data``) skips when its outside data is missing, or fails in CI.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from sandboxes.runs import WORKDIR_ENV
from tests.shared_data import MARKER, missing_shared

os.environ[WORKDIR_ENV] = tempfile.mkdtemp(prefix="agentjudge-tests-")
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="agentjudge-tests-data-")


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``needs_shared(PATH, WHAT)`` marker."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}(path, what): reads outside data under ../shared; skips when it is missing, "
        "fails instead in CI (CI=true)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before any fixture: a test whose shared data is missing skips, or fails in CI."""
    for marker in item.iter_markers(MARKER):
        path, what = marker.args
        if not path.exists():
            missing_shared(path, what)


@pytest.fixture(scope="session")
def mini_replay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One replay folder of the bundled mini dataset for the judge commands of the session's
    tests: the first replays, later ones resume it (copies of the dataset have the same
    trajectory files, so their replays are reused too)."""
    return tmp_path_factory.mktemp("mini-replay")
