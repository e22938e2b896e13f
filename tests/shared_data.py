"""The real outside data some tests read (``../shared`` next to the checkout), and what a test
does when it is missing: skip, saying so, on a developer's machine; fail in CI (``CI=true``),
where a skipped check would pass for a test that never ran.

``AGENTJUDGE_TEST_SHARED`` names another folder in place of ``../shared`` (a CI that keeps the
data elsewhere, or a test pretending it is missing). Mark a test (or a module, through
``pytestmark``) with ``needs_shared(PATH, WHAT)``; ``tests/conftest.py`` checks the path before
the test's fixtures run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

__all__ = ["MARKER", "SHARED", "in_ci", "missing_shared", "needs_shared"]

SHARED_ENV = "AGENTJUDGE_TEST_SHARED"
"""The variable naming the shared-data folder instead of ``../shared``."""

SHARED = Path(os.environ.get(SHARED_ENV) or Path(__file__).resolve().parents[1].parent / "shared")
"""The shared-data folder: ``$AGENTJUDGE_TEST_SHARED``, else ``../shared`` from the checkout."""

MARKER = "needs_shared"
"""The marker's name (registered in ``tests/conftest.py``)."""


def in_ci() -> bool:
    """Whether the tests run in CI (``CI`` set to true or 1, as CI services set it)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def needs_shared(path: Path, what: str) -> pytest.MarkDecorator:
    """Mark a test as reading ``path`` (under ``SHARED``), described as ``what``."""
    marker: pytest.MarkDecorator = getattr(pytest.mark, MARKER)(path, what)
    return marker


def missing_shared(path: Path, what: str) -> None:
    """Skip (outside CI) or fail (in CI) the running test, because ``path`` is missing."""
    message = f"{what} is not at {path} (../shared next to the checkout, or ${SHARED_ENV})"
    if in_ci():
        pytest.fail(f"{message}; CI must have it", pytrace=False)
    pytest.skip(message)
