"""CI honesty: tests that read ``../shared`` skip when it is missing on a developer's machine, and
fail in CI (``CI=true``), so a CI without the data cannot pass by skipping them. Checked by
running those tests in a child pytest pointed at a shared folder that does not exist."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shared_data import SHARED_ENV

REPOSITORY = Path(__file__).resolve().parents[1]
TARGETS = [
    # Marked through ``pytestmark`` (a whole module).
    "tests/dataset/importers/test_osworld_real_format.py",
    # Through the ``real_format`` fixture.
    "tests/dataset/importers/search/test_sdk_runs.py::test_mcpmark_playwright_runs_field_by_field",
    # Through a marker on one test.
    "tests/sandboxes/postgres/test_seed_script.py::test_the_mcpmark_chinook_dump_reads_with_its_copy_blocks",
]


def _run(tmp_path: Path, *, ci: bool) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if key != "CI"}
    environment[SHARED_ENV] = str(tmp_path / "no-shared-here")
    if ci:
        environment["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", *TARGETS, "-q", "-p", "no:cacheprovider", "-rfs"],
        cwd=REPOSITORY,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.slow
def test_missing_shared_data_fails_in_ci_and_skips_elsewhere(tmp_path: Path) -> None:
    in_ci = _run(tmp_path, ci=True)
    summary = in_ci.stdout.strip().splitlines()[-1]
    assert in_ci.returncode == 1, in_ci.stdout + in_ci.stderr
    assert "failed" in summary
    assert "skipped" not in summary
    assert "passed" not in summary
    assert "CI must have it" in in_ci.stdout
    assert str(tmp_path / "no-shared-here") in in_ci.stdout

    elsewhere = _run(tmp_path, ci=False)
    summary = elsewhere.stdout.strip().splitlines()[-1]
    assert elsewhere.returncode == 0, elsewhere.stdout + elsewhere.stderr
    assert "skipped" in summary
    assert "failed" not in summary
    assert "passed" not in summary
