"""Hostile apps against the Chromium phone on real Chromium, through the device MCP server: two
phones of one browser, where A's app allocates 6 GiB (cued once its renderer is in A's cgroup)
while B's app holds 1 GiB; and an app opening 150 windows. A is stopped by
its own context's memory cap, named in A's answer only, and goes back to its home screen; B keeps
its page, its data and its renderer; the windows past the tab cap are closed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from mcp import Client
from mcp import types as mcp_types

from mcp_servers.device.server import GET_SCREEN_TOOL, device_server
from sandboxes.android.chromium import (
    HOME_APP,
    PhoneBrowser,
    WebDevice,
    WebDeviceState,
    app_origin,
    chromium_executable,
)
from sandboxes.chromium import CONTEXT_MEMORY_BYTES, MAX_TABS
from tests.security.context_caps import page_placed, placed_cap
from tests.security.hostile_pages import START_GROWING, write_hostile_phone_apps

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]

PATIENCE = 60.0
"""How long the test waits for any one answer before calling the device server hung."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def phones() -> AsyncIterator[PhoneBrowser]:
    started = await PhoneBrowser.launch(chromium_executable(None))
    try:
        yield started
    finally:
        await started.close()


@pytest.fixture(scope="module")
def apps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_hostile_phone_apps(tmp_path_factory.mktemp("phone") / "apps")


async def call(client: Client, name: str, **arguments: object) -> mcp_types.CallToolResult:
    return await asyncio.wait_for(client.call_tool(name, arguments), PATIENCE)


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(
        block.text for block in result.content if isinstance(block, mcp_types.TextContent)
    )


async def title_of(device: WebDevice) -> str:
    return await device.page.title()


async def test_a_phone_holding_gigabytes_leaves_the_other_phones_theirs(
    phones: PhoneBrowser, apps: Path
) -> None:
    """Two phones of one browser: B's app holds 1 GiB and has data of its own, A's app
    allocates 6 GiB. A's answer names A's context's cap; B's page keeps its memory, its data and
    its renderer process, and answers."""
    limit = f"the browser context's memory cap ({CONTEXT_MEMORY_BYTES // 2**20:,} MiB)"
    kept = WebDeviceState(storage={"hold": {"kept": "B's data"}}, url=f"{app_origin('hold')}/")
    other = await phones.new_device(apps, kept)
    hostile = await phones.new_device(apps, WebDeviceState())
    try:
        async with (
            Client(device_server(hostile, observation="ui_elements").server()) as first,
            Client(device_server(other, observation="ui_elements").server()) as second,
        ):
            for _ in range(30):
                if await title_of(other) == "held 16":
                    break
                await asyncio.sleep(0.5)
            assert await title_of(other) == "held 16"
            cap, renderers = await placed_cap(other.page.context, "the other phone's")
            held = await call(second, GET_SCREEN_TOOL)
            assert not held.is_error, text_of(held)

            answer = await call(first, "open_app", app_name="Buffers")
            assert not answer.is_error, text_of(answer)
            # Cued once its renderer is in A's cgroup, the app allocates step by step,
            # answering meanwhile, until a limit ends it; poll until a call reports that.
            await page_placed(hostile.page, "the hostile phone's")
            await hostile.page.evaluate(START_GROWING)
            for _ in range(40):
                if answer.is_error:
                    break
                answer = await call(first, "wait")
            assert answer.is_error, text_of(answer)
            assert limit in text_of(answer)
            assert f"the phone's page ({app_origin('buffers')}/)" in text_of(answer)
            assert "the phone shows the home screen" in text_of(answer)
            # A works again, on its home screen.
            again = await call(first, GET_SCREEN_TOOL)
            assert not again.is_error, text_of(again)
            assert hostile.page.url == f"{app_origin(HOME_APP)}/"
            assert "Buffers" in text_of(again)

            # B: never told of A's limit; its page still holds its gigabyte and answers.
            still = await call(second, GET_SCREEN_TOOL)
            assert not still.is_error, text_of(still)
            assert "Population: 1,204" in text_of(still)
            assert "memory cap" not in text_of(held) + text_of(still)
            assert await title_of(other) == "held 16"
            assert renderers <= set(cap.cap.pids()), "the other phone's renderer was killed"
            assert (await other.state()).storage["hold"] == {"kept": "B's data"}
    finally:
        await hostile.close()
        await other.close()


async def test_a_phone_app_opening_150_windows_is_capped(phones: PhoneBrowser, apps: Path) -> None:
    """An app calling ``window.open`` 150 times leaves at most ``MAX_TABS`` pages open in its
    phone's context, and the phone keeps working."""
    device = await phones.new_device(apps, WebDeviceState())
    try:
        async with Client(device_server(device, observation="ui_elements").server()) as client:
            opened = await call(client, "open_app", app_name="Tabs")
            assert not opened.is_error, text_of(opened)
            await asyncio.sleep(2)  # let any late window.open land
            assert len(device.page.context.pages) <= MAX_TABS
            assert device.page.url == f"{app_origin('tabs')}/"
            screen = await call(client, GET_SCREEN_TOOL)
            assert not screen.is_error, text_of(screen)
            assert "opening" in text_of(screen)
            # The phone's own pages still open with the apps' windows at the cap: reading every
            # app's data opens one per app, going home keeps the screen.
            assert "tabs" not in (await device.state()).storage
            home = await call(client, "navigate_home")
            assert not home.is_error, text_of(home)
            assert device.page.url == f"{app_origin(HOME_APP)}/"
            assert len(device.page.context.pages) <= MAX_TABS
    finally:
        await device.close()
