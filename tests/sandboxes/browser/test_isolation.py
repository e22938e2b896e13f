"""A browser sandbox on real Chromium never reaches the network: every request is answered from
the archive, and a local port the pages and the judge try to reach sees no connection."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from sandboxes.browser.archive import load_archive
from sandboxes.browser.sandbox import BrowserProvider
from tests.sandboxes.browser.archived_site import (
    HOME,
    LYON,
    MISSING,
    PROBE,
    ConnectionCounter,
    write_site,
)


def test_the_witness_counts_a_real_connection() -> None:
    with ConnectionCounter() as counter:
        with socket.create_connection(("127.0.0.1", counter.port), timeout=2):
            pass
        for _ in range(50):
            if counter.connections:
                break
            import time

            time.sleep(0.02)
        assert counter.connections == 1


async def test_archived_pages_are_served_and_others_refused(tmp_path: Path) -> None:
    archive = load_archive(write_site(tmp_path / "site"))
    async with BrowserProvider() as provider:
        sandbox = await provider.open(archive, [HOME])
        page = sandbox.session.page
        assert await page.title() == "Encyclopedia"
        response = await page.goto(LYON)
        assert response is not None
        assert response.status == 200
        assert "522,250 inhabitants" in await page.inner_text("body")
        response = await page.goto(MISSING)
        assert response is not None
        assert response.status == 404
        assert "Not in the archive" in await page.inner_text("h1")
        assert sandbox.session.traffic.refused == [MISSING]
        assert sandbox.session.traffic.served == 2


async def test_nothing_a_page_does_reaches_a_local_port(tmp_path: Path) -> None:
    with ConnectionCounter() as counter:
        archive = load_archive(write_site(tmp_path / "site", port=counter.port))
        async with BrowserProvider() as provider:
            sandbox = await provider.open(archive, [PROBE])
            page = sandbox.session.page
            await page.wait_for_function(
                "document.getElementById('status').textContent === 'probed'"
            )
            # Straight to the port, as a judge would with browser_navigate.
            direct = f"http://127.0.0.1:{counter.port}/admin"
            response = await page.goto(direct)
            assert response is not None
            assert response.status == 404
            assert "Not in the archive" in await page.inner_text("h1")
            await asyncio.sleep(0.5)
            refused = sandbox.session.traffic.refused
        assert counter.connections == 0
    # The requests were made, and answered by the archive's refusal, not by the port.
    local = f"127.0.0.1:{counter.port}"
    for path in ("/pixel.png", "/script.js", "/frame", "/fetch", "/socket", "/admin"):
        assert any(url.endswith(local + path) for url in refused), (path, refused)


async def test_without_routing_the_browser_still_cannot_connect(tmp_path: Path) -> None:
    """The second wall: a context with no archive routing has only an unresolvable proxy."""
    with ConnectionCounter() as counter:
        async with BrowserProvider() as provider:
            process = await provider.browser()
            context = await process.new_context()
            page = await context.new_page()
            for url in (f"http://127.0.0.1:{counter.port}/", "http://localhost:9/"):
                with pytest.raises(Exception, match="ERR_"):
                    await page.goto(url, timeout=10_000)
            await context.close()
        await asyncio.sleep(0.3)
        assert counter.connections == 0


async def test_each_sandbox_has_its_own_context(tmp_path: Path) -> None:
    archive = load_archive(write_site(tmp_path / "site"))
    async with BrowserProvider() as provider:
        first = await provider.open(archive, [HOME])
        second = await provider.open(archive, [HOME])
        await first.session.context.add_cookies([{"name": "seen", "value": "1", "url": HOME}])
        assert await second.session.context.cookies() == []
        assert first.session.context is not second.session.context
        assert (await provider.browser()) is provider._process  # one browser for both
        await first.destroy()
        assert second.session.page.url == HOME
        assert first not in provider.sandboxes


async def test_a_snapshot_reopens_the_pages_left_open(tmp_path: Path) -> None:
    archive = load_archive(write_site(tmp_path / "site"))
    async with BrowserProvider() as provider:
        sandbox = await provider.open(archive, [HOME])
        await sandbox.session.page.goto(LYON)
        await sandbox.session.new_tab()
        await sandbox.session.page.goto(MISSING)
        snapshot = await sandbox.freeze()
        assert sandbox.session.closed
        assert snapshot.urls == [LYON, MISSING]
        clone = await snapshot.clone(writable=False)
        view = await snapshot.clone(writable=True)
        assert [page.url for page in clone.session.tabs] == [LYON, MISSING]
        assert clone.session.current == 1
        assert clone.read_only
        assert not view.read_only
        assert clone.session.context is not view.session.context
        with pytest.raises(Exception, match="read-only view cannot be frozen"):
            await clone.freeze()
    assert clone.session.closed
    assert view.session.closed


async def test_a_spare_context_is_ready_for_the_next_sandbox(tmp_path: Path) -> None:
    archive = load_archive(write_site(tmp_path / "site"))
    other = load_archive(write_site(tmp_path / "other"))
    async with BrowserProvider() as provider:
        first = await provider.open(archive, [HOME])
        assert provider._spare is not None
        spare_archive, task = provider._spare
        assert spare_archive is archive
        spare = await task
        await first.session.context.add_cookies([{"name": "seen", "value": "1", "url": HOME}])
        second = await provider.open(archive)
        assert second.session is spare  # the spare was handed out ...
        assert await second.session.context.cookies() == []  # ... and shares nothing
        assert second.session.page.url == "about:blank"
        _, next_task = provider._spare
        next_spare = await next_task
        third = await provider.open(other, [HOME])
        assert third.session is not next_spare
        assert next_spare.closed  # a spare for another archive is dropped
        assert third.session.archive is other
        _, last_task = provider._spare
        last_spare = await last_task
    assert last_spare.closed
    assert provider._spare is None


async def test_archived_pages_cannot_reach_host_files(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    site = write_site(tmp_path / "site")
    hostile = (
        f"<title>Hostile</title><a id='link' href='file://{secret}'>open</a>"
        f"<iframe src='file://{secret}'></iframe>"
        f"<p id='out'>waiting</p><script>fetch('file://{secret}').then(r => r.text())"
        ".then(t => {document.getElementById('out').textContent = t})"
        ".catch(() => {document.getElementById('out').textContent = 'blocked'})</script>"
    )
    (site / "files" / "hostile.html").write_text(hostile)
    import json

    index = json.loads((site / "pages.json").read_text())
    index["pages"].append({"url": "https://evil.example/", "file": "files/hostile.html"})
    (site / "pages.json").write_text(json.dumps(index))
    archive = load_archive(site)
    async with BrowserProvider() as provider:
        sandbox = await provider.open(archive, ["https://evil.example/"])
        page = sandbox.session.page
        await page.wait_for_function("document.getElementById('out').textContent !== 'waiting'")
        assert await page.inner_text("#out") == "blocked"
        await page.click("#link")
        await asyncio.sleep(0.5)
        assert page.url == "https://evil.example/"
        # The blocked frame has no document to read (its content() never answers).
        assert "TOP-SECRET-CONTENT" not in await page.content()
        assert "TOP-SECRET-CONTENT" not in await page.aria_snapshot(mode="ai", timeout=10_000)
