"""The filesystem kind's hooks on a real local sandbox: replay calls, verifier inputs, judge
servers per access mode, and the typed accessor."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from dataset.models import DirectoryTreeState, Task, Trajectory
from environments.filesystem import KIND, as_filesystem_sandbox
from environments.kind import JudgeServerOptions
from prompts.templates import load_template
from sandboxes.filesystem.local import LocalFilesystemProvider
from sandboxes.filesystem.sandbox import FilesystemSnapshot

TASK = Task(
    id="fs-kind",
    domain="ds",
    subdomain="filesystem",
    instruction="Nothing.",
    initial_state=DirectoryTreeState(),
)
WRITING_TOOLS = {"write_file", "edit_file", "create_directory", "move_file"}


@pytest_asyncio.fixture
async def snapshot(tmp_path: Path) -> AsyncIterator[FilesystemSnapshot]:
    (tmp_path / "initial").mkdir()
    (tmp_path / "initial" / "a.txt").write_text("alpha")
    async with LocalFilesystemProvider() as provider:
        sandbox = as_filesystem_sandbox(await provider.create(TASK, tmp_path))
        yield await sandbox.freeze()


def test_backends_from_the_command_line() -> None:
    assert list(KIND.backends) == ["local", "docker"]
    assert KIND.default_backend == "local"
    assert KIND.backend_for("docker") == "docker"
    assert KIND.backend_for("local") == "local"
    assert KIND.serve_name == "filesystem"
    assert KIND.serves(TASK)
    assert not KIND.serves(TASK.model_copy(update={"subdomain": "postgres"}))


def test_tool_table_and_prompt_notes() -> None:
    write, read = KIND.tool_spec("write_file"), KIND.tool_spec("read_text_file")
    assert write is not None
    assert write.writes
    assert read is not None
    assert not read.writes
    assert KIND.tool_spec("execute_sql") is None
    notes = KIND.prompt_notes(TASK)
    assert notes is not None
    assert load_template(notes).template.strip()
    assert not KIND.replays_exclusively(Trajectory(id="t", task_id=TASK.id, agent="a"))


async def test_calls_run_on_the_tree_under_its_root(snapshot: FilesystemSnapshot) -> None:
    clone = await snapshot.clone(writable=True)
    async with clone:
        root = KIND.sandbox_root(clone)
        assert root == clone.tree.root
        result = await KIND.execute_call(
            clone, "write_file", {"path": f"{root}/b.txt", "content": "beta"}
        )
        assert not result.is_error, result.text
        read = await KIND.execute_call(clone, "read_text_file", {"path": f"{root}/b.txt"})
        assert read.text == "beta"


async def test_the_verifier_gets_the_sandboxs_own_directory(snapshot: FilesystemSnapshot) -> None:
    clone = await snapshot.clone(writable=True)
    async with clone, KIND.verifier_inputs(clone) as inputs:
        directory = Path(inputs.environment["FILESYSTEM_TEST_DIR"])
        assert (directory / "a.txt").read_text() == "alpha"
        assert list(inputs.arguments) == []
        assert list(inputs.read_only) == [directory]  # the box shows it, read-only


async def test_judge_servers_per_access_mode(snapshot: FilesystemSnapshot) -> None:
    view = await snapshot.clone(writable=False)
    async with KIND.judge_servers(view, JudgeServerOptions(writable=False)) as servers:
        (reader,) = servers
        assert not WRITING_TOOLS & set(reader.tools)
        assert "read_text_file" in reader.tools
    clone = await snapshot.clone(writable=True)
    async with clone, KIND.judge_servers(clone, JudgeServerOptions(writable=True)) as servers:
        (writer,) = servers
        assert set(writer.tools) >= WRITING_TOOLS
        assert len(writer.tools) == 14
    agent = KIND.agent_server(clone)
    assert agent is not None
    assert set(agent.tools) == set(writer.tools)


async def test_a_sandbox_of_another_kind_is_refused(snapshot: FilesystemSnapshot) -> None:
    from environments.postgres import as_postgres_sandbox

    view = await snapshot.clone(writable=False)
    with pytest.raises(TypeError, match="is a filesystem sandbox, not a postgres one"):
        as_postgres_sandbox(view)
