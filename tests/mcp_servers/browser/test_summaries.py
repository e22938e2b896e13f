"""Page summaries by the client's model (MCP sampling), on real Chromium: only when switched on
and the page is long, marked in the answer and recorded on the session; a client that cannot
sample gets the full page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client
from mcp import types as mcp_types

from mcp_servers.browser.server import browser_server
from mcp_servers.browser.summaries import SUMMARY_SYSTEM_PROMPT, SUMMARY_THRESHOLD
from sandboxes.browser.archive import FolderPage, load_archive, write_index
from sandboxes.browser.sandbox import BrowserProvider

LONG = "https://almanac.example/long"
SHORT = "https://almanac.example/short"


def _archive(folder: Path) -> Path:
    rows = "".join(f"<li>Station {n}: {1000 + n} mm of rain in 2023</li>" for n in range(400))
    (folder / "long.html").write_text(f"<title>Rainfall</title><h1>Rainfall</h1><ul>{rows}</ul>")
    (folder / "short.html").write_text("<title>Short</title><p>Driest year: 1976.</p>")
    write_index(
        folder, [FolderPage(url=LONG, file="long.html"), FolderPage(url=SHORT, file="short.html")]
    )
    return folder


def _text(result: mcp_types.CallToolResult) -> str:
    return "\n".join(
        block.text for block in result.content if isinstance(block, mcp_types.TextContent)
    )


async def test_long_pages_are_summarised_by_the_clients_model(tmp_path: Path) -> None:
    asked: list[mcp_types.CreateMessageRequestParams] = []

    async def sample(context: Any, params: mcp_types.CreateMessageRequestParams) -> Any:
        asked.append(params)
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(type="text", text="Station 7: 1007 mm [condensed]"),
            model="test-double",
        )

    archive = load_archive(_archive(tmp_path))
    async with BrowserProvider() as provider:
        sandbox = await provider.open(archive)
        server = browser_server(sandbox.session, summarise_pages=True)
        async with (
            sandbox,
            Client(server.server(), sampling_callback=sample, mode="legacy") as client,
        ):
            long = _text(await client.call_tool("browser_navigate", {"url": LONG}))
            short = _text(await client.call_tool("browser_navigate", {"url": SHORT}))
            summaries = list(sandbox.session.summaries)
    assert "Station 7: 1007 mm [condensed]" in long
    assert "Station 399" not in long
    assert "summarised by the judge's model (test-double)" in long
    assert "Driest year: 1976." in short
    assert "summarised" not in short
    assert len(asked) == 1
    assert asked[0].system_prompt == SUMMARY_SYSTEM_PROMPT
    sent = asked[0].messages[0].content
    assert isinstance(sent, mcp_types.TextContent)
    assert "Station 399" in sent.text
    assert [summary.url for summary in summaries] == [LONG]
    assert summaries[0].snapshot_chars > SUMMARY_THRESHOLD
    assert summaries[0].model == "test-double"


async def test_without_the_switch_or_sampling_the_page_is_shown_in_full(tmp_path: Path) -> None:
    archive = load_archive(_archive(tmp_path))
    async with BrowserProvider() as provider:
        sandbox = await provider.open(archive)
        async with sandbox:
            async with Client(browser_server(sandbox.session).server()) as client:
                off = _text(await client.call_tool("browser_navigate", {"url": LONG}))
            server = browser_server(sandbox.session, summarise_pages=True)
            async with Client(server.server(), mode="legacy") as client:
                unable = _text(await client.call_tool("browser_navigate", {"url": LONG}))
            assert sandbox.session.summaries == []
    assert "Station 399" in off
    assert "summarised" not in off
    assert "Station 399" in unable
    assert "not summarised: the client could not sample" in unable
