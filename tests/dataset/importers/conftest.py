"""The real files other projects' writers produced (``../shared/real-formats``), for the
importer tests that read them. Outside CI a missing folder skips those tests, saying so; in CI
(``CI=true``) it fails them: a skipped check would pass for a test that never ran."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.shared_data import SHARED, missing_shared

REAL_FORMATS = SHARED / "real-formats"


@pytest.fixture
def real_format() -> Callable[[str], Path]:
    """Returns the folder of one format under ``../shared/real-formats``."""

    def folder(name: str) -> Path:
        path = REAL_FORMATS / name
        if not path.is_dir():
            missing_shared(path, f"the real {name} files (../shared/real-formats)")
        return path

    return folder
