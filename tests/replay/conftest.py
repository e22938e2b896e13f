"""Sandbox providers on each backend for replay tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from environments.backends import BackendChoice, ProviderSet

BACKENDS = [
    pytest.param(BackendChoice(), id="local"),
    pytest.param(BackendChoice.for_backend("docker"), id="docker", marks=pytest.mark.docker),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=BACKENDS)
async def providers(request: pytest.FixtureRequest) -> AsyncIterator[ProviderSet]:
    """Providers on one backend, shared by a test module (the Postgres server starts once)."""
    choice: BackendChoice = request.param
    if choice.label("filesystem") == "docker":
        from sandboxes.docker.images import ensure_sandbox_image

        ensure_sandbox_image()
    async with ProviderSet(choice) as made:
        yield made
