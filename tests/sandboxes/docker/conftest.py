"""Docker tests share one build of the sandbox image (minutes the first time, then cached)."""

from __future__ import annotations

import pytest

from sandboxes.docker.images import ensure_sandbox_image


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    return ensure_sandbox_image()
