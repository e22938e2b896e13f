"""Chromium as the browser kind and the phone run it, checked on the real processes: not root,
Chromium's own sandbox on (renderers under seccomp in a user namespace of their own, no
``--no-sandbox``), no network of its own, and a page's WebRTC sends no UDP datagram anywhere
(a STUN/TURN server on loopback receives nothing)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import psutil
import pytest

from sandboxes.android.chromium import PhoneBrowser, WebDeviceState, chromium_executable
from sandboxes.browser.archive import load_archive
from sandboxes.browser.sandbox import BrowserProvider
from tests.security.hostile_pages import (
    CALM,
    UdpWitness,
    webrtc_script,
    write_hostile_site,
    write_phone_app,
)

pytestmark = pytest.mark.slow


def _status(pid: int) -> dict[str, str]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        fields[name] = value.strip()
    return fields


def _chromium_tree(pids: list[int]) -> list[psutil.Process]:
    """Every Chromium process below the tracked ones (the box and its browser)."""
    found = []
    for pid in pids:
        for process in psutil.Process(pid).children(recursive=True):
            if "chromium" in " ".join(process.cmdline()) and "--type=" in " ".join(
                process.cmdline()
            ):
                found.append(process)
    return found


def _check_sandboxed(pids: list[int]) -> None:
    processes = _chromium_tree(pids)
    renderers = [p for p in processes if "--type=renderer" in p.cmdline()]
    assert renderers, [p.cmdline()[:2] for p in processes]
    own_net = os.readlink("/proc/self/ns/net")
    for process in processes:
        assert "--no-sandbox" not in process.cmdline()
        assert process.uids().real != 0, process.cmdline()
        assert process.uids().effective != 0, process.cmdline()
        assert os.readlink(f"/proc/{process.pid}/ns/net") != own_net  # a network of its own
    for renderer in renderers:
        status = _status(renderer.pid)
        assert status["Seccomp"] == "2", status  # a seccomp-bpf filter
        assert status["NoNewPrivs"] == "1"
        assert status["CapEff"] == "0000000000000000"
        # Chromium's namespace sandbox: a user namespace the browser process is not in.
        browser = renderer.parent()
        while browser is not None and "--type=" in " ".join(browser.cmdline()):
            browser = browser.parent()
        assert browser is not None
        assert os.readlink(f"/proc/{renderer.pid}/ns/user") != os.readlink(
            f"/proc/{browser.pid}/ns/user"
        )


@pytest.fixture
async def phone_browser() -> AsyncIterator[PhoneBrowser]:
    started = await PhoneBrowser.launch(chromium_executable(None))
    try:
        yield started
    finally:
        await started.close()


async def test_the_browser_kinds_chromium_is_unprivileged_and_sandboxed(tmp_path: Path) -> None:
    archive = load_archive(write_hostile_site(tmp_path / "site"))
    async with BrowserProvider(keep_spare=False) as provider:
        sandbox = await provider.open(archive, [CALM])
        assert await sandbox.session.page.title() == "Calm"
        _check_sandboxed((await provider.browser()).pids)


async def test_the_phones_chromium_is_unprivileged_and_sandboxed(
    tmp_path: Path, phone_browser: PhoneBrowser
) -> None:
    device = await phone_browser.new_device(write_phone_app(tmp_path / "apps"), WebDeviceState())
    try:
        await device.page.goto("http://probe.phone.invalid/")
        assert await device.page.inner_text("#title") == "Probe"
        _check_sandboxed(phone_browser._pids)
    finally:
        await device.close()


def test_the_witness_counts_a_real_datagram() -> None:
    import socket
    import time

    with UdpWitness() as witness:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            sender.sendto(b"stun?", ("127.0.0.1", witness.port))
        deadline = time.monotonic() + 2
        while not witness.datagrams and time.monotonic() < deadline:
            time.sleep(0.02)
        assert witness.datagrams == 1


async def test_a_phone_page_sends_no_udp(tmp_path: Path, phone_browser: PhoneBrowser) -> None:
    device = await phone_browser.new_device(write_phone_app(tmp_path / "apps"), WebDeviceState())
    try:
        await device.page.goto("http://probe.phone.invalid/")
        with UdpWitness() as witness:
            sdp = await device.page.evaluate(webrtc_script(witness.port))
            await asyncio.sleep(1)
        assert witness.datagrams == 0
        assert "typ srflx" not in sdp  # no answer from the STUN server
        assert "typ relay" not in sdp  # nor from the TURN server
    finally:
        await device.close()


async def test_a_browser_page_sends_no_udp(tmp_path: Path) -> None:
    archive = load_archive(write_hostile_site(tmp_path / "site"))
    async with BrowserProvider(keep_spare=False) as provider:
        sandbox = await provider.open(archive, [CALM])
        with UdpWitness() as witness:
            sdp = await sandbox.session.page.evaluate(webrtc_script(witness.port))
            await asyncio.sleep(1)
        assert witness.datagrams == 0
        assert "typ srflx" not in sdp  # no answer from the STUN server
        assert "typ relay" not in sdp  # nor from the TURN server
