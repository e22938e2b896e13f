"""Fixtures of the provider tests: the loopback wire server and a clean provider environment."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.judge_agent.providers.wire import WireServer

PROVIDER_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "OPENAI_CUSTOM_HEADERS",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_PROFILE",
)


@pytest.fixture(autouse=True)
def clean_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key or endpoint of the machine running the tests leaks into them."""
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
async def wire() -> AsyncIterator[WireServer]:
    """A started loopback server, stopped after the test."""
    server = WireServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
