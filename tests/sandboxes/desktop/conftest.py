"""Desktop tests: the desktop image of the docker backend (built on first use)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def desktop_image() -> str:
    """The desktop image's tag (a few minutes to build the first time, then cached)."""
    from sandboxes.desktop.image import build_desktop_image

    return build_desktop_image()
