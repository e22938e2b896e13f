"""Hostile pages against the browser MCP server on real Chromium: a script that never yields, a
page opening 150 tabs, pages holding gigabytes, a page holding gigabytes beside another user's
context in the same browser. Each call answers (with an error naming the limit), the browser
recovers, and the next call works; the other context keeps its page."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from mcp import Client
from mcp import types as mcp_types

from mcp_servers.browser.server import browser_server
from sandboxes.browser.archive import PageArchive, load_archive
from sandboxes.browser.sandbox import BrowserProvider, BrowserSandbox
from sandboxes.browser.session import CALL_DEADLINE_SECONDS
from sandboxes.chromium import (
    BROWSER_MEMORY_BYTES,
    CONTEXT_MEMORY_BYTES,
    MAX_TABS,
    RENDERER_HEAP_MB,
)
from tests.security.context_caps import page_placed, placed_cap
from tests.security.hostile_pages import (
    BUFFERS,
    BUFFERS_ON_CUE,
    CALM,
    HANG,
    HEAP,
    HOLD,
    KEY_HANG,
    START_GROWING,
    TABS,
    write_hostile_site,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]

PATIENCE = CALL_DEADLINE_SECONDS + 30
"""How long the test waits for any one answer before calling the server hung."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def archive(tmp_path_factory: pytest.TempPathFactory) -> PageArchive:
    return load_archive(write_hostile_site(tmp_path_factory.mktemp("hostile")))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def provider() -> AsyncIterator[BrowserProvider]:
    async with BrowserProvider(keep_spare=False) as started:
        yield started


@pytest_asyncio.fixture(loop_scope="module")
async def sandbox(provider: BrowserProvider, archive: PageArchive) -> AsyncIterator[BrowserSandbox]:
    opened = await provider.open(archive)
    async with opened:
        yield opened


async def call(client: Client, name: str, **arguments: object) -> mcp_types.CallToolResult:
    return await asyncio.wait_for(client.call_tool(name, arguments), PATIENCE)


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(
        block.text for block in result.content if isinstance(block, mcp_types.TextContent)
    )


async def test_a_page_that_never_yields_does_not_hold_the_browser(
    sandbox: BrowserSandbox,
) -> None:
    async with Client(browser_server(sandbox.session).server()) as client:
        started = time.monotonic()
        hung = await call(client, "browser_navigate", url=HANG)
        # A second call sent while the first runs waits its turn, then answers too.
        after = await call(client, "browser_snapshot")
        elapsed = time.monotonic() - started
        assert hung.is_error or after.is_error, (text_of(hung), text_of(after))
        answer = text_of(hung) + text_of(after)
        assert "Recovered: closed the tab at " + HANG in answer
        calm = await call(client, "browser_navigate", url=CALM)
        assert not calm.is_error, text_of(calm)
        assert "Population: 1,204" in text_of(calm)
    assert elapsed < 2 * CALL_DEADLINE_SECONDS + 20


async def test_a_call_past_its_deadline_answers_naming_it(sandbox: BrowserSandbox) -> None:
    sandbox.session.call_deadline = 10.0  # the same code path as the default, sooner
    async with Client(browser_server(sandbox.session).server()) as client:
        opened = await call(client, "browser_navigate", url=KEY_HANG)
        assert not opened.is_error, text_of(opened)
        started = time.monotonic()
        pressed = await call(client, "browser_press_key", key="a")
        assert time.monotonic() - started < 10.0 + 15
        assert pressed.is_error
        assert "per-call deadline of 10 s" in text_of(pressed)
        assert "Recovered: closed the tab at " + KEY_HANG in text_of(pressed)
        calm = await call(client, "browser_navigate", url=CALM)
        assert "Population: 1,204" in text_of(calm)


async def test_a_page_opening_150_tabs_is_capped(sandbox: BrowserSandbox) -> None:
    async with Client(browser_server(sandbox.session).server()) as client:
        opened = await call(client, "browser_navigate", url=TABS)
        assert not opened.is_error, text_of(opened)
        await asyncio.sleep(2)  # let any late window.open land
        assert len(sandbox.session.tabs) == MAX_TABS
        assert len(sandbox.session.context.pages) <= MAX_TABS
        # The note comes with the answer during which the cap closed a tab, or the next one.
        later = await call(client, "browser_snapshot")
        assert f"tab cap allows ({MAX_TABS} per browser)" in text_of(opened) + text_of(later)
        refused = await call(client, "browser_tabs", action="new")
        assert refused.is_error
        assert f"the tab cap, {MAX_TABS}" in text_of(refused)
        listed = await call(client, "browser_tabs", action="list")
        assert text_of(listed).count("\n- ") == MAX_TABS  # one line per tab
        assert sandbox.session.page.url == TABS


@pytest.mark.parametrize(
    ("url", "limit"),
    [(HEAP, f"{RENDERER_HEAP_MB} MiB"), (BUFFERS, f"{CONTEXT_MEMORY_BYTES // 2**20:,} MiB")],
    ids=["script-heap", "array-buffers"],
)
async def test_a_page_cannot_hold_gigabytes(
    provider: BrowserProvider, sandbox: BrowserSandbox, url: str, limit: str
) -> None:
    async with Client(browser_server(sandbox.session).server()) as client:
        opened = await call(client, "browser_navigate", url=url)
        answer = opened
        # The page allocates step by step after it loaded, answering meanwhile, until a limit
        # ends it; poll until a call reports that.
        for _ in range(40):
            if answer.is_error:
                break
            await asyncio.sleep(1)
            answer = await call(client, "browser_snapshot")
        assert answer.is_error, text_of(answer)
        assert "a page crashed (" + url in text_of(answer)
        assert limit in text_of(answer)
        assert "Recovered: closed the tab at " + url in text_of(answer)
        process = await provider.browser()
        assert process.cap is not None, "no memory cgroup could be made here"
        peak = process.cap.peak_bytes()
        assert peak is not None
        assert peak <= BROWSER_MEMORY_BYTES
        calm = await call(client, "browser_navigate", url=CALM)
        assert "Population: 1,204" in text_of(calm)


async def test_a_context_holding_gigabytes_leaves_the_others_theirs(
    provider: BrowserProvider, archive: PageArchive
) -> None:
    """Two users (judges) share one browser, a context each: B's page holds 1 GiB, A's page
    allocates 6 GiB (cued once its renderer is in A's cgroup). A is stopped by its own context's
    cap, named in A's answer only; B's page keeps its memory and answers, in the same renderer
    process as before."""
    limit = f"the browser context's memory cap ({CONTEXT_MEMORY_BYTES // 2**20:,} MiB)"
    async with (
        await provider.open(archive) as first,
        await provider.open(archive) as second,
        Client(browser_server(first.session).server()) as hostile,
        Client(browser_server(second.session).server()) as other,
    ):
        held = await call(other, "browser_navigate", url=HOLD)
        assert not held.is_error, text_of(held)
        for _ in range(30):
            if await second.session.page.title() == "held 16":
                break
            await asyncio.sleep(0.5)
        assert await second.session.page.title() == "held 16"
        cap, renderers = await placed_cap(second.session.context, "the other context's")
        answer = await call(hostile, "browser_navigate", url=BUFFERS_ON_CUE)
        assert not answer.is_error, text_of(answer)
        await page_placed(first.session.page, "the hostile context's")
        await first.session.page.evaluate(START_GROWING)
        for _ in range(40):
            if answer.is_error:
                break
            await asyncio.sleep(1)
            answer = await call(hostile, "browser_snapshot")
        assert answer.is_error, text_of(answer)
        assert "a page crashed (" + BUFFERS_ON_CUE in text_of(answer)
        assert limit in text_of(answer)
        # B: never told of A's limit, its page still holds its gigabyte and answers.
        still = await call(other, "browser_snapshot")
        assert not still.is_error, text_of(still)
        assert "Population: 1,204" in text_of(still)
        assert "memory cap" not in text_of(held) + text_of(still)
        assert second.session.crashed == []
        assert await second.session.page.title() == "held 16"
        assert renderers <= set(cap.cap.pids()), "the other context's renderer was killed"
        assert (await provider.browser()) is provider._process  # one browser for both
        calm = await call(hostile, "browser_navigate", url=CALM)
        assert "Population: 1,204" in text_of(calm)
