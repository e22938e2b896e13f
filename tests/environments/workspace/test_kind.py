"""The workspace kind's record: found by its tasks, its tools, its verifier inputs, its notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from dataset.store import load_dataset
from environments.backends import ProviderSet
from environments.registry import environment_kind, kind_for_task, served_kinds
from mcp_servers.results import ToolArgumentError
from prompts.templates import load_template

WORKSPACE = Path(__file__).resolve().parents[3] / "datasets" / "workspace"


def test_registered_and_found_by_its_tasks() -> None:
    kind = environment_kind("workspace")
    assert served_kinds()["workspace"] is kind
    task = next(iter(load_dataset(WORKSPACE).tasks.values()))
    assert kind_for_task(task) is kind
    assert kind.backend_for("docker") == kind.backend_for("auto") == "local"


def test_tools_that_write() -> None:
    kind = environment_kind("workspace")
    writes = {name: kind.tool_spec(name) for name in ("run_command", "write_file", "read_file")}
    assert {name: spec.writes for name, spec in writes.items() if spec} == {
        "run_command": True,
        "write_file": True,
        "read_file": False,
    }
    assert kind.tool_spec("list_files") is None  # a judge's tool, never an agent's


def test_notes_are_a_prompt_template() -> None:
    kind = environment_kind("workspace")
    task = next(iter(load_dataset(WORKSPACE).tasks.values()))
    notes = kind.prompt_notes(task)
    assert notes is not None
    assert "run_command" in load_template(notes).template


async def test_a_call_and_the_verifier_inputs_on_a_fresh_sandbox() -> None:
    dataset = load_dataset(WORKSPACE)
    task = dataset.tasks["ws-days-between"]
    kind = environment_kind("workspace")
    async with ProviderSet() as providers:
        provider = await providers.get("workspace")
        sandbox = await provider.create(task, WORKSPACE / "tasks" / task.id)
        async with sandbox:
            result = await kind.execute_call(
                sandbox, "run_command", {"command": "python run_tests.py"}
            )
            assert result.text.endswith("[exit code 1]")  # the off-by-one is still there
            with pytest.raises(ToolArgumentError):
                await kind.execute_call(sandbox, "run_command", {"cmd": "ls"})
            async with kind.verifier_inputs(sandbox) as inputs:
                folder = Path(inputs.environment["WORKSPACE_DIR"])
                assert (folder / "dates.py").is_file()
                assert list(inputs.read_only) == [folder]
