"""The desktop kind's backends as a run chooses them: docker by --backend (and by ``auto`` where an
engine answers), osworld by URL."""

from __future__ import annotations

import pytest

from environments.backends import BackendChoice, ProviderSet
from environments.desktop.kind import KIND
from sandboxes.base import SandboxError
from sandboxes.desktop.docker import DockerDesktopProvider
from sandboxes.desktop.osworld import OsworldDesktopProvider
from sandboxes.docker.images import engine_answers


def test_docker_and_desktop_urls_select_the_backends() -> None:
    assert BackendChoice.for_backend("docker").kinds["desktop"] == "docker"
    assert BackendChoice.for_backend("local").kinds["desktop"] == "local"
    remote = BackendChoice.for_backend("docker", endpoints={"desktop": "http://vm:5000"})
    assert remote.kinds["desktop"] == "osworld"
    assert remote.kinds["filesystem"] == "docker"
    assert remote.endpoints == {"desktop": "http://vm:5000"}
    assert any(source.name == "docker" for source in KIND.leftover_collectors(None))


@pytest.mark.docker
def test_auto_puts_desktops_in_containers_where_the_engine_answers() -> None:
    choice = BackendChoice.for_backend("auto")
    assert choice.kinds["desktop"] == "docker"
    # The other kinds keep their host backends: auto moves only desktops.
    assert choice.kinds["filesystem"] == "local"
    assert choice.kinds["postgres"] == "embedded"
    dsn = "postgresql://u@h/db"
    assert BackendChoice.for_backend("auto", endpoints={"postgres": dsn}).kinds["postgres"] == (
        "external"
    )


@pytest.mark.parametrize(
    "engine", ["unix:///nonexistent/docker.sock", "tcp://127.0.0.1:1"], ids=["no-socket", "refused"]
)
def test_auto_keeps_desktops_local_without_an_engine(
    engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", engine)
    assert not engine_answers()
    assert BackendChoice.for_backend("auto").kinds["desktop"] == "local"
    # An explicit --backend docker is still docker: its provider then names the missing engine.
    assert BackendChoice.for_backend("docker").kinds["desktop"] == "docker"


async def test_the_osworld_provider_gets_the_urls() -> None:
    urls = "http://vm-a:5000, http://vm-b:5000/"
    choice = BackendChoice.for_backend("local", endpoints={"desktop": urls})
    async with ProviderSet(choice) as providers:
        provider = await providers.get("desktop")
        assert isinstance(provider, OsworldDesktopProvider)
        assert provider.urls == ("http://vm-a:5000", "http://vm-b:5000")
    with pytest.raises(SandboxError, match="--endpoint desktop="):
        async with ProviderSet(BackendChoice(kinds={"desktop": "osworld"})) as providers:
            await providers.get("desktop")


@pytest.mark.docker
async def test_the_docker_provider_uses_the_desktop_image(desktop_image: str) -> None:
    async with ProviderSet(BackendChoice.for_backend("docker")) as providers:
        provider = await providers.get("desktop")
        assert isinstance(provider, DockerDesktopProvider)
        assert provider.image == desktop_image
