"""``agentjudge serve``: a real MCP client over stdio reaches the replayed final state.

The expectations come from the recorded trajectories themselves: the file the agent wrote and the
view it created must be there, and the task's initial state must not be where the agent changed it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters, types

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"


def _serve(*arguments: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentjudge", "serve", *arguments, "--dataset", str(MINI)],
    )


def _text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


def _recorded(trajectory_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((MINI / "trajectories" / f"{trajectory_id}.json").read_text())
    return data


async def test_serve_filesystem_shows_the_file_the_agent_wrote_read_only() -> None:
    trajectory_id = "fs-meeting-notes-index--sonnet-pass"
    write = next(
        step["action"]["arguments"]
        for step in _recorded(trajectory_id)["steps"]
        if step["action"].get("name") == "write_file"
    )
    written = write["path"].replace("${SANDBOX_ROOT}/", "")
    assert not (MINI / "tasks" / "fs-meeting-notes-index" / "initial" / written).exists()
    async with Client(_serve("filesystem", trajectory_id), read_timeout_seconds=120) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "write_file" not in names
        result = await client.call_tool("read_text_file", {"path": written})
        assert not result.is_error, _text(result)
        assert _text(result) == write["content"]
        # The record's tools come with the environment's, as a tool-using judge has them.
        assert {"VIEW_TRAJECTORY_STEP", "trajectory_overview"} <= names
        step = await client.call_tool("VIEW_TRAJECTORY_STEP", {"step": 1})
    recorded = _recorded(trajectory_id)["steps"][0]
    assert not step.is_error, _text(step)
    assert recorded["action"]["name"] in _text(step)


async def test_serve_sql_shows_the_view_the_agent_created() -> None:
    trajectory_id = "pg-active-customers-view--sonnet-pass"
    async with Client(_serve("sql", trajectory_id), read_timeout_seconds=120) as client:
        listed = await client.call_tool(
            "list_objects", {"schema_name": "public", "object_type": "view"}
        )
        assert "active_customers" in _text(listed)
        refused = await client.call_tool("execute_sql", {"sql": "DROP VIEW active_customers"})
        assert refused.is_error
        again = await client.call_tool(
            "list_objects", {"schema_name": "public", "object_type": "view"}
        )
        assert "active_customers" in _text(again)


async def test_serve_trajectory_views_a_recorded_step() -> None:
    trajectory_id = "search-python3-release-dates--pass"
    recorded = _recorded(trajectory_id)["steps"][0]
    async with Client(_serve("trajectory", trajectory_id), read_timeout_seconds=60) as client:
        step = await client.call_tool("VIEW_TRAJECTORY_STEP", {"step": 1})
    assert not step.is_error
    assert recorded["action"]["name"] in _text(step)
    assert recorded["action"]["arguments"]["query"] in _text(step)
    assert recorded["observation"]["text"][:60] in _text(step)


def _run_serve(kind: str, trajectory_id: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentjudge", "serve", kind, trajectory_id, "--dataset", str(MINI)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_serve_refuses_an_unknown_trajectory_and_a_kind_mismatch() -> None:
    unknown = _run_serve("filesystem", "no-such-run")
    assert unknown.returncode == 2
    assert "no trajectory 'no-such-run'" in unknown.stderr
    assert unknown.stdout == ""
    mismatch = _run_serve("sql", "fs-meeting-notes-index--sonnet-pass")
    assert mismatch.returncode == 2
    assert "not one for sql" in mismatch.stderr


@pytest.mark.desktop
@pytest.mark.slow
async def test_serve_desktop_gives_the_gui_tools_on_the_replayed_document() -> None:
    trajectory_id = "word-memo-q4-update--c13-pass"
    untouched = "To: All staff"  # a paragraph of memo.docx no recorded step edits
    async with Client(_serve("desktop", trajectory_id), read_timeout_seconds=600) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        observed = await client.call_tool("OBSERVE", {})
        pressed = await client.call_tool("HOTKEY", {"keys": ["ctrl", "home"]})
        step = await client.call_tool("VIEW_TRAJECTORY_STEP", {"step": 1})
    assert {"CLICK", "TYPING", "HOTKEY", "WAIT", "OBSERVE", "VIEW_TRAJECTORY_STEP"} <= names
    assert not step.is_error, _text(step)
    assert any(isinstance(block, types.ImageContent) for block in step.content)  # its screenshot
    assert not observed.is_error, _text(observed)
    assert untouched in _text(observed)
    assert any(isinstance(block, types.ImageContent) for block in observed.content)
    assert not pressed.is_error, _text(pressed)
