"""The desktop kind's record: registration, backends, restore policy, verifier inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

import environments.desktop
from dataset.models import DocumentState, EmptyState, Task
from environments.backends import BackendChoice, ProviderSet
from environments.desktop.kind import DOCUMENT_VARIABLE, FILES_VARIABLE, as_desktop_sandbox
from environments.kind import JudgeServerOptions
from environments.registry import environment_kind, served_kinds
from mcp_servers.results import ToolArgumentError
from sandboxes.base import SandboxError
from sandboxes.desktop.local import LocalDesktopProvider
from tests.sandboxes.desktop.helpers import wait_for_node, word_document

KIND = environments.desktop.KIND


def task(**metadata: object) -> Task:
    return Task(
        id="word-task",
        domain="gui",
        subdomain="word",
        instruction="Edit the memo.",
        initial_state=DocumentState(path="memo.docx"),
        metadata=metadata,
    )


def test_the_kind_is_registered_and_served_as_desktop() -> None:
    assert environment_kind("desktop") is KIND
    assert served_kinds()["desktop"] is KIND
    assert KIND.initial_states == {"document", "empty"}
    assert KIND.default_backend == "local"
    assert BackendChoice().label("desktop") == "local"
    assert KIND.backend_for("docker") == "docker"
    assert KIND.backend_for("local") == "local"


def test_the_restore_method_is_chosen_per_task() -> None:
    assert KIND.restore_method_for(task()) == "replay"
    assert KIND.restore_method_for(task(desktop_restore="reopen-files")) == "reopen-files"
    with pytest.raises(SandboxError, match=r"metadata\.desktop_restore: unknown restore method"):
        KIND.restore_method_for(task(desktop_restore="criu"))


async def test_a_desktop_has_no_tools() -> None:
    assert KIND.tool_spec("write_file") is None
    with pytest.raises(ToolArgumentError, match="GUI steps are actions"):
        await KIND.execute_call(object(), "write_file", {})  # type: ignore[arg-type]
    other = type("OtherSandbox", (), {"name": "aj_x_tree_1", "kind": "filesystem"})()
    with pytest.raises(TypeError, match="aj_x_tree_1 is a filesystem sandbox, not a desktop"):
        as_desktop_sandbox(other)


@pytest.mark.desktop
async def test_verifiers_get_the_saved_document_read_only(tmp_path: Path) -> None:
    (tmp_path / "memo.docx").write_bytes(word_document("Memo for the verifier"))
    async with ProviderSet() as providers:
        provider = await providers.get("desktop")
        assert isinstance(provider, LocalDesktopProvider)
        desktop = await provider.create(task(), tmp_path)
        async with desktop:
            await wait_for_node(desktop, tag="paragraph", text_contains="Memo for the verifier")
            async with KIND.verifier_inputs(desktop) as inputs:
                exported = Path(inputs.environment[DOCUMENT_VARIABLE])
                assert exported.read_bytes() == (tmp_path / "memo.docx").read_bytes()
                assert exported.name == "memo.docx"
                assert Path(inputs.environment[FILES_VARIABLE]) == exported.parent
                assert list(inputs.read_only) == [exported.parent]
            assert not exported.parent.exists()
            async with KIND.judge_servers(desktop, JudgeServerOptions(writable=True)) as servers:
                assert [server.name for server in servers] == ["desktop"]
                assert "CLICK" in servers[0].tools


@pytest.mark.desktop
async def test_an_empty_desktop_starts_and_a_wrong_state_is_refused(tmp_path: Path) -> None:
    async with LocalDesktopProvider() as provider:
        empty = task().model_copy(update={"initial_state": EmptyState()})
        async with await provider.create(empty, tmp_path) as desktop:
            assert desktop.document is None
            assert await desktop.client.screen_size() == (1920, 1080)
        with pytest.raises(SandboxError, match=r"initial_state\.path: cannot read"):
            await provider.create(task(), tmp_path)  # memo.docx is not there
