"""An agent judge (scripted model, real everything else) on a replayed coding run: it runs the
project's tests through the workspace MCP server and sees what the end state really does.

The model's replies are scripted (``mock``); what it is shown comes from the replayed project,
and the assertions check it against the runs' verifier labels."""

from __future__ import annotations

from pathlib import Path

from dataset.store import load_dataset
from environments.backends import ProviderSet
from environments.kind import JudgeServerOptions
from environments.registry import environment_kind
from judge_agent.conversation import JudgeLimits
from judge_agent.loop import JudgeSettings, judge_trajectory
from judge_agent.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    GenerateConfig,
    ToolInfo,
)
from judge_agent.providers.mock import ScriptedModel, reply, tool_call
from judge_agent.toolbox import Toolbox
from judge_agent.verdict import Verdict
from mcp_servers.trajectory.server import trajectory_server
from replay.frozen import FrozenReplays

WORKSPACE = Path(__file__).resolve().parents[3] / "datasets" / "workspace"
UNDONE = "ws-deep-merge--tidier"  # fixed the code, then restored its backup over it
FIXED = "ws-deep-merge--direct"


def text_of(message: ChatMessageTool) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(getattr(block, "text", "") for block in message.content)


def run_the_tests(
    messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
) -> ChatMessageAssistant:
    """Run the project's own tests and judge by their exit code."""
    shown = [message for message in messages if isinstance(message, ChatMessageTool)]
    if not shown:
        return reply(
            "The final message says the tests pass; run them on the end state.",
            tool_call("run_command", command="python run_tests.py"),
        )
    verdict = "PASS" if text_of(shown[-1]).endswith("[exit code 0]") else "FAIL"
    return reply(
        "", tool_call("submit_verdict", verdict=verdict, confidence=0.9, reasoning="tests run")
    )


async def _judge(trajectory_id: str, model: ScriptedModel) -> Verdict:
    dataset = load_dataset(WORKSPACE)
    trajectory = dataset.trajectories[trajectory_id]
    task = dataset.tasks[trajectory.task_id]
    kind = environment_kind("workspace")
    async with (
        ProviderSet() as providers,
        FrozenReplays(dataset, providers, verify=False) as replays,
    ):
        view = await replays.environment(trajectory_id, writable=False)
        assert view is not None
        async with kind.judge_servers(view, JudgeServerOptions(writable=False)) as servers:
            recording = trajectory_server(trajectory, task=task, base_dir=WORKSPACE)
            box = await Toolbox.open([*servers, recording])
            try:
                return await judge_trajectory(
                    task,
                    trajectory,
                    model=model,
                    settings=JudgeSettings(mode="agent", limits=JudgeLimits(turn_limit=6)),
                    base_dir=WORKSPACE,
                    toolbox=box,
                )
            finally:
                await box.aclose()


async def test_an_agent_judge_runs_the_tests_and_sees_them_fail_on_a_fail_run() -> None:
    trajectory = load_dataset(WORKSPACE).trajectories[UNDONE]
    assert trajectory.label is not None
    assert trajectory.label.value == "FAIL"
    assert "tests pass" in (trajectory.final_response or "")
    recorded_runs = [
        step.observation.text or ""
        for step in trajectory.steps
        if step.observation is not None and "run_tests.py" in str(step.action)
    ]
    assert recorded_runs[-1].endswith("[exit code 0]")  # the run's own last test run passed

    model = ScriptedModel(respond=run_the_tests)
    verdict = await _judge(UNDONE, model)

    assert [call.name for call in verdict.tool_calls] == ["run_command"]
    shown = [m for m in model.calls[-1].messages if isinstance(m, ChatMessageTool)]
    output = text_of(shown[-1])
    assert "FAIL tests.test_config.MergeTests.test_nested_sections" in output
    assert output.endswith("[exit code 1]")
    assert verdict.verdict == "FAIL"
    offered = {tool.name for tool in model.calls[0].tools}
    assert {"run_command", "read_file", "list_files", "search_files"} <= offered
    assert not {"write_file", "edit_file"} & offered  # a read-only judge edits nothing


async def test_the_same_judge_sees_the_tests_pass_on_a_pass_run() -> None:
    trajectory = load_dataset(WORKSPACE).trajectories[FIXED]
    assert trajectory.label is not None
    assert trajectory.label.value == "PASS"
    model = ScriptedModel(respond=run_the_tests)
    verdict = await _judge(FIXED, model)
    shown = [m for m in model.calls[-1].messages if isinstance(m, ChatMessageTool)]
    assert text_of(shown[-1]).endswith("2 tests, 0 failed\n[exit code 0]")
    assert verdict.verdict == "PASS"


async def test_a_writable_judge_changes_its_clone_only() -> None:
    dataset = load_dataset(WORKSPACE)
    kind = environment_kind("workspace")
    async with (
        ProviderSet() as providers,
        FrozenReplays(dataset, providers, verify=False) as replays,
    ):
        clone = await replays.environment(UNDONE, writable=True)
        view = await replays.environment(UNDONE, writable=False)
        assert clone is not None
        assert view is not None
        async with (
            kind.judge_servers(clone, JudgeServerOptions(writable=True)) as [writer],
            kind.judge_servers(view, JudgeServerOptions(writable=False)) as [reader],
        ):
            ran = await writer.call("run_command", {"command": "echo probe > probe.txt"})
            assert not ran.is_error
            in_clone = await writer.call("read_file", {"path": "probe.txt"})
            in_view = await reader.call("read_file", {"path": "probe.txt"})
    assert not in_clone.is_error
    assert in_view.is_error
