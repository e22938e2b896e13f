"""The Chromium phone: screens, touch, app data, isolation from the network, read-only views,
snapshots and clones, and collection after its run is killed with SIGKILL. Real Chromium."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import struct
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import psutil
import pytest

from dataset.actions import AndroidAction
from dataset.store import load_dataset
from environments.leftovers import collect_all_leftovers
from sandboxes.android.chromium import (
    PhoneBrowser,
    WebDevice,
    WebDeviceState,
    app_origin,
    chromium_executable,
)
from sandboxes.android.device import perform_action
from sandboxes.android.hierarchy import UIElement, parse_hierarchy
from sandboxes.android.sandbox import AndroidSandbox, ChromiumProvider, read_web_snapshot
from sandboxes.base import Sandbox, SandboxError

REPO = Path(__file__).resolve().parents[3]
MOBILE = REPO / "datasets" / "mobile"
SNAPSHOT = MOBILE / "tasks" / "notes-pin-trip" / "device"
APPS = MOBILE / "assets" / "mobile-apps"
"""The suite's apps: one copy its tasks' snapshots share."""


@pytest.fixture
async def browser() -> AsyncIterator[PhoneBrowser]:
    phone_browser = await PhoneBrowser.launch(chromium_executable(None))
    try:
        yield phone_browser
    finally:
        await phone_browser.close()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def index_of(elements: Sequence[UIElement], text: str) -> int:
    return next(i for i, element in enumerate(elements) if element.text == text)


async def notes_state(device: WebDevice) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((await device.state()).storage["notes"]["state"])
    return state


def phone(sandbox: Sandbox) -> WebDevice:
    assert isinstance(sandbox, AndroidSandbox)
    assert isinstance(sandbox.device, WebDevice)
    return sandbox.device


async def test_the_home_screen_lists_the_apps_and_a_tap_opens_one(browser: PhoneBrowser) -> None:
    apps, state = read_web_snapshot(SNAPSHOT, APPS)
    device = await browser.new_device(apps, state)
    try:
        assert png_size(await device.screenshot()) == (720, 1480)
        assert await device.screen_size() == (720, 1480)
        elements = await device.elements()
        assert [e.text for e in elements] == ["Contacts", "Notes", "Settings", "Shop"]
        assert all(
            e.class_name == "android.widget.Button" and e.flag("clickable") for e in elements
        )
        await perform_action(device, AndroidAction(action_type="click", index=1))
        assert device.page.url.startswith(f"{app_origin('notes')}/#")  # the view in the fragment
        shown = [e.text for e in await device.elements()]
        assert shown[:2] == ["Notes", "New note"]
        assert {"Old ideas", "Trip packing list", "Meeting notes"} <= set(shown)
        nodes = parse_hierarchy(await device.hierarchy())
        assert nodes[0].class_name == "android.widget.FrameLayout"
        assert nodes[0].bounds.right == 720
        assert nodes[0].bounds.bottom == 1480
        assert any(n.resource_id == "com.agentjudge.notes:id/new-note" for n in nodes)
    finally:
        await device.close()


async def test_typing_and_saving_change_the_apps_own_data(browser: PhoneBrowser) -> None:
    apps, state = read_web_snapshot(SNAPSHOT, APPS)
    device = await browser.new_device(apps, state)
    try:
        await perform_action(device, AndroidAction(action_type="open_app", app_name="notes"))
        elements = await device.elements()
        await perform_action(
            device, AndroidAction(action_type="click", index=index_of(elements, "New note"))
        )
        elements = await device.elements()
        title = next(i for i, e in enumerate(elements) if e.resource_id.endswith(":id/title"))
        await perform_action(
            device, AndroidAction(action_type="input_text", index=title, text="Tea & cake")
        )
        elements = await device.elements()
        assert elements[title].text == "Tea & cake"
        await perform_action(
            device, AndroidAction(action_type="click", index=index_of(elements, "Save"))
        )
        notes = await notes_state(device)
        assert [n["title"] for n in notes["notes"]][-1] == "Tea & cake"
        # Back leaves the app: the home screen again (nothing earlier in this phone's history).
        await perform_action(device, AndroidAction(action_type="navigate_back"))
        await perform_action(device, AndroidAction(action_type="navigate_back"))
        assert device.page.url == f"{app_origin('home')}/"
    finally:
        await device.close()


async def test_scrolling_moves_the_page_the_way_the_finger_says(browser: PhoneBrowser) -> None:
    apps, state = read_web_snapshot(MOBILE / "tasks" / "shop-cart-honey-tray" / "device", APPS)
    device = await browser.new_device(
        apps, WebDeviceState(storage=state.storage, url=f"{app_origin('shop')}/")
    )
    try:
        before = [e.text for e in await device.elements()]
        assert "Tea towel" not in before
        await perform_action(device, AndroidAction(action_type="scroll", direction="down"))
        after_down = await device.page.evaluate("window.scrollY")
        bottom = await device.page.evaluate(
            "document.scrollingElement.scrollHeight - window.innerHeight"
        )
        # The finger travels 444 CSS pixels; the list is shorter than that past the screen, so
        # the page ends at its bottom.
        assert 0 < bottom < 444
        assert after_down == bottom
        assert "Tea towel" in [e.text for e in await device.elements()]
        await perform_action(device, AndroidAction(action_type="scroll", direction="up"))
        assert await device.page.evaluate("window.scrollY") < after_down
    finally:
        await device.close()


async def test_nothing_leaves_the_phone(browser: PhoneBrowser) -> None:
    apps, state = read_web_snapshot(SNAPSHOT, APPS)
    device = await browser.new_device(apps, state)
    try:
        outcome = await device.page.evaluate(
            """async () => {
                const tries = {};
                const urls = ["http://example.com/", "https://127.0.0.1:9/x", "file:///etc/passwd"];
                for (const url of urls) {
                    try { await fetch(url); tries[url] = "fetched"; }
                    catch (e) { tries[url] = "refused"; }
                }
                return tries;
            }"""
        )
        assert set(outcome.values()) == {"refused"}
        assert any(url.startswith("http://example.com") for url in device.blocked)
        assert any("127.0.0.1" in url for url in device.blocked)
        missing = await device.page.evaluate(
            "async () => (await fetch('http://notes.phone.invalid/../../../../etc/passwd')).status"
        )
        assert missing == 404
    finally:
        await device.close()


async def test_a_read_only_phone_refuses_to_change_app_data(browser: PhoneBrowser) -> None:
    apps, state = read_web_snapshot(SNAPSHOT, APPS)
    state.url = f"{app_origin('notes')}/"
    device = await browser.new_device(apps, state, read_only=True)
    try:
        before = await notes_state(device)
        refused = await device.page.evaluate(
            "() => { try { localStorage.setItem('state', '{}'); return 'written'; }"
            " catch (e) { return e.name + ': ' + e.message; } }"
        )
        assert refused == "SecurityError: this device is a read-only view"
        elements = await device.elements()
        await perform_action(
            device, AndroidAction(action_type="click", index=index_of(elements, "Old ideas"))
        )
        elements = await device.elements()
        await perform_action(
            device, AndroidAction(action_type="click", index=index_of(elements, "Delete"))
        )
        assert await notes_state(device) == before
    finally:
        await device.close()


async def test_frozen_phones_hand_out_private_clones() -> None:
    mobile = load_dataset(MOBILE)
    task = mobile.tasks["notes-pin-trip"]
    provider = ChromiumProvider(chromium_executable(None))
    async with provider:
        sandbox = await provider.create(task, mobile.task_dir(task.id))
        device = phone(sandbox)
        await perform_action(device, AndroidAction(action_type="open_app", app_name="Notes"))
        await device.page.evaluate("() => localStorage.setItem('marker', 'replayed')")
        snapshot = await sandbox.freeze()
        first = await snapshot.clone(writable=True)
        second = await snapshot.clone(writable=True)
        view = await snapshot.clone(writable=False)
        assert view.read_only
        assert not first.read_only
        for clone in (first, second, view):
            assert (await phone(clone).state()).storage["notes"]["marker"] == "replayed"
        await phone(first).page.evaluate("() => localStorage.setItem('marker', 'judge 1')")
        assert (await phone(second).state()).storage["notes"]["marker"] == "replayed"
        with pytest.raises(SandboxError, match="read-only view cannot be frozen"):
            await view.freeze()
        third = await snapshot.clone()
        assert (await phone(third).state()).storage["notes"]["marker"] == "replayed"
        # Each read-only view is its own phone, closed with the snapshot; writable clones stay
        # with whoever asked for them.
        other_view = await snapshot.clone(writable=False)
        assert phone(other_view) is not phone(view)
        await snapshot.destroy()
        assert view not in provider.sandboxes
        assert other_view not in provider.sandboxes
        assert third in provider.sandboxes
        assert provider._browser is not None
        pids = list(provider._browser._pids)
        assert pids
    # Closing the provider closed every phone and the browser.
    assert not provider.sandboxes
    await asyncio.sleep(0.5)
    alive = [
        pid
        for pid in pids
        if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    ]
    assert not alive


async def test_an_emulator_snapshot_needs_a_device() -> None:
    mini = load_dataset(REPO / "datasets" / "examples" / "mini")
    task = mini.tasks["android-markor-shopping-note"]
    provider = ChromiumProvider(chromium_executable(None))
    async with provider:
        with pytest.raises(SandboxError, match=r"markor_empty_notebook.*ANDROID_SERIAL"):
            await provider.create(task, mini.task_dir(task.id))


LAUNCH_AND_WAIT = """
import asyncio, json, sys
from sandboxes.android.chromium import PhoneBrowser, chromium_executable
from sandboxes.runs import current_run

async def main():
    browser = await PhoneBrowser.launch(chromium_executable(None))
    print(json.dumps({"pids": browser._pids, "folder": str(current_run().directory())}), flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


async def test_a_killed_runs_chromium_and_profile_are_collected() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", LAUNCH_AND_WAIT],
        cwd=REPO,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        started = json.loads(await asyncio.to_thread(process.stdout.readline))
        pids, folder = started["pids"], Path(started["folder"])
        assert pids
        assert all(psutil.pid_exists(pid) for pid in pids)
        assert any(folder.glob("*_phone_*/playwright_chromiumdev_profile-*"))  # in the run folder
        process.send_signal(signal.SIGKILL)
        process.wait()
        removed = await collect_all_leftovers()
        await asyncio.sleep(0.5)
        alive = [
            pid
            for pid in pids
            if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        ]
        assert not alive
        assert not folder.exists()
        assert any(f"directory {folder}" in line for line in removed)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
