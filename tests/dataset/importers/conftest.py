"""The real files other projects' writers produced (``../shared/real-formats``), for the
importer tests that read them. Outside CI a missing folder skips those tests, saying so; in CI
(``CI=true``) it fails them: a skipped check would pass for a test that never ran."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

REAL_FORMATS = Path(__file__).resolve().parents[3].parent / "shared" / "real-formats"


@pytest.fixture
def real_format() -> Callable[[str], Path]:
    """Returns the folder of one format under ``../shared/real-formats``."""

    def folder(name: str) -> Path:
        path = REAL_FORMATS / name
        if path.is_dir():
            return path
        message = f"the real {name} files are not at {path} (../shared/real-formats)"
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(message + "; CI must have them")
        pytest.skip(message)

    return folder
