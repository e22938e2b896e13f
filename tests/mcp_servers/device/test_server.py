"""The device MCP server on the Chromium phone, through a real MCP client session: the same
tests in-process and over stdio (``python -m mcp_servers.device``)."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import struct
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters, types

from mcp_servers.device.server import ACTION_TOOLS, GET_SCREEN_TOOL, ObservationMode, device_server
from mcp_servers.trajectory.loading import load_trajectory_file
from mcp_servers.trajectory.server import VIEW_STEP_TOOL
from sandboxes.android.chromium import PhoneBrowser, chromium_executable
from sandboxes.android.sandbox import read_web_snapshot

REPO = Path(__file__).resolve().parents[3]
MOBILE = REPO / "datasets" / "mobile"
SNAPSHOT = MOBILE / "tasks" / "notes-pin-trip" / "device"
APPS = MOBILE / "assets" / "mobile-apps"
"""The suite's apps: one copy its tasks' snapshots share."""
RECORDED = MOBILE / "trajectories" / "notes-pin-trip--careful.json"
ACTIONS = {
    "click",
    "double_tap",
    "long_press",
    "input_text",
    "scroll",
    "swipe",
    "navigate_home",
    "navigate_back",
    "keyboard_enter",
    "open_app",
    "wait",
    "status",
    "answer",
}

TRANSPORTS = ["in-process", "stdio"]


@contextlib.asynccontextmanager
async def connected(
    transport: str, *, observation: ObservationMode = "both", trajectory: Path | None = None
) -> AsyncIterator[Client]:
    """A client session with a device server over a fresh phone from ``SNAPSHOT``."""
    if transport == "stdio":
        arguments = ["-m", "mcp_servers.device", "--snapshot", str(SNAPSHOT), "--apps", str(APPS)]
        arguments += ["--observation", observation]
        if trajectory is not None:
            arguments += ["--trajectory", str(trajectory)]
        parameters = StdioServerParameters(
            command=sys.executable,
            args=arguments,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        async with Client(parameters) as client:
            yield client
        return
    browser = await PhoneBrowser.launch(chromium_executable(None))
    try:
        apps, state = read_web_snapshot(SNAPSHOT, APPS)
        device = await browser.new_device(apps, state)
        recording: dict[str, Any] = {}
        if trajectory is not None:
            loaded = load_trajectory_file(trajectory)
            recording = {
                "trajectory": loaded.trajectory,
                "task": loaded.task,
                "base_dir": loaded.base_dir,
            }
        server = device_server(device, observation=observation, **recording)
        async with Client(server.server()) as client:
            yield client
        await device.close()
    finally:
        await browser.close()


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


def images_of(result: types.CallToolResult) -> list[types.ImageContent]:
    return [block for block in result.content if isinstance(block, types.ImageContent)]


def elements_of(result: types.CallToolResult) -> list[dict[str, Any]]:
    listing = text_of(result).split("UI elements:\n", 1)[1].split("\n\n", 1)[0]
    return [json.loads(line.split(": ", 1)[1]) for line in listing.splitlines()]


def index_of(result: types.CallToolResult, text: str) -> int:
    return next(int(e["index"]) for e in elements_of(result) if e.get("text") == text)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_action_set_is_published_with_annotations(transport: str) -> None:
    async with connected(transport) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == ACTIONS | {GET_SCREEN_TOOL}
    assert set(ACTION_TOOLS) == ACTIONS
    for name in ("click", "input_text", "navigate_back"):
        annotations = tools[name].annotations
        assert annotations is not None
        assert annotations.read_only_hint is False
        assert annotations.open_world_hint is False
    screen = tools[GET_SCREEN_TOOL].annotations
    assert screen is not None
    assert screen.read_only_hint is True
    click_schema = tools["click"].input_schema["properties"]
    assert {"index", "x", "y"} <= set(click_schema)
    assert tools["scroll"].input_schema["properties"]["direction"]["enum"] == [
        "up",
        "down",
        "left",
        "right",
    ]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_acting_by_index_answers_with_the_new_screen(transport: str) -> None:
    async with connected(transport) as client:
        home = await client.call_tool(GET_SCREEN_TOOL, {})
        assert [e["text"] for e in elements_of(home)] == ["Contacts", "Notes", "Settings", "Shop"]
        [image] = images_of(home)
        png = base64.b64decode(image.data)
        assert struct.unpack(">II", png[16:24]) == (720, 1480)
        opened = await client.call_tool("click", {"index": index_of(home, "Notes")})
        assert not opened.is_error
        assert text_of(opened).startswith("Done click: Tap(")
        assert "Trip packing list" in [e.get("text") for e in elements_of(opened)]
        note = await client.call_tool("click", {"index": index_of(opened, "Trip packing list")})
        assert index_of(note, "Pin") >= 0
        pinned = await client.call_tool("click", {"index": index_of(note, "Pin")})
        assert "Unpin" in [e.get("text") for e in elements_of(pinned)]
        typed = await client.call_tool(
            "input_text",
            {"index": index_of(pinned, "Trip packing list"), "text": " 2", "clear_text": False},
        )
        texts = [e.get("text") for e in elements_of(typed)]
        assert "Trip packing list 2" in texts
        # Back leaves the editor without saving the typing; the pin was saved when tapped.
        back = await client.call_tool("navigate_back", {})
        texts = [e.get("text") for e in elements_of(back)]
        assert "\N{PUSHPIN} Trip packing list" in texts
        assert "Trip packing list 2" not in " ".join(str(text) for text in texts)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_bad_calls_are_error_results_and_the_server_keeps_serving(transport: str) -> None:
    async with connected(transport) as client:
        home = await client.call_tool(GET_SCREEN_TOOL, {})
        assert not home.is_error
        far = await client.call_tool("click", {"index": 99})
        no_target = await client.call_tool("click", {})
        bad_direction = await client.call_tool("scroll", {"direction": "sideways"})
        no_app = await client.call_tool("open_app", {"app_name": "Camera"})
        off_screen = await client.call_tool("long_press", {"x": 5000, "y": 10})
        unknown = await client.call_tool("fly", {})
        still = await client.call_tool(GET_SCREEN_TOOL, {})
    assert far.is_error
    assert "no UI element 99 on this screen (it has 4: indexes 0 to 3)" in text_of(far)
    assert no_target.is_error
    assert "click needs an element index or x and y" in text_of(no_target)
    assert bad_direction.is_error
    assert "direction" in text_of(bad_direction)
    assert no_app.is_error
    assert "no app named 'Camera' on this phone (installed: Contacts, Notes, Settings, Shop)" in (
        text_of(no_app)
    )
    assert off_screen.is_error
    assert "off the 720x1480 screen" in text_of(off_screen)
    assert unknown.is_error
    assert not still.is_error
    assert elements_of(still) == elements_of(home)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("observation", ["screenshot", "ui_elements"])
async def test_answers_show_the_configured_observation(
    transport: str, observation: ObservationMode
) -> None:
    async with connected(transport, observation=observation) as client:
        answer = await client.call_tool("open_app", {"app_name": "Settings"})
    assert not answer.is_error
    if observation == "screenshot":
        assert len(images_of(answer)) == 1
        assert "UI elements" not in text_of(answer)
    else:
        assert images_of(answer) == []
        assert "Wi-Fi" in [e.get("text") for e in elements_of(answer)]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_recorded_steps_are_served_beside_the_phone(transport: str) -> None:
    recorded = load_trajectory_file(RECORDED).trajectory
    async with connected(transport, trajectory=RECORDED) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        step = await client.call_tool(VIEW_STEP_TOOL, {"step": 3})
        beyond = await client.call_tool(VIEW_STEP_TOOL, {"step": 99})
    assert VIEW_STEP_TOOL in names
    assert recorded.steps[2].reasoning is not None
    assert recorded.steps[2].reasoning in text_of(step)
    [image] = images_of(step)
    screenshot = recorded.steps[2].observation
    assert screenshot is not None
    assert screenshot.screenshot is not None
    on_disk = (RECORDED.parent / screenshot.screenshot).read_bytes()
    assert base64.b64decode(image.data) == on_disk
    assert beyond.is_error
    assert f"from 1 to {len(recorded.steps)}" in text_of(beyond)


def test_the_standalone_server_names_bad_input() -> None:
    missing = subprocess.run(
        [sys.executable, "-m", "mcp_servers.device", "--snapshot", "/no/such/folder"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert missing.returncode == 2
    assert "error: /no/such/folder: a web snapshot needs an apps/ folder" in missing.stderr
