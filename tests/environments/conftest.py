"""A private copy of the kind registry for every test here, so kinds registered by one test (or
entry points it fakes) never leak into another."""

from __future__ import annotations

import pytest

from environments import registry


@pytest.fixture(autouse=True)
def isolated_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry as the runtime starts it: the built-in kinds, entry points already scanned."""
    monkeypatch.setattr(registry, "_kinds", dict(registry._kinds))
    monkeypatch.setattr(registry, "_entry_points_loaded", True)
