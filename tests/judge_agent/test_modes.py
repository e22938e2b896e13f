"""Judge modes: the built-in specs, unknown names, and modes registered from outside the package.

A mode registered here (the way a new mode module would) must be planned by the grid and run by
the loop with the scripted model, without any other code knowing its name.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from agentjudge.cli import app
from bench.grid_runner import GridSpec, JudgeRecord, plan_runs
from dataset.store import TRAJECTORIES_DIR, Dataset, load_dataset
from judge_agent import modes
from judge_agent.conversation import (
    JudgeRun,
    native_tool_turns,
    react_turns,
    single_call,
)
from judge_agent.loop import JudgeSettings, judge_trajectory
from judge_agent.model import ChatMessageSystem, ChatMessageUser, ToolCall
from judge_agent.modes import MODES, JudgeModeSpec, judge_mode, mode_names, register_mode
from judge_agent.providers.mock import ScriptedModel, reply, tool_call
from judge_agent.records import RunLog, read_log
from judge_agent.toolbox import Toolbox
from judge_agent.verdict_parsing import ParsedVerdict
from mcp_servers.trajectory.server import trajectory_server
from prompts import PromptStyle

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"
SEARCH = "search-python3-release-dates--pass"
STEP_ONE_NOTE = "The harness looked at step 1 for you:"


@pytest.fixture(scope="module")
def mini() -> Dataset:
    return load_dataset(MINI)


async def _peek(run: JudgeRun) -> ParsedVerdict | None:
    """A conversation written against the public run API: the harness views step 1 itself, shows
    it to the model, and asks for the verdict in one call."""
    text, is_error, _ = await run.run_tool(
        ToolCall(id="peek", name="VIEW_TRAJECTORY_STEP", arguments={"step": 1})
    )
    assert not is_error
    run.say(f"{STEP_ONE_NOTE}\n{text}")
    return await single_call(run)


PEEK = JudgeModeSpec(
    name="peek",
    description="the harness shows step 1, then one call without tools",
    conversation=_peek,
    prompt=PromptStyle(),
    uses_tools=True,  # the harness uses them; the model is neither offered nor told about them
)

AGENT_LISTED = JudgeModeSpec(
    name="agent-listed",
    description="native tool calling with every tool's arguments spelled out in the prompt",
    conversation=native_tool_turns,
    prompt=PromptStyle(tool_section="agent", list_arguments=True),
    uses_tools=True,
    native_tools=True,
    submit_verdict=True,
    turn_budget=True,
)


@pytest.fixture
def extra_modes() -> Iterator[None]:
    """``agent-listed`` and ``peek`` registered for one test, then removed."""
    register_mode(AGENT_LISTED)
    register_mode(PEEK)
    try:
        yield
    finally:
        for name in (AGENT_LISTED.name, PEEK.name):
            modes._REGISTRY.pop(name, None)


def test_the_built_in_modes() -> None:
    assert mode_names()[:3] == ("agent", "llm", "react")
    # The MobileJudgeBench methods follow, all in their group, none in ``all``.
    assert {judge_mode(name).group for name in mode_names()[3:]} == {"mobile-methods"}
    agent, llm, react = (judge_mode(name) for name in ("agent", "llm", "react"))
    assert agent.conversation is native_tool_turns
    assert (agent.uses_tools, agent.native_tools, agent.submit_verdict, agent.turn_budget) == (
        True,
        True,
        True,
        True,
    )
    assert agent.prompt == PromptStyle(tool_section="agent", list_arguments=False)
    assert llm.conversation is single_call
    assert (llm.uses_tools, llm.native_tools, llm.submit_verdict, llm.turn_budget) == (
        False,
        False,
        False,
        False,
    )
    assert llm.prompt.tool_section is None
    assert react.conversation is react_turns
    assert (react.uses_tools, react.native_tools, react.submit_verdict, react.turn_budget) == (
        True,
        False,
        False,
        True,
    )
    assert react.prompt == PromptStyle(tool_section="react", list_arguments=True)


def test_unknown_modes_are_refused_with_the_known_names() -> None:
    with pytest.raises(ValueError, match=r"unknown judge mode 'chat' \(known: agent, llm, react, "):
        judge_mode("chat")
    with pytest.raises(ValidationError, match="known: agent, llm, react"):
        JudgeSettings(mode="chat")
    with pytest.raises(ValidationError, match="known: agent, llm, react"):
        GridSpec(modes=("agent", "chat"))


def test_the_command_line_lists_the_registered_modes(extra_modes: None) -> None:
    result = CliRunner(env={"COLUMNS": "200", "JUDGE_MODEL": ""}).invoke(
        app, ["judge", str(MINI), "--mode", "agent,chat"]
    )
    assert result.exit_code == 2
    assert "unknown mode 'chat'" in result.output
    output = " ".join(result.output.replace("│", " ").split())
    assert "agent, llm, react, " in output
    assert "agent-listed, peek" in output


def test_a_mode_spec_is_checked() -> None:
    with pytest.raises(ValueError, match="lower-case"):
        JudgeModeSpec(name="Agent", description="", conversation=single_call, prompt=PromptStyle())
    with pytest.raises(ValueError, match="native_tools needs uses_tools"):
        JudgeModeSpec(
            name="x",
            description="",
            conversation=single_call,
            prompt=PromptStyle(),
            native_tools=True,
        )
    with pytest.raises(ValueError, match="already registered"):
        register_mode(judge_mode("agent"))


def test_registered_modes_are_planned_by_their_turn_budget(
    mini: Dataset, extra_modes: None
) -> None:
    assert {"agent-listed", "peek"} <= set(MODES)
    grid = GridSpec(modes=("llm", "agent-listed", "peek"), turns=(2, 4))
    planned = plan_runs(mini, grid, "mock/x")
    by_mode: dict[str, set[int]] = {}
    for run in planned:
        by_mode.setdefault(run.mode, set()).add(run.turns)
    assert by_mode == {"llm": {0}, "agent-listed": {2, 4}, "peek": {0}}
    # One subject per trajectory, or per claim for those with claims (items="each").
    subjects = sum(len(trajectory.items) or 1 for trajectory in mini.trajectories.values())
    assert len(planned) == subjects * (1 + 2 + 1)
    assert all(f"--{run.mode}--t{run.turns}--" in run.key for run in planned)


async def _trajectory_tools(mini: Dataset) -> Toolbox:
    trajectory = mini.trajectories[SEARCH]
    server = trajectory_server(
        trajectory, task=mini.tasks[trajectory.task_id], base_dir=MINI / TRAJECTORIES_DIR
    )
    return await Toolbox.open([server])


async def test_a_registered_native_tool_mode_runs_in_the_loop(
    mini: Dataset, extra_modes: None, tmp_path: Path
) -> None:
    trajectory = mini.trajectories[SEARCH]
    model = ScriptedModel(
        replies=[
            reply("", tool_call("VIEW_TRAJECTORY_STEP", step=1)),
            reply("", tool_call("submit_verdict", verdict="FAIL", confidence=0.4, reasoning="r")),
        ]
    )
    toolbox = await _trajectory_tools(mini)
    try:
        verdict = await judge_trajectory(
            mini.tasks[trajectory.task_id],
            trajectory,
            model=model,
            settings=JudgeSettings(mode="agent-listed"),
            base_dir=MINI / TRAJECTORIES_DIR,
            toolbox=toolbox,
            log=RunLog(tmp_path / "log.jsonl"),
        )
    finally:
        await toolbox.aclose()
    assert verdict.verdict == "FAIL"
    assert verdict.mode == "agent-listed"
    assert verdict.stop_reason == "verdict"
    assert [call.name for call in verdict.tool_calls] == ["VIEW_TRAJECTORY_STEP"]
    first = model.calls[0]
    assert {tool.name for tool in first.tools} == {
        "VIEW_TRAJECTORY_STEP",
        "trajectory_overview",
        "submit_verdict",
    }
    system = first.messages[0]
    assert isinstance(system, ChatMessageSystem)
    # The mode's prompt style reached the prompt: the agent section, with arguments listed and
    # the turn budget stated.
    assert "`submit_verdict`" in system.content
    assert "Arguments: `step` (integer, required)" in system.content
    assert "at most 16 answers in which you may call tools" in system.content
    assert read_log(tmp_path / "log.jsonl")[0]["mode"] == "agent-listed"


async def test_a_registered_conversation_runs_in_the_loop(mini: Dataset, extra_modes: None) -> None:
    trajectory = mini.trajectories[SEARCH]
    model = ScriptedModel(replies=["RESULT: PASS\nCONFIDENCE: High"])
    toolbox = await _trajectory_tools(mini)
    try:
        verdict = await judge_trajectory(
            mini.tasks[trajectory.task_id],
            trajectory,
            model=model,
            settings=JudgeSettings(mode="peek"),
            base_dir=MINI / TRAJECTORIES_DIR,
            toolbox=toolbox,
        )
    finally:
        await toolbox.aclose()
    assert verdict.verdict == "PASS"
    assert verdict.mode == "peek"
    assert verdict.turns_used == 1
    assert [call.name for call in verdict.tool_calls] == ["VIEW_TRAJECTORY_STEP"]
    [call] = model.calls
    assert call.tools == []  # the mode offers no native tools
    said = call.messages[-1]
    assert isinstance(said, ChatMessageUser)
    assert isinstance(said.content, str)
    assert said.content.startswith(f"{STEP_ONE_NOTE}\nStep 1 of {len(trajectory.steps)}.")
    record = JudgeRecord.model_validate(
        {
            "key": "k",
            "trajectory_id": trajectory.id,
            "task_id": trajectory.task_id,
            "domain": "search",
            "subdomain": "deep",
            "mode": "peek",
            "turns": 0,
            "model": model.name,
            "run": 1,
            "label": None,
            "scripted": True,
            "environment": "trajectory-only",
            "verdict": verdict.model_dump(mode="json"),
        }
    )
    assert record.mode == "peek"


BY_ENTRY = JudgeModeSpec(
    name="by-entry",
    description="registered through an entry point naming this spec",
    conversation=single_call,
    prompt=PromptStyle(),
)


def test_entry_points_register_specs_and_plugin_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Installed packages add modes through ``agentjudge.modes``: an entry naming a spec, or a
    module that registers its own; a broken entry is warned about and the others still load."""
    group = modes.ENTRY_POINT_GROUP
    found = [
        EntryPoint(name="by-entry", value=f"{__name__}:BY_ENTRY", group=group),
        EntryPoint(name="plugin", value="tests.judge_agent.mode_plugin", group=group),
        EntryPoint(name="not-a-spec", value=f"{__name__}:STEP_ONE_NOTE", group=group),
        EntryPoint(name="broken", value="no_such_package_anywhere", group=group),
    ]

    def entry_points(*, group: str) -> list[EntryPoint]:
        assert group == modes.ENTRY_POINT_GROUP
        return found

    monkeypatch.setattr(modes, "entry_points", entry_points)
    monkeypatch.setattr(modes, "_REGISTRY", dict(modes._REGISTRY))
    monkeypatch.setattr(modes, "MODES", modes._REGISTRY.keys())
    modes._read_entry_points.cache_clear()
    try:
        with pytest.warns(UserWarning, match="could not be registered") as warned:
            assert judge_mode("by-entry") is BY_ENTRY
        messages = [str(warning.message) for warning in warned]
        assert any("broken" in message for message in messages), messages
        assert any("not a JudgeModeSpec" in message for message in messages), messages
        assert judge_mode("plugged-mode").description == "registered when its module is imported"
        assert {"by-entry", "plugged-mode"} <= set(mode_names())
        assert plan_runs(load_dataset(MINI), GridSpec(modes=("by-entry",)), "mock/x")
    finally:
        modes._read_entry_points.cache_clear()
