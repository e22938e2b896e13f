"""Backend choices for every kind, and providers started and closed through their kinds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import pydantic
import pytest

from environments.backends import BackendChoice, ProviderSet
from environments.kind import ProviderFactory
from environments.registry import register_kind
from sandboxes.base import SandboxError, SandboxProvider
from sandboxes.filesystem.local import LocalFilesystemProvider
from tests.environments.notes_kind import NotesKind


def test_every_kind_gets_a_backend() -> None:
    assert BackendChoice().kinds == {
        "filesystem": "local",
        "postgres": "embedded",
        "android": "auto",
        "browser": "local",
        "desktop": "local",
        "workspace": "local",
    }
    docker = BackendChoice.for_backend("docker")
    # The browser has one backend: it runs on the host whatever --backend says.
    assert docker.kinds == {
        "filesystem": "docker",
        "postgres": "docker",
        "android": "auto",
        "browser": "local",
        "desktop": "docker",
        "workspace": "local",
    }
    external = BackendChoice.for_backend("local", endpoints={"postgres": "postgresql://u@h/db"})
    assert external.kinds == {
        "filesystem": "local",
        "postgres": "external",
        "android": "auto",
        "browser": "local",
        "desktop": "local",
        "workspace": "local",
    }
    assert external.endpoints == {"postgres": "postgresql://u@h/db"}
    assert external.label("postgres") == "external"
    assert external.describe() == (
        "filesystem local, postgres external, android auto, browser local, desktop local, "
        "workspace local"
    )
    partial = BackendChoice(kinds={"postgres": "docker"})
    assert partial.kinds == {
        "filesystem": "local",
        "postgres": "docker",
        "android": "auto",
        "browser": "local",
        "desktop": "local",
        "workspace": "local",
    }


def test_a_backend_the_kind_lacks_is_refused() -> None:
    with pytest.raises(pydantic.ValidationError, match=r"no backend 'qemu' \(its backends: local"):
        BackendChoice(kinds={"filesystem": "qemu"})
    with pytest.raises(pydantic.ValidationError, match="postgres kind has no backend 'lxc'"):
        BackendChoice(kinds={"postgres": "lxc"})


def test_the_choice_round_trips_through_json() -> None:
    choice = BackendChoice.for_backend(
        "local",
        endpoints={"postgres": "postgresql://u@h/db"},
        options={"postgres": {"seed_timeout": "30"}},
    )
    assert choice.options == {"postgres": {"seed_timeout": 30.0}}
    assert BackendChoice.model_validate_json(choice.model_dump_json()) == choice
    with pytest.raises(pydantic.ValidationError, match=r"postgres\.seed_timeout: .*greater than 0"):
        BackendChoice(options={"postgres": {"seed_timeout": 0}})
    # A kind not installed here is kept as recorded.
    recorded = BackendChoice.model_validate({"kinds": {"smartwatch": "qemu"}})
    assert recorded.kinds["smartwatch"] == "qemu"
    assert recorded.label("smartwatch") == "qemu"


async def test_providers_start_once_and_close_through_their_kind() -> None:
    kind = NotesKind()
    register_kind(kind)
    async with ProviderSet() as providers:
        first = await providers.get("notes")
        assert isinstance(first, LocalFilesystemProvider)
        assert await providers.get("notes") is first
        assert await providers.get("filesystem") is not first
        with pytest.raises(SandboxError, match="no environment kind 'smartwatch'"):
            await providers.get("smartwatch")
    assert kind.closed == [first]


async def test_a_failing_close_does_not_stop_the_others() -> None:
    class Failing(NotesKind):
        name = "failing"

        async def close_provider(self, provider: SandboxProvider) -> None:
            raise RuntimeError("cannot close")

    notes, failing = NotesKind(), Failing()
    register_kind(notes)
    register_kind(failing)
    providers = ProviderSet()
    await providers.get("failing")
    kept = await providers.get("notes")
    with pytest.raises(SandboxError, match="cannot close"):
        await providers.aclose()
    assert notes.closed == [kept]


def test_an_endpoint_selects_the_kind_connecting_backend() -> None:
    class Remote(NotesKind):
        name = "remote"
        backends: ClassVar[Mapping[str, ProviderFactory]] = {
            **NotesKind.backends,
            "url": NotesKind.backends["local"],
        }
        endpoint_backend = "url"

    register_kind(Remote())
    register_kind(NotesKind())
    choice = BackendChoice.for_backend("docker", endpoints={"remote": "http://vm:5000"})
    assert choice.kinds["remote"] == "url"
    assert choice.kinds["filesystem"] == "docker"
    assert choice.endpoints == {"remote": "http://vm:5000"}
    assert BackendChoice.model_validate_json(choice.model_dump_json()) == choice
    # An empty endpoint is no endpoint; a kind without a connecting backend is refused.
    assert BackendChoice.for_backend("local", endpoints={"remote": ""}).kinds["remote"] == "local"
    with pytest.raises(ValueError, match="notes kind has no backend that connects"):
        BackendChoice.for_backend("local", endpoints={"notes": "http://vm:5000"})
    with pytest.raises(ValueError, match="no environment kind 'nowhere'"):
        BackendChoice.for_backend("local", endpoints={"nowhere": "http://vm:5000"})
