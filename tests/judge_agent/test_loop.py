"""The judge loop with the scripted model, against real MCP servers over real DS sandboxes.

The model's replies are scripted (``mock/``); everything else is real: the mini dataset's
trajectories are replayed into filesystem and Postgres sandboxes, frozen, and served by the MCP
servers through in-memory client sessions. The assertions check what the *model was shown*
(tool results in its next request) against the sandbox's real state.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from dataset.store import TRAJECTORIES_DIR, Dataset, load_dataset
from environments.backends import BackendChoice, ProviderSet
from judge_agent.cache import CachedModel
from judge_agent.conversation import JudgeLimits
from judge_agent.loop import JudgeSettings, judge_trajectory
from judge_agent.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    ContentImage,
    GenerateConfig,
    ModelError,
    ModelOutput,
    ModelUsage,
    ToolCall,
)
from judge_agent.providers.mock import ScriptedModel, reply, tool_call
from judge_agent.records import RunLog, read_log
from judge_agent.toolbox import Toolbox
from judge_agent.verdict import Verdict
from judge_agent.verdict_parsing import REASK_MESSAGE
from mcp_servers.filesystem.server import filesystem_server
from mcp_servers.sql.judge_server import sql_server
from mcp_servers.trajectory.server import trajectory_server
from replay.frozen import FrozenReplays
from sandboxes.filesystem.sandbox import FilesystemSandbox
from sandboxes.postgres.sandbox import PostgresSandbox

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"
FS = "fs-meeting-notes-index--sonnet-pass"
PG = "pg-active-customers-view--sonnet-pass"
SEARCH = "search-python3-release-dates--pass"


@pytest.fixture(scope="module")
def mini() -> Dataset:
    return load_dataset(MINI)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def replays(mini: Dataset) -> AsyncIterator[FrozenReplays]:
    async with (
        ProviderSet(BackendChoice()) as providers,
        FrozenReplays(mini, providers, verify=False) as made,
    ):
        yield made


async def judge(
    mini: Dataset,
    trajectory_id: str,
    model: Any,
    *,
    toolbox: Toolbox | FrozenReplays | None = None,
    mode: str = "agent",
    log: RunLog | None = None,
    **limits: Any,
) -> Verdict:
    """Judge one mini trajectory; given the frozen replays, with the filesystem view's tools."""
    if isinstance(toolbox, FrozenReplays):
        async with fs_tools(mini, toolbox) as box:
            return await judge(
                mini, trajectory_id, model, toolbox=box, mode=mode, log=log, **limits
            )
    trajectory = mini.trajectories[trajectory_id]
    return await judge_trajectory(
        mini.tasks[trajectory.task_id],
        trajectory,
        model=model,
        settings=JudgeSettings(mode=mode, limits=JudgeLimits(**limits)),
        base_dir=MINI / TRAJECTORIES_DIR,
        toolbox=toolbox,
        log=log,
    )


def tool_messages(messages: list[ChatMessage]) -> list[ChatMessageTool]:
    return [message for message in messages if isinstance(message, ChatMessageTool)]


def text_of(message: ChatMessageTool) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(getattr(block, "text", "") for block in message.content)


def submit(verdict: str = "PASS") -> ChatMessageAssistant:
    return reply("", tool_call("submit_verdict", verdict=verdict, confidence=0.8, reasoning="ok"))


@asynccontextmanager
async def fs_tools(mini: Dataset, replays: FrozenReplays) -> AsyncIterator[Toolbox]:
    """The judge's tools over the filesystem trajectory's frozen view (opened in the test's own
    task: MCP sessions must be closed by the task that opened them)."""
    view = await replays.environment(FS, writable=False)
    assert isinstance(view, FilesystemSandbox)
    trajectory = mini.trajectories[FS]
    box = await Toolbox.open(
        [
            filesystem_server(view.tree, read_only=True),
            trajectory_server(
                trajectory, task=mini.tasks[trajectory.task_id], base_dir=MINI / TRAJECTORIES_DIR
            ),
        ]
    )
    try:
        yield box
    finally:
        await box.aclose()


@pytest.mark.asyncio(loop_scope="module")
async def test_multi_turn_tool_use_on_a_replayed_filesystem(
    mini: Dataset, replays: FrozenReplays, tmp_path: Path
) -> None:
    view = await replays.environment(FS, writable=False)
    assert isinstance(view, FilesystemSandbox)
    model = ScriptedModel(
        replies=[
            reply("Looking around.", tool_call("list_directory", path=".")),
            reply("", tool_call("read_text_file", path="index.md")),
            reply("", tool_call("VIEW_TRAJECTORY_STEP", step=4)),
            submit("PASS"),
        ]
    )
    log = RunLog(tmp_path / "run.jsonl")
    verdict = await judge(mini, FS, model, toolbox=replays, log=log)
    log.close()
    assert verdict.verdict == "PASS"
    assert verdict.stop_reason == "verdict"
    assert verdict.turns_used == 4
    assert [call.name for call in verdict.tool_calls] == [
        "list_directory",
        "read_text_file",
        "VIEW_TRAJECTORY_STEP",
    ]
    # What the model was shown is the replayed state: the file the agent wrote, as it is now.
    listing = text_of(tool_messages(model.calls[1].messages)[0])
    entries = await view.tree.list_directory("")
    assert sorted(line.split(" ", 1)[1] for line in listing.splitlines()) == sorted(
        entry.name for entry in entries
    )
    index = text_of(tool_messages(model.calls[2].messages)[1])
    assert index == (await view.tree.read_bytes("index.md")).decode()
    step = text_of(tool_messages(model.calls[3].messages)[2])
    recorded = mini.trajectories[FS].steps[3]
    assert recorded.action.name in step  # type: ignore[union-attr]
    # The tools offered: the servers' plus submit_verdict, on every turn.
    offered = {tool.name for tool in model.calls[0].tools}
    assert {"read_text_file", "VIEW_TRAJECTORY_STEP", "submit_verdict"} <= offered
    assert "write_file" not in offered
    events = [event["event"] for event in read_log(tmp_path / "run.jsonl")]
    assert events[0] == "start"
    assert events.count("model_call") == 4
    assert events.count("tool_call") == 4  # three tools and the submission
    assert events[-1] == "verdict"


@pytest.mark.asyncio(loop_scope="module")
async def test_sql_tool_results_show_the_replayed_database(
    mini: Dataset, replays: FrozenReplays
) -> None:
    view = await replays.environment(PG, writable=False)
    assert isinstance(view, PostgresSandbox)
    trajectory = mini.trajectories[PG]
    server = sql_server(view)
    box = await Toolbox.open([server])
    try:
        model = ScriptedModel(
            replies=[
                reply(
                    "", tool_call("execute_sql", sql="SELECT count(*) AS n FROM active_customers")
                ),
                reply("RESULT: PASS\nCONFIDENCE: High\nREASON: the view exists"),
            ]
        )
        verdict = await judge(mini, PG, model, toolbox=box)
    finally:
        await box.aclose()
    async with view.connect() as conn:
        expected = await conn.fetchval("SELECT count(*) FROM active_customers")
    shown = json.loads(text_of(tool_messages(model.calls[1].messages)[0]))
    assert shown["rows"] == [{"n": expected}]
    assert verdict.verdict == "PASS"
    assert verdict.confidence == pytest.approx(0.9)
    assert trajectory.id == verdict.trajectory_id


@pytest.mark.parametrize("turns", [1, 2])
@pytest.mark.asyncio(loop_scope="module")
async def test_turn_budget_then_one_forced_call_without_tools(
    mini: Dataset, replays: FrozenReplays, turns: int
) -> None:
    model = ScriptedModel(
        respond=lambda messages, tools, config: (
            reply("", tool_call("list_directory", path="."))
            if tools
            else reply("RESULT: FAIL\nCONFIDENCE: 0.4")
        )
    )
    verdict = await judge(mini, FS, model, toolbox=replays, turn_limit=turns)
    assert verdict.verdict == "FAIL"
    assert verdict.stop_reason == "turn_limit"
    assert verdict.turns_used == turns + 1
    assert len(verdict.tool_calls) == turns
    assert all(call.tools for call in model.calls[:turns])
    assert model.calls[turns].tools == []  # the final call offers no tools


@pytest.mark.asyncio(loop_scope="module")
async def test_turn_budget_with_the_invalid_policy(mini: Dataset, replays: FrozenReplays) -> None:
    model = ScriptedModel(
        respond=lambda messages, tools, config: reply("", tool_call("list_directory", path="."))
    )
    verdict = await judge(mini, FS, model, toolbox=replays, turn_limit=2, on_turn_limit="invalid")
    assert verdict.verdict == "INVALID"
    assert verdict.stop_reason == "turn_limit"
    assert len(model.calls) == 2


@pytest.mark.asyncio(loop_scope="module")
async def test_parallel_tool_calls_run_together_and_each_counts(
    mini: Dataset, replays: FrozenReplays
) -> None:
    view = await replays.environment(FS, writable=False)
    assert isinstance(view, FilesystemSandbox)
    names = sorted(entry.path for entry in await view.tree.walk() if entry.kind == "file")[:3]
    calls = [tool_call("read_text_file", path=name) for name in names]
    model = ScriptedModel(replies=[reply("", *calls), submit("FAIL")])
    verdict = await judge(mini, FS, model, toolbox=replays)
    assert verdict.verdict == "FAIL"
    assert len(verdict.tool_calls) == 3
    assert {call.turn for call in verdict.tool_calls} == {1}
    answers = tool_messages(model.calls[1].messages)
    assert [answer.tool_call_id for answer in answers] == [call.id for call in calls]
    for name, answer in zip(names, answers, strict=True):
        assert text_of(answer) == (await view.tree.read_bytes(name)).decode()


@pytest.mark.asyncio(loop_scope="module")
async def test_tool_call_limit_refuses_the_excess_and_asks_for_the_verdict(
    mini: Dataset, replays: FrozenReplays
) -> None:
    calls = [tool_call("list_directory", path=".") for _ in range(3)]
    model = ScriptedModel(replies=[reply("", *calls), reply("RESULT: PASS")])
    verdict = await judge(mini, FS, model, toolbox=replays, tool_call_limit=2)
    assert verdict.verdict == "PASS"
    assert verdict.stop_reason == "tool_call_limit"
    assert len(verdict.tool_calls) == 2
    refused = tool_messages(model.calls[1].messages)[2]
    assert refused.is_error
    assert "tool-call limit" in text_of(refused)
    assert model.calls[1].tools == []


@pytest.mark.asyncio(loop_scope="module")
async def test_tool_errors_go_back_to_the_model(mini: Dataset, replays: FrozenReplays) -> None:
    broken = ToolCall(id="bad", name="read_text_file", parse_error="Expecting value: line 1")
    model = ScriptedModel(
        replies=[
            reply(
                "",
                tool_call("read_text_file", path="no-such-file.md"),
                tool_call("delete_everything"),
                broken,
            ),
            submit("FAIL"),
        ]
    )
    verdict = await judge(mini, FS, model, toolbox=replays)
    missing, unknown, unparsed = tool_messages(model.calls[1].messages)
    assert missing.is_error
    assert "ENOENT" in text_of(missing)
    assert unknown.is_error
    assert "no tool 'delete_everything'" in text_of(unknown)
    assert unparsed.is_error
    assert "not a JSON object" in text_of(unparsed)
    assert verdict.verdict == "FAIL"
    assert [call.is_error for call in verdict.tool_calls] == [True, True, True]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_missing_verdict_is_asked_for_once_then_invalid(mini: Dataset) -> None:
    model = ScriptedModel(replies=["The agent seems fine.", "RESULT: PASS"])
    verdict = await judge(mini, SEARCH, model, mode="llm")
    assert verdict.verdict == "PASS"
    assert verdict.turns_used == 2
    reask = model.calls[1].messages[-1]
    assert isinstance(reask, ChatMessageUser)
    assert reask.content == REASK_MESSAGE

    stubborn = ScriptedModel(replies=["Looks fine.", "Still fine, I think."])
    invalid = await judge(mini, SEARCH, stubborn, mode="llm")
    assert invalid.verdict == "INVALID"
    assert invalid.error is not None
    assert len(stubborn.calls) == 2


@pytest.mark.asyncio(loop_scope="module")
async def test_bad_submission_is_an_error_the_model_can_fix(
    mini: Dataset, replays: FrozenReplays
) -> None:
    model = ScriptedModel(
        replies=[
            reply("", tool_call("submit_verdict", verdict="MAYBE")),
            submit("PASS"),
        ]
    )
    verdict = await judge(mini, FS, model, toolbox=replays)
    answer = tool_messages(model.calls[1].messages)[0]
    assert answer.is_error
    assert verdict.verdict == "PASS"
    assert verdict.turns_used == 2


@pytest.mark.asyncio(loop_scope="module")
async def test_llm_mode_offers_no_tools_and_sees_the_screenshot(mini: Dataset) -> None:
    trajectory_id = "word-memo-q4-update--c13-pass"
    model = ScriptedModel(replies=["RESULT: FAIL"])
    verdict = await judge(mini, trajectory_id, model, mode="llm")
    assert verdict.verdict == "FAIL"
    assert model.calls[0].tools == []
    user = model.calls[0].messages[1]
    assert isinstance(user, ChatMessageUser)
    assert isinstance(user.content, list)
    assert any(isinstance(block, ContentImage) for block in user.content)


@pytest.mark.asyncio(loop_scope="module")
async def test_react_mode_runs_actions_from_text(mini: Dataset, replays: FrozenReplays) -> None:
    view = await replays.environment(FS, writable=False)
    assert isinstance(view, FilesystemSandbox)
    model = ScriptedModel(
        replies=[
            'Thought: check the index\nAction: read_text_file\nAction Input: {"path": "index.md"}',
            "Thought: done\nFinal Answer: RESULT: PASS\nCONFIDENCE: Medium",
        ]
    )
    verdict = await judge(mini, FS, model, toolbox=replays, mode="react")
    assert verdict.verdict == "PASS"
    assert verdict.confidence == pytest.approx(0.6)
    assert model.calls[0].tools == []  # react never uses native tool calling
    observation = model.calls[1].messages[-1]
    assert isinstance(observation, ChatMessageUser)
    assert isinstance(observation.content, str)
    assert (await view.tree.read_bytes("index.md")).decode()[:40] in observation.content
    assert [call.name for call in verdict.tool_calls] == ["read_text_file"]


@pytest.mark.asyncio(loop_scope="module")
async def test_model_failure_and_limits_make_invalid_verdicts(mini: Dataset) -> None:
    failing = ScriptedModel(replies=[ModelError("HTTP 500 after 5 retries", retryable=True)])
    failed = await judge(mini, SEARCH, failing, mode="llm")
    assert (failed.verdict, failed.stop_reason) == ("INVALID", "error")
    assert failed.error is not None
    assert "HTTP 500" in failed.error

    slow = ScriptedModel(replies=["RESULT: PASS"], delay_seconds=5)
    timed_out = await judge(mini, SEARCH, slow, mode="llm", time_limit=0.2)
    assert (timed_out.verdict, timed_out.stop_reason) == ("INVALID", "time_limit")

    hungry = ScriptedModel(
        replies=["thinking...", "RESULT: PASS"],
        usage=ModelUsage(input_tokens=900, output_tokens=200),
    )
    capped = await judge(mini, SEARCH, hungry, mode="llm", token_limit=1000)
    assert (capped.verdict, capped.stop_reason) == ("INVALID", "token_limit")
    assert len(hungry.calls) == 1


@pytest.mark.asyncio(loop_scope="module")
async def test_prices_and_tokens_are_added_up(mini: Dataset) -> None:
    model = ScriptedModel(
        replies=["hmm", "RESULT: PASS"], usage=ModelUsage(input_tokens=1000, output_tokens=50)
    )
    verdict = await judge(mini, SEARCH, model, mode="llm")
    assert (verdict.tokens_in, verdict.tokens_out) == (2000, 100)
    assert verdict.cost_usd == 0.0  # mock/scripted is priced at zero in the table


@pytest.mark.asyncio(loop_scope="module")
async def test_the_response_cache_replays_a_run_without_calling_the_model(
    mini: Dataset, tmp_path: Path
) -> None:
    script = ["No verdict here.", "RESULT: FAIL\nCONFIDENCE: 0.7"]
    first = CachedModel(ScriptedModel("cached", replies=list(script)), tmp_path)
    verdict = await judge(mini, SEARCH, first, mode="llm")
    empty = ScriptedModel("cached", replies=[])  # would raise if it were called
    again = CachedModel(empty, tmp_path)
    log = RunLog(tmp_path / "rerun.jsonl")
    repeated = await judge(mini, SEARCH, again, mode="llm", log=log)
    log.close()
    calls = [e for e in read_log(tmp_path / "rerun.jsonl") if e["event"] == "model_call"]
    assert [call["cached"] for call in calls] == [True, True]
    assert (again.hits, again.misses, len(empty.calls)) == (2, 0, 0)
    assert repeated.verdict == verdict.verdict == "FAIL"
    assert (repeated.tokens_in, repeated.tokens_out) == (verdict.tokens_in, verdict.tokens_out)


@pytest.mark.asyncio(loop_scope="module")
async def test_concurrent_runs_share_one_toolbox_safely(
    mini: Dataset, replays: FrozenReplays
) -> None:
    async with fs_tools(mini, replays) as box:

        async def one(index: int) -> Verdict:
            model = ScriptedModel(
                replies=[reply("", tool_call("read_text_file", path="index.md")), submit("PASS")]
            )
            return await judge(mini, FS, model, toolbox=box)

        verdicts = await asyncio.gather(*(one(index) for index in range(8)))
    assert {verdict.verdict for verdict in verdicts} == {"PASS"}
    assert all(not verdict.tool_calls[0].is_error for verdict in verdicts)


def test_scripted_output_is_named_as_such() -> None:
    model = ScriptedModel()
    assert model.name == "mock/scripted"
    output = asyncio.run(ScriptedModel("pass").generate([], [], GenerateConfig()))
    assert isinstance(output, ModelOutput)
    assert "not a judgement" in output.message.content
    assert "RESULT: PASS" in output.message.content
