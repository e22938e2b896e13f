"""The GUI MCP server on real local desktops (Xvfb, LibreOffice Writer, the control server).

A scripted-model agent judge drives the server through the judge loop: it reads the element
list, clicks the paragraph it finds there, types, and the next observation shows the typed text.
The other tests call the tools through ``mcp.Client`` in-process and over stdio. Expected texts
are the ones written into the generated documents and typed by the tests.
"""

from __future__ import annotations

import base64
import io
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path, PurePosixPath
from typing import Any

import docx
import pytest_asyncio
from mcp import Client, StdioServerParameters, types

from dataset.actions import Computer13Action
from dataset.models import Task, Trajectory
from judge_agent.conversation import JudgeLimits
from judge_agent.loop import JudgeSettings, judge_trajectory
from judge_agent.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, GenerateConfig
from judge_agent.model import ToolInfo as ModelToolInfo
from judge_agent.providers.mock import ScriptedModel, reply, tool_call
from judge_agent.toolbox import Toolbox
from mcp_servers.desktop import ACTION_TOOLS, OBSERVE_TOOL, desktop_server
from sandboxes.desktop.local import LocalDesktopProvider
from sandboxes.desktop.sandbox import DesktopSandbox, DocumentFile

REPO = Path(__file__).resolve().parents[3]
PARAGRAPH = "Quarterly figures are final"


def _docx(*paragraphs: str) -> bytes:
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


@pytest_asyncio.fixture
async def desktop() -> AsyncIterator[DesktopSandbox]:
    provider = LocalDesktopProvider()
    try:
        sandbox = await provider.start_desktop(
            DocumentFile(PurePosixPath("Documents/report.docx"), _docx(PARAGRAPH))
        )
        yield sandbox
    finally:
        await provider.aclose()


def _text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def _images(result: types.CallToolResult) -> list[types.ImageContent]:
    return [block for block in result.content if isinstance(block, types.ImageContent)]


def _paragraph_center(tree_text: str, text: str) -> tuple[int, int]:
    """The middle of the paragraph row holding ``text`` in a linearised tree."""
    for line in tree_text.splitlines():
        fields = line.split("\t")
        if len(fields) == 7 and fields[0] == "paragraph" and text in fields[2]:
            x, y = map(int, re.findall(r"-?\d+", fields[5]))
            width, height = map(int, re.findall(r"-?\d+", fields[6]))
            return x + width // 2, y + height // 2
    raise AssertionError(f"no paragraph with {text!r} in:\n{tree_text[:2000]}")


def _gui_task() -> tuple[Task, Trajectory]:
    task = Task.model_validate(
        {
            "id": "gui-append",
            "domain": "gui",
            "subdomain": "word",
            "instruction": "Append ' (checked)' to the paragraph about the quarterly figures.",
            "initial_state": {"kind": "empty"},
        }
    )
    trajectory = Trajectory.model_validate(
        {"id": "gui-append--run", "task_id": "gui-append", "agent": "a", "steps": []}
    )
    return task, trajectory


async def test_a_scripted_agent_judge_clicks_types_and_sees_the_change(
    desktop: DesktopSandbox,
) -> None:
    seen: dict[str, Any] = {}

    def respond(
        messages: list[ChatMessage], tools: list[ModelToolInfo], config: GenerateConfig
    ) -> ChatMessageAssistant:
        results = [m for m in messages if isinstance(m, ChatMessageTool)]
        if not results:
            return reply("", tool_call(OBSERVE_TOOL))
        last = results[-1]
        text = "".join(getattr(block, "text", "") for block in last.content)
        if len(results) == 1:
            seen["first"] = text
            x, y = _paragraph_center(text, PARAGRAPH)
            return reply("", tool_call("CLICK", x=x, y=y))
        if len(results) == 2:
            return reply("", tool_call("PRESS", key="end"))
        if len(results) == 3:
            return reply("", tool_call("TYPING", text=" (checked)"))
        seen["after"] = text
        return reply(
            "",
            tool_call("submit_verdict", verdict="PASS", confidence="High", reasoning="typed"),
        )

    model = ScriptedModel(respond=respond)
    server = desktop_server(desktop.client, perform=desktop.perform)
    box = await Toolbox.open([server])
    try:
        task, trajectory = _gui_task()
        verdict = await judge_trajectory(
            task,
            trajectory,
            model=model,
            settings=JudgeSettings(mode="agent", limits=JudgeLimits(turn_limit=8)),
            base_dir=REPO,
            toolbox=box,
        )
    finally:
        await box.aclose()

    assert verdict.verdict == "PASS"
    assert [call.name for call in verdict.tool_calls] == [OBSERVE_TOOL, "CLICK", "PRESS", "TYPING"]
    assert all(not call.is_error for call in verdict.tool_calls), verdict.tool_calls
    assert f"{PARAGRAPH} (checked)" not in seen["first"]
    assert f"{PARAGRAPH} (checked)" in seen["after"]
    # The model saw the screen as an image with each answer.
    typing_answer = [m for m in model.calls[-1].messages if isinstance(m, ChatMessageTool)][-1]
    assert isinstance(typing_answer.content, list)
    assert any(getattr(block, "type", "") == "image" for block in typing_answer.content)
    # The sandbox remembers what the judge did, as computer_13 actions.
    assert desktop.performed[-1] == Computer13Action(
        action_type="TYPING", parameters={"text": " (checked)"}
    )


async def test_tools_answer_in_the_configured_modality_and_refuse_bad_calls(
    desktop: DesktopSandbox,
) -> None:
    trees = desktop_server(desktop.client, observation="a11y_tree")
    pictures = desktop_server(desktop.client, observation="screenshot")
    async with Client(trees.server()) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        observed = await client.call_tool(OBSERVE_TOOL, {})
        half = await client.call_tool("CLICK", {"x": 10})
        off = await client.call_tool("CLICK", {"x": 5000, "y": 10})
        negative = await client.call_tool("MOVE_TO", {"x": -1, "y": 4})
        nothing = await client.call_tool("SCROLL", {})
        no_keys = await client.call_tool("HOTKEY", {"keys": []})
    async with Client(pictures.server()) as client:
        picture = await client.call_tool(OBSERVE_TOOL, {})
    async with Client(desktop_server(desktop.client, observation="som").server()) as client:
        marked = await client.call_tool(OBSERVE_TOOL, {})

    assert set(listed) == {*ACTION_TOOLS, OBSERVE_TOOL}
    assert len(ACTION_TOOLS) == 14
    click_hints = listed["CLICK"].annotations
    observe_hints = listed[OBSERVE_TOOL].annotations
    assert click_hints is not None
    assert click_hints.read_only_hint is False
    assert observe_hints is not None
    assert observe_hints.read_only_hint is True
    assert PARAGRAPH in _text(observed)
    assert _images(observed) == []
    assert not observed.is_error
    [image] = _images(picture)
    assert base64.b64decode(image.data).startswith(b"\x89PNG")
    assert PARAGRAPH not in _text(picture)
    # Set-of-marks: the tree numbered from 1, and the screenshot differs from the plain one
    # where the marks are drawn.
    [marked_image] = _images(marked)
    numbered = [line for line in _text(marked).splitlines() if line.split("\t")[0].isdigit()]
    assert [int(line.split("\t")[0]) for line in numbered] == list(range(1, len(numbered) + 1))
    assert any(PARAGRAPH in line for line in numbered)
    assert marked_image.data != image.data
    assert half.is_error
    assert "both x and y" in _text(half)
    assert off.is_error
    assert "off the screen" in _text(off)
    assert negative.is_error
    assert "x" in _text(negative)
    assert nothing.is_error
    assert no_keys.is_error
    assert "keys" in _text(no_keys)
    assert desktop.performed == []  # refused calls sent nothing


async def test_stdio_server_with_the_trajectory_tools(
    desktop: DesktopSandbox, tmp_path: Path
) -> None:
    mini_trajectory = (
        REPO / "datasets/examples/mini/trajectories/word-memo-q4-update--c13-pass.json"
    )
    socket = desktop.client.socket_path
    assert socket is not None
    parameters = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m", "mcp_servers.desktop", "--socket", str(socket),
            "--observation", "a11y_tree", "--trajectory", str(mini_trajectory),
        ],
        cwd=REPO,
    )  # fmt: skip
    async with Client(parameters) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        typed = await client.call_tool("HOTKEY", {"keys": ["ctrl", "end"]})
        typed = await client.call_tool("TYPING", {"text": "\nAdded over stdio"})
        step = await client.call_tool("VIEW_TRAJECTORY_STEP", {"step": 1})
    assert {"CLICK", "TYPING", OBSERVE_TOOL, "VIEW_TRAJECTORY_STEP", "trajectory_overview"} <= names
    assert not typed.is_error, _text(typed)
    assert "Added over stdio" in _text(typed)
    assert "Step 1 of 8" in _text(step)
    assert len(_images(step)) == 1


def test_stdio_server_says_when_no_desktop_answers(tmp_path: Path) -> None:
    finished = subprocess.run(
        [sys.executable, "-m", "mcp_servers.desktop", "--socket", str(tmp_path / "none.sock")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert finished.returncode == 2
    assert "no desktop control server answers" in finished.stderr
