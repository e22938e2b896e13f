"""The browser MCP server on real Chromium, through real MCP client sessions (in-process and
stdio): Playwright MCP's tool names and parameters, refs from snapshots, forms, tabs, waits,
screenshots, and refusals worded for the model."""

from __future__ import annotations

import base64
import contextlib
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp import Client, StdioServerParameters
from mcp import types as mcp_types

from mcp_servers.browser.server import browser_server
from sandboxes.browser.archive import PageArchive, load_archive
from sandboxes.browser.sandbox import BrowserProvider, BrowserSandbox
from tests.sandboxes.browser.archived_site import (
    HOME,
    HOVER,
    LATE,
    LYON,
    MISSING,
    RESULTS,
    write_site,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

EXPECTED_TOOLS = {
    "browser_navigate": {"url"},
    "browser_navigate_back": set(),
    "browser_snapshot": set(),
    "browser_click": {"element", "ref", "doubleClick", "button", "modifiers"},
    "browser_type": {"element", "ref", "text", "submit", "slowly"},
    "browser_press_key": {"key"},
    "browser_select_option": {"element", "ref", "values"},
    "browser_hover": {"element", "ref"},
    "browser_tabs": {"action", "index"},
    "browser_wait_for": {"time", "text", "textGone"},
    "browser_take_screenshot": {"type", "filename", "element", "ref", "fullPage"},
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def archive(tmp_path_factory: pytest.TempPathFactory) -> PageArchive:
    return load_archive(write_site(tmp_path_factory.mktemp("site")))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def provider() -> AsyncIterator[BrowserProvider]:
    async with BrowserProvider() as started:
        yield started


@pytest_asyncio.fixture(loop_scope="module")
async def sandbox(provider: BrowserProvider, archive: PageArchive) -> AsyncIterator[BrowserSandbox]:
    opened = await provider.open(archive)
    async with opened:
        yield opened


@contextlib.asynccontextmanager
async def connected(sandbox: BrowserSandbox) -> AsyncIterator[Client]:
    """An MCP client session with the browser server over ``sandbox`` (in-process)."""
    async with Client(browser_server(sandbox.session).server()) as client:
        yield client


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(
        block.text for block in result.content if isinstance(block, mcp_types.TextContent)
    )


async def call(client: Client, name: str, **arguments: Any) -> str:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, text_of(result)
    return text_of(result)


def ref_of(snapshot: str, role: str, name: str) -> str:
    """The ref of the element with ``role`` and accessible ``name`` in a snapshot."""
    match = re.search(rf'- {role} "{re.escape(name)}"[^\n]*\[ref=([^\]]+)\]', snapshot)
    assert match, f"no {role} {name!r} in:\n{snapshot}"
    return match.group(1)


async def test_the_tools_have_playwright_mcp_names_and_parameters(sandbox: BrowserSandbox) -> None:
    async with connected(sandbox) as client:
        listed = await client.list_tools()
        tools = {tool.name: tool for tool in listed.tools}
        assert set(tools) == set(EXPECTED_TOOLS)
        for name, parameters in EXPECTED_TOOLS.items():
            assert set(tools[name].input_schema.get("properties", {})) == parameters, name
        assert set(tools["browser_click"].input_schema["required"]) == {"ref"}
        assert tools["browser_snapshot"].annotations is not None
        assert tools["browser_snapshot"].annotations.read_only_hint is True
        assert tools["browser_click"].annotations is not None
        assert tools["browser_click"].annotations.open_world_hint is False


async def test_navigate_and_snapshot_show_the_archived_page(sandbox: BrowserSandbox) -> None:
    async with connected(sandbox) as client:
        opened = await call(client, "browser_navigate", url=HOME)
        assert f"- URL: {HOME}" in opened
        assert "- Title: Encyclopedia" in opened
        assert re.search(r'- link "Lyon" \[ref=\w+\]', opened)
        snapshot = await call(client, "browser_snapshot")
        assert snapshot.count("[ref=") >= 6
        # Refs are stable within a page: a second snapshot names the same elements the same way.
        again = await call(client, "browser_snapshot")
        assert ref_of(again, "link", "Atlantis") == ref_of(snapshot, "link", "Atlantis")


async def test_clicking_a_referenced_link_follows_it(sandbox: BrowserSandbox) -> None:
    async with connected(sandbox) as client:
        snapshot = await call(client, "browser_navigate", url=HOME)
        clicked = await call(
            client, "browser_click", element="Lyon link", ref=ref_of(snapshot, "link", "Lyon")
        )
        assert f"- URL: {LYON}" in clicked
        assert "522,250 inhabitants" in clicked
        back = await call(client, "browser_navigate_back")
        assert f"- URL: {HOME}" in back


async def test_target_is_accepted_for_ref(sandbox: BrowserSandbox) -> None:
    async with connected(sandbox) as client:
        snapshot = await call(client, "browser_navigate", url=HOME)
        clicked = await call(client, "browser_click", target=ref_of(snapshot, "link", "Lyon"))
        assert f"- URL: {LYON}" in clicked


async def test_typing_selecting_and_submitting_a_form(sandbox: BrowserSandbox) -> None:
    async with connected(sandbox) as client:
        snapshot = await call(client, "browser_navigate", url=HOME)
        typed = await call(
            client,
            "browser_type",
            element="search box",
            ref=ref_of(snapshot, "textbox", "Search terms"),
            text="lyon",
        )
        assert re.search(r'textbox "Search terms"[^\n]*: lyon', typed)
        selected = await call(
            client,
            "browser_select_option",
            element="language",
            ref=ref_of(snapshot, "combobox", "Language"),
            values=["fr"],
        )
        assert re.search(r'option "French" \[selected\]', selected)
        submitted = await call(
            client, "browser_click", element="Search", ref=ref_of(snapshot, "button", "Search")
        )
        assert f"- URL: {RESULTS}" in submitted
        assert "Results for lyon (French)" in submitted


async def test_type_with_submit_presses_enter(sandbox: BrowserSandbox) -> None:
    async with connected(sandbox) as client:
        snapshot = await call(client, "browser_navigate", url=HOME)
        box = ref_of(snapshot, "textbox", "Search terms")
        await call(
            client,
            "browser_select_option",
            ref=ref_of(snapshot, "combobox", "Language"),
            values=["French"],
        )
        submitted = await call(
            client, "browser_type", ref=box, text="lyon", submit=True, slowly=True
        )
        assert f"- URL: {RESULTS}" in submitted


async def test_press_key_hover_and_wait(sandbox: BrowserSandbox) -> None:
    async with connected(sandbox) as client:
        snapshot = await call(client, "browser_navigate", url=HOVER)
        assert "Founded 43 BC" not in snapshot
        hovered = await call(client, "browser_hover", ref=ref_of(snapshot, "button", "Founding"))
        assert "Founded 43 BC" in hovered
        await call(client, "browser_navigate", url=LATE)
        waited = await call(client, "browser_wait_for", text="Census figures ready")
        assert "Census figures ready" in waited
        snapshot = await call(client, "browser_navigate", url=HOME)
        await call(client, "browser_click", ref=ref_of(snapshot, "textbox", "Search terms"))
        pressed = await call(client, "browser_press_key", key="a")
        assert re.search(r'textbox "Search terms"[^\n]*: a', pressed)


async def test_tabs_open_switch_and_close(sandbox: BrowserSandbox) -> None:
    async with connected(sandbox) as client:
        snapshot = await call(client, "browser_navigate", url=HOME)
        await call(client, "browser_click", ref=ref_of(snapshot, "link", "Lyon in a new tab"))
        listed = await call(client, "browser_tabs", action="list")
        assert listed.count("\n- ") == 2
        assert LYON in listed
        selected = await call(client, "browser_tabs", action="select", index=1)
        assert f"- URL: {LYON}" in selected
        closed = await call(client, "browser_tabs", action="close", index=1)
        assert f"- URL: {HOME}" in closed
        await call(client, "browser_tabs", action="new")
        assert "- 1: (current)" in await call(client, "browser_tabs", action="list")
        missing = await client.call_tool("browser_tabs", {"action": "select", "index": 7})
        assert missing.is_error
        assert "no tab 7" in text_of(missing)


async def test_screenshot_returns_an_image(sandbox: BrowserSandbox) -> None:
    async with connected(sandbox) as client:
        await call(client, "browser_navigate", url=LYON)
        result = await client.call_tool("browser_take_screenshot", {"filename": "/tmp/x.png"})
        assert not result.is_error
        images = [block for block in result.content if isinstance(block, mcp_types.ImageContent)]
        assert len(images) == 1
        assert images[0].mime_type == "image/png"
        assert base64.b64decode(images[0].data)[:8] == b"\x89PNG\r\n\x1a\n"
        assert "no file is written" in text_of(result)
        assert not Path("/tmp/x.png").exists()


async def test_a_page_outside_the_archive_says_so(sandbox: BrowserSandbox) -> None:
    async with connected(sandbox) as client:
        shown = await call(client, "browser_navigate", url=MISSING)
        assert "HTTP status: 404 (not in the archive)" in shown
        assert "Not in the archive" in shown


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "chrome://version", "javascript:alert(1)", "data:text/html,hi"],
)
async def test_other_schemes_are_refused(sandbox: BrowserSandbox, url: str) -> None:
    async with connected(sandbox) as client:
        result = await client.call_tool("browser_navigate", {"url": url})
        assert result.is_error
        assert "only http and https" in text_of(result)


async def test_unknown_and_stale_refs_ask_for_a_new_snapshot(sandbox: BrowserSandbox) -> None:
    async with connected(sandbox) as client:
        snapshot = await call(client, "browser_navigate", url=HOME)
        old = ref_of(snapshot, "link", "Atlantis")
        await call(client, "browser_navigate", url=LYON)
        stale = await client.call_tool("browser_click", {"element": "Atlantis", "ref": old})
        assert stale.is_error
        assert "take a new snapshot" in text_of(stale)
        injected = await client.call_tool("browser_click", {"ref": "e1 >> css=body"})
        assert injected.is_error
        assert "not an element reference" in text_of(injected)
        missing = await client.call_tool("browser_click", {"element": "x"})
        assert missing.is_error
        assert "ref" in text_of(missing)


@pytest.mark.slow
async def test_stdio_server_serves_an_archive(archive: PageArchive) -> None:
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_servers.browser", "--archive", str(archive.source), "--start-url", HOME],
        env={"PYTHONPATH": str(Path(__file__).parents[3]), "PATH": "/usr/bin:/bin"},
    )
    async with Client(parameters, read_timeout_seconds=60) as client:
        snapshot = await call(client, "browser_snapshot")
        assert f"- URL: {HOME}" in snapshot
        clicked = await call(client, "browser_click", ref=ref_of(snapshot, "link", "Lyon"))
        assert "522,250 inhabitants" in clicked
