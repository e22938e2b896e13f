"""The browser kind end to end on real Chromium: a search trajectory recorded through the kind's
agent server replays faithfully against its archive, a tampered one diverges, the frozen state
reopens the pages the agent left, each judge gets its own browser, and ``agentjudge serve
browser`` serves it over stdio."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp import types as mcp_types

import environments.browser
from dataset.actions import ToolCallAction
from dataset.models import Observation, PageArchiveState, Step, Task, Trajectory
from dataset.store import Manifest, load_dataset, write_manifest, write_task, write_trajectory
from environments.backends import BackendChoice, ProviderSet
from environments.kind import JudgeServerOptions
from environments.registry import kind_for_task, served_kinds
from replay.engine import replay_trajectory
from tests.sandboxes.browser.archived_site import HOME, LYON, RESULTS, write_site

TASK_ID = "search-lyon-population"
KIND = environments.browser.KIND


def _task() -> Task:
    return Task(
        id=TASK_ID,
        domain="search",
        subdomain="deep",
        instruction="How many people live in Lyon according to the encyclopedia?",
        initial_state=PageArchiveState(path="archive", start_url=HOME),
    )


def _text(result: mcp_types.CallToolResult) -> str:
    return "\n".join(
        block.text for block in result.content if isinstance(block, mcp_types.TextContent)
    )


def _ref(snapshot: str, role: str, name: str) -> str:
    match = re.search(rf'- {role} "{re.escape(name)}"[^\n]*\[ref=([^\]]+)\]', snapshot)
    assert match, snapshot
    return match.group(1)


async def _record(root: Path) -> Trajectory:
    """Browse the archive through the kind's agent server, keeping every answer as a step."""
    task = load_dataset(root).tasks[TASK_ID]
    recorded: list[Step] = []
    async with ProviderSet(BackendChoice()) as providers:
        provider = await providers.get(KIND.name)
        sandbox = await provider.create(task, root / "tasks" / TASK_ID)
        async with sandbox:
            server = KIND.agent_server(sandbox)
            assert server is not None
            async with Client(server.server()) as client:

                async def step(name: str, **arguments: Any) -> str:
                    result = await client.call_tool(name, arguments)
                    text = _text(result)
                    recorded.append(
                        Step(
                            index=len(recorded) + 1,
                            action=ToolCallAction(name=name, arguments=arguments),
                            observation=Observation(text=text),
                            is_error=bool(result.is_error),
                        )
                    )
                    return text

                home = await step("browser_snapshot")
                box = _ref(home, "textbox", "Search terms")
                await step("browser_type", element="search", ref=box, text="lyon")
                language = _ref(home, "combobox", "Language")
                await step("browser_select_option", ref=language, values=["fr"])
                results = await step("browser_click", ref=_ref(home, "button", "Search"))
                assert f"- URL: {RESULTS}" in results
                await step("browser_click", ref=_ref(results, "link", "Lyon"))
                await step("browser_navigate", url="https://wiki.example/wiki/Atlantis")
                await step("browser_navigate_back")
    return Trajectory(
        id=f"{TASK_ID}--scripted",
        task_id=TASK_ID,
        agent="scripted",
        steps=recorded,
        final_response="522,250",
    )


def _dataset(root: Path) -> Path:
    write_manifest(root, Manifest(name="browser-test"))
    write_task(root, _task())
    write_site(root / "tasks" / TASK_ID / "archive")
    (root / "trajectories").mkdir()
    return root


async def test_the_kind_is_found_for_archived_search_tasks() -> None:
    assert kind_for_task(_task()) is KIND
    assert served_kinds()["browser"] is KIND
    assert KIND.tool_spec("browser_click") is not None
    assert KIND.tool_spec("read_file") is None


async def test_a_recorded_search_replays_faithfully_and_judges_get_their_own_browser(
    tmp_path: Path,
) -> None:
    root = _dataset(tmp_path / "dataset")
    trajectory = await _record(root)
    write_trajectory(root, trajectory)
    dataset = load_dataset(root)
    task = dataset.tasks[TASK_ID]
    async with ProviderSet(BackendChoice()) as providers:
        result = await replay_trajectory(
            trajectory, task, root / "tasks" / TASK_ID, providers, keep=True
        )
        assert result.report.verdict == "faithful", result.report.problems
        assert [step.status for step in result.report.steps] == ["match"] * len(trajectory.steps)
        snapshot = result.snapshot
        assert snapshot is not None
        first = await snapshot.clone(writable=False)
        second = await snapshot.clone(writable=True)
        async with first, second:
            async with (
                KIND.judge_servers(first, JudgeServerOptions(writable=False)) as servers,
                Client(servers[0].server()) as client,
            ):
                seen = _text(await client.call_tool("browser_snapshot", {}))
                # The agent ended on the Lyon page (back from the missing one).
                assert f"- URL: {LYON}" in seen
                await client.call_tool("browser_navigate", {"url": HOME})
            # The other judge's browser did not move.
            assert environments.browser.as_browser_sandbox(second).open_urls() == [LYON]
        await snapshot.destroy()


async def test_a_tampered_observation_diverges(tmp_path: Path) -> None:
    root = _dataset(tmp_path / "dataset")
    trajectory = await _record(root)
    steps = list(trajectory.steps)
    clicked = steps[4]
    assert clicked.observation is not None
    assert clicked.observation.text is not None
    forged = clicked.observation.text.replace("522,250", "480,000")
    steps[4] = clicked.model_copy(update={"observation": Observation(text=forged)})
    tampered = trajectory.model_copy(update={"steps": steps})
    async with ProviderSet(BackendChoice()) as providers:
        result = await replay_trajectory(
            tampered, _task(), root / "tasks" / TASK_ID, providers, verify=False
        )
    assert result.report.verdict == "diverged"
    assert [step.index for step in result.report.steps if step.status == "diverged"] == [5]


@pytest.mark.slow
async def test_agentjudge_serve_browser(tmp_path: Path) -> None:
    root = _dataset(tmp_path / "dataset")
    write_trajectory(root, await _record(root))
    parameters = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "agentjudge",
            "serve",
            "browser",
            f"{TASK_ID}--scripted",
            "--dataset",
            str(root),
        ],
        env={"PYTHONPATH": str(Path(__file__).parents[3]), "PATH": "/usr/bin:/bin"},
    )
    async with Client(parameters, read_timeout_seconds=120) as client:
        listed = await client.list_tools()
        assert "browser_snapshot" in {tool.name for tool in listed.tools}
        seen = _text(await client.call_tool("browser_snapshot", {}))
        assert f"- URL: {LYON}" in seen


async def test_page_summaries_follow_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _dataset(tmp_path / "dataset")
    async with ProviderSet(BackendChoice()) as providers:
        provider = await providers.get(KIND.name)
        sandbox = await provider.create(_task(), root / "tasks" / TASK_ID)
        async with sandbox:
            async with KIND.judge_servers(sandbox, JudgeServerOptions(writable=False)) as servers:
                assert servers[0].context.summarise_pages is False
                assert servers[0].samples is False  # the judge's client need not sample
            monkeypatch.setenv("AGENTJUDGE_BROWSER_SUMMARIES", "1")
            async with KIND.judge_servers(sandbox, JudgeServerOptions(writable=False)) as servers:
                assert servers[0].context.summarise_pages is True
                assert servers[0].samples is True
