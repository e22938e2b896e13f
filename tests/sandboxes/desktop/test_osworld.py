"""The ``osworld`` desktop backend, against the project's control server over HTTP.

The test's "OSWorld VM" is a container of the desktop image whose control server listens on TCP,
published on 127.0.0.1 only: the backend reaches it by URL, as it would an OSWorld VM.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import PurePosixPath
from typing import Any

import pytest

from dataset.actions import Computer13Action
from sandboxes.base import SandboxError
from sandboxes.desktop.client import DesktopClient, DesktopControlError
from sandboxes.desktop.osworld import OsworldDesktopProvider, parse_urls
from tests.sandboxes.desktop.helpers import (
    act,
    save_keeping_format,
    start,
    wait_for_node,
    word_document,
    word_paragraphs,
)


@pytest.fixture
async def provider(remote_desktop: str) -> AsyncIterator[OsworldDesktopProvider]:
    made = OsworldDesktopProvider(remote_desktop, ready_timeout=90)
    try:
        yield made
    finally:
        await made.aclose()


@pytest.mark.docker
@pytest.mark.desktop
async def test_a_document_is_uploaded_opened_edited_saved_and_cleaned_up(
    provider: OsworldDesktopProvider, remote_desktop: str
) -> None:
    data = word_document("Survey over HTTP", "Nine buoys counted")
    desktop = await start(provider, "survey.docx", data)
    assert desktop.document == PurePosixPath("/home/user/Documents/survey.docx")
    assert provider.leased == {remote_desktop}
    paragraph = await wait_for_node(desktop, tag="paragraph", text_contains="Nine buoys")
    await act(desktop, "CLICK", x=paragraph.center[0], y=paragraph.center[1])
    await act(desktop, "HOTKEY", keys=["ctrl", "end"])
    await act(desktop, "TYPING", text=", all lit")
    await wait_for_node(desktop, tag="paragraph", text_contains="all lit")
    saved = await save_keeping_format(desktop, data)
    assert word_paragraphs(saved) == ["Survey over HTTP", "Nine buoys counted, all lit"]

    await desktop.destroy()
    assert provider.leased == frozenset()
    async with DesktopClient(remote_desktop) as client:
        deadline = time.monotonic() + 20
        while any("survey" in title for _, title in await client.windows() or []):
            assert time.monotonic() < deadline, "LibreOffice stayed open after release"
            await asyncio.sleep(0.3)
        with pytest.raises(DesktopControlError, match="404"):
            await client.download_file("/home/user/Documents/survey.docx")


@pytest.mark.docker
@pytest.mark.desktop
async def test_one_sandbox_per_desktop_at_a_time(
    provider: OsworldDesktopProvider, remote_desktop: str
) -> None:
    first = await provider.start_desktop(None)
    waiting = asyncio.create_task(provider.start_desktop(None))
    await asyncio.sleep(1.0)
    assert not waiting.done()  # the only desktop is leased
    await first.destroy()
    second = await asyncio.wait_for(waiting, 30)
    assert provider.leased == {remote_desktop}
    await second.destroy()
    assert provider.leased == frozenset()


async def test_unreachable_desktop_is_a_clear_error_and_is_handed_back() -> None:
    provider = OsworldDesktopProvider("http://127.0.0.1:9", ready_timeout=0.5)
    with pytest.raises(SandboxError, match=r"http://127\.0\.0\.1:9 did not answer"):
        await provider.start_desktop(None)
    assert provider.leased == frozenset()
    # Its cleanup could not reach it either, and says what may be left there.
    (note,) = provider.not_undone
    assert note.startswith("the desktop at http://127.0.0.1:9 was not put back")
    assert "LibreOffice may still run" in note
    assert "revert the VM" in note
    await provider.aclose()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ftp://vm:5000", "not the http"),
        ("vm:5000", "not the http"),
        ("http://a:5000, http://a:5000/", "given twice"),
        (" , ", "at least one"),
    ],
)
def test_bad_urls_are_refused(text: str, message: str) -> None:
    with pytest.raises(SandboxError, match=message):
        parse_urls(text)


def test_urls_are_split_and_normalised() -> None:
    assert parse_urls("http://a:5000/, https://b") == ("http://a:5000", "https://b")


@pytest.mark.docker
@pytest.mark.desktop
async def test_a_settled_action_takes_three_round_trips(
    provider: OsworldDesktopProvider,
) -> None:
    """The action's request and one screenshot that our server answers once the screen has
    settled: each screenshot is a slow round trip to a VM, and OSWorld's server leaks an X
    connection per screenshot."""
    desktop = await start(provider, "quiet.docx", word_document("Nothing moves here"))
    try:
        await wait_for_node(desktop, tag="paragraph", text_contains="Nothing moves")
        shift = Computer13Action(action_type="PRESS", parameters={"key": "shift"})
        await desktop.perform_settled(shift)  # the first also waits for the window to be drawn
        endpoints: list[str] = []
        send = desktop.client._request

        async def counted(method: str, endpoint: str, **options: Any) -> Any:
            endpoints.append(endpoint)
            return await send(method, endpoint, **options)

        desktop.client._request = counted  # type: ignore[method-assign]
        await desktop.perform_settled(shift)
        assert endpoints == ["/execute", "/screenshot"]
    finally:
        await desktop.destroy()
