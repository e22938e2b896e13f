"""The desktop image, for the tests that start the docker backend's provider."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def desktop_image() -> str:
    """The desktop image (built on first use: minutes)."""
    from sandboxes.desktop.image import build_desktop_image

    return build_desktop_image()
