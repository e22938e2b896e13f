"""Judging a whole dataset with the scripted model: the grid, environments, records and resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.grid_runner import (
    HARNESS_ERROR_PREFIX,
    LOGS_DIR,
    VERDICTS_FILE,
    GridSpec,
    JudgeArm,
    environment_notes,
    judge_dataset,
    read_records,
    run_key,
)
from dataset.models import Task
from dataset.store import load_dataset
from judge_agent.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    GenerateConfig,
    ToolInfo,
)
from judge_agent.providers.mock import Reply, ScriptedModel, reply, tool_call
from judge_agent.records import read_log

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"


class Inspector:
    """A script: in agent mode, call the environment's own tool once, then submit PASS."""

    def __init__(self) -> None:
        self.calls = 0
        self.tools_seen: list[set[str]] = []

    def __call__(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> Reply:
        self.calls += 1
        names = {tool.name for tool in tools}
        self.tools_seen.append(names)
        answered = any(isinstance(message, ChatMessageAssistant) for message in messages)
        if not tools:
            return "RESULT: FAIL\nCONFIDENCE: Low"
        if answered:
            return reply("", tool_call("submit_verdict", verdict="PASS", confidence=0.5))
        if "list_directory" in names:
            return reply("", tool_call("list_directory", path="."))
        if "list_schemas" in names:
            return reply("", tool_call("list_schemas"))
        return reply("", tool_call("trajectory_overview"))


@pytest.mark.desktop  # the example's GUI runs are judged on desktops
async def test_grid_over_the_mini_dataset_then_resume(tmp_path: Path) -> None:
    mini = load_dataset(MINI)
    script = Inspector()
    grid = GridSpec(modes=("agent", "llm"), turns=(2,), runs=1)
    summary = await judge_dataset(
        MINI,
        tmp_path,
        model_factory=lambda: ScriptedModel("inspector", respond=script),
        grid=grid,
        jobs=3,
    )
    assert summary.problems == []
    records = read_records(tmp_path / VERDICTS_FILE)
    # Search trajectories' claims are judged one per run (items="each"), the rest whole.
    subjects = sum(len(trajectory.items) or 1 for trajectory in mini.trajectories.values())
    assert subjects > len(mini.trajectories)
    assert len(records) == summary.runs == 2 * subjects
    for record in records.values():
        trajectory = mini.trajectories[record.trajectory_id]
        if record.item_id is not None:
            item = next(item for item in trajectory.items if item.id == record.item_id)
            assert record.label == item.label
        else:
            assert not trajectory.items
            assert record.label == (trajectory.label.value if trajectory.label else None)
        assert record.scripted
        assert record.model == "mock/inspector"
        if record.mode == "llm":
            assert record.turns == 0
            assert record.verdict.verdict == "FAIL"
            assert record.verdict.tool_calls == []
        else:
            assert record.verdict.verdict == "PASS"
            assert len(record.verdict.tool_calls) == 1
            assert not record.verdict.tool_calls[0].is_error
            expected = {"filesystem": "filesystem", "postgres": "postgres", "word": "desktop"}.get(
                mini.tasks[trajectory.task_id].subdomain, "trajectory-only"
            )
            assert record.environment == expected
        log = read_log(tmp_path / LOGS_DIR / f"{record.key}.jsonl")
        assert log[0]["event"] == "start"
        assert log[-1]["event"] == "verdict"
    # Agent judges see the environment's whole tool surface (on a private clone) and the
    # trajectory's tools.
    agent_tools = [names for names in script.tools_seen if names]
    assert any("read_text_file" in names for names in agent_tools)
    assert any("execute_sql" in names for names in agent_tools)
    assert all("VIEW_TRAJECTORY_STEP" in names for names in agent_tools)
    assert any("write_file" in names for names in agent_tools)
    assert any({"CLICK", "TYPING", "OBSERVE"} <= names for names in agent_tools)

    calls_before = script.calls
    again = await judge_dataset(
        MINI,
        tmp_path,
        model_factory=lambda: ScriptedModel("inspector", respond=script),
        grid=grid,
    )
    assert again.resumed == again.runs == summary.runs
    assert script.calls == calls_before


async def test_a_torn_record_is_judged_again(tmp_path: Path) -> None:
    grid = GridSpec(modes=("llm",), runs=2)
    factory = lambda: ScriptedModel("fail")  # noqa: E731
    await judge_dataset(MINI, tmp_path, model_factory=factory, grid=grid, jobs=4)
    path = tmp_path / VERDICTS_FILE
    lines = path.read_text().splitlines()
    victim = read_records(path)
    kept, torn = lines[:-1], lines[-1]
    path.write_text("\n".join(kept) + "\n" + torn[: len(torn) // 2] + "\n")
    summary = await judge_dataset(MINI, tmp_path, model_factory=factory, grid=grid)
    assert summary.resumed == len(lines) - 1
    assert set(read_records(path)) == set(victim)


async def test_read_only_judges_get_only_reading_tools(tmp_path: Path) -> None:
    """Over the example's filesystem runs (the tools checked are the filesystem server's)."""
    mini = load_dataset(MINI)
    files = {
        trajectory.id
        for trajectory in mini.trajectories.values()
        if mini.tasks[trajectory.task_id].subdomain == "filesystem"
    }
    script = Inspector()
    summary = await judge_dataset(
        MINI,
        tmp_path,
        model_factory=lambda: ScriptedModel("inspector", respond=script),
        grid=GridSpec(modes=("agent",), turns=(2,), judge_access="read-only"),
        only=files,
    )
    assert summary.problems == []
    assert summary.runs == len(files) > 0
    seen = [names for names in script.tools_seen if "read_text_file" in names]
    assert len(seen) >= len(files)
    assert not any({"write_file", "edit_file", "move_file"} & names for names in seen)


async def test_a_writing_judge_changes_only_its_own_clone(tmp_path: Path) -> None:
    """Two judges of one trajectory, one after the other, each overwriting the index the agent
    wrote: the second still reads the agent's version, not the first judge's."""
    shown: list[str] = []

    def writer(messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig) -> Reply:
        answers = [m for m in messages if isinstance(m, ChatMessageAssistant)]
        if not answers:
            return reply("", tool_call("read_text_file", path="index.md"))
        if len(answers) == 1:
            result = messages[-1]
            assert isinstance(result, ChatMessageTool)
            shown.append("".join(getattr(block, "text", "") for block in result.content))
            return reply("", tool_call("write_file", path="index.md", content="vandalised"))
        return reply("", tool_call("submit_verdict", verdict="FAIL"))

    only = {"fs-meeting-notes-index--sonnet-pass"}
    grid = GridSpec(modes=("agent",), turns=(4,), runs=2)
    await judge_dataset(
        MINI,
        tmp_path,
        model_factory=lambda: ScriptedModel("writer", respond=writer),
        grid=grid,
        jobs=1,
        only=only,
    )
    assert len(shown) == 2
    assert "vandalised" not in shown[0]
    assert shown[0] == shown[1]


def test_run_keys_are_safe_file_names() -> None:
    key = run_key("traj/../x", "agent", 16, "openai/gpt-4o", 1)
    assert "/" not in key
    assert key.endswith("--r1")
    long = run_key("t" * 300, "agent", 16, "openai/gpt-4o", 1)
    assert len(long) <= 180
    assert long != run_key("t" * 301, "agent", 16, "openai/gpt-4o", 1)


async def test_a_crashed_run_is_recorded_invalid_and_retried_only_on_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An environment that cannot be opened is a harness error: an INVALID record naming it
    (not a silent retry on every invocation); ``retry_invalid`` makes the run again."""
    from judge_agent import toolbox

    real_open = toolbox.Toolbox.open
    broken = {"on": True}

    async def failing_open(servers: Any) -> Any:
        if broken["on"]:
            raise OSError("sandbox vanished")
        return await real_open(servers)

    monkeypatch.setattr(toolbox.Toolbox, "open", staticmethod(failing_open))
    only = {"fs-meeting-notes-index--sonnet-pass"}
    grid = GridSpec(modes=("agent",), turns=(1,))
    factory = lambda: ScriptedModel("pass")  # noqa: E731
    first = await judge_dataset(MINI, tmp_path, model_factory=factory, grid=grid, only=only)
    (record,) = read_records(tmp_path / VERDICTS_FILE).values()
    assert record.verdict.verdict == "INVALID"
    assert record.verdict.stop_reason == "error"
    assert record.verdict.error == f"{HARNESS_ERROR_PREFIX}OSError: sandbox vanished"
    assert any("sandbox vanished" in problem for problem in first.problems)

    again = await judge_dataset(MINI, tmp_path, model_factory=factory, grid=grid, only=only)
    assert again.resumed == 1
    assert len((tmp_path / VERDICTS_FILE).read_text().splitlines()) == 1

    broken["on"] = False
    retried = await judge_dataset(
        MINI, tmp_path, model_factory=factory, grid=grid, only=only, retry_invalid=True
    )
    assert retried.resumed == 0
    assert retried.problems == []
    (record,) = read_records(tmp_path / VERDICTS_FILE).values()
    assert record.verdict.verdict == "PASS"


async def test_arms_of_several_models_and_variants_share_one_results_file(
    tmp_path: Path,
) -> None:
    only = {"fs-meeting-notes-index--sonnet-pass", "pg-active-customers-view--mini-inner-join"}
    plain = GridSpec(modes=("llm",))
    effortful = GridSpec(modes=("llm",), generate=GenerateConfig(reasoning_effort="high"))
    seen: list[GenerateConfig] = []

    def remember(
        messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> Reply:
        seen.append(config)
        return "RESULT: PASS"

    summary = await judge_dataset(
        MINI,
        tmp_path,
        arms=[
            JudgeArm(lambda: ScriptedModel("pass"), plain),
            JudgeArm(lambda: ScriptedModel("fail"), plain),
            JudgeArm(lambda: ScriptedModel("effort", respond=remember), effortful),
        ],
        only=only,
    )
    records = read_records(tmp_path / VERDICTS_FILE)
    assert summary.runs == len(records) == 6
    by_arm = {(r.model, r.variant) for r in records.values()}
    assert by_arm == {("mock/pass", ""), ("mock/fail", ""), ("mock/effort", "effort=high")}
    assert {r.agent for r in records.values()} == {
        load_dataset(MINI).trajectories[t].agent for t in only
    }
    assert [config.reasoning_effort for config in seen] == ["high", "high"]


def test_judges_get_the_notes_their_environment_kind_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The prompt notes come from the task's environment kind (``prompt_notes``): a kind that
    names other notes changes them; a task no kind serves keeps the subdomain's own."""
    from environments import registry
    from environments.filesystem.kind import FilesystemKind

    mini = load_dataset(MINI)
    by_subdomain = {task.subdomain: task for task in mini.tasks.values()}
    assert environment_notes(by_subdomain["filesystem"]) == "subdomains/filesystem.md"
    assert environment_notes(by_subdomain["postgres"]) == "subdomains/postgres.md"
    assert environment_notes(by_subdomain["word"]) is None

    class OtherNotes(FilesystemKind):
        def prompt_notes(self, task: Task) -> str | None:
            return "subdomains/deep.md"

    monkeypatch.setattr(registry, "_kinds", dict(registry._kinds))
    registry.register_kind(OtherNotes(), replace=True)
    assert environment_notes(by_subdomain["filesystem"]) == "subdomains/deep.md"
