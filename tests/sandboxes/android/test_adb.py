"""The adb backend: dump retries and app packages always; a live device when ANDROID_SERIAL
names one (these tests say so and are skipped when no device is attached)."""

from __future__ import annotations

import os

import pytest

from dataset.actions import AndroidAction
from sandboxes.android.actions import ActionError
from sandboxes.android.adb import DUMP_PATH, AdbDevice, dump_robustly, package_for
from sandboxes.android.device import perform_action
from sandboxes.android.hierarchy import parse_hierarchy
from sandboxes.base import SandboxError

GOOD = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    '<node text="Home" class="android.widget.TextView" bounds="[0,0][100,50]" /></hierarchy>'
)

SERIAL = os.environ.get("ANDROID_SERIAL")
needs_device = pytest.mark.skipif(
    not SERIAL, reason="no Android device attached: set ANDROID_SERIAL to a device's serial"
)


class ScriptedShell:
    """A device shell whose dump file goes through the given contents, one per dump."""

    def __init__(self, files: list[str]) -> None:
        self.files = files
        self.commands: list[str] = []
        self.file = "stale from the last screen"

    async def __call__(self, command: str) -> str:
        self.commands.append(command)
        if command.startswith("rm -f"):
            self.file = ""
            return ""
        if command.startswith("uiautomator dump"):
            self.file = self.files.pop(0)
            return f"UI hierchary dumped to: {DUMP_PATH}"
        if command.startswith("cat"):
            return self.file
        raise AssertionError(command)


async def test_a_dump_deletes_the_old_file_first_and_retries_bad_ones() -> None:
    shell = ScriptedShell(["", GOOD[:60], GOOD])
    assert await dump_robustly(shell, pause=0) == GOOD
    assert (
        shell.commands
        == [
            f"rm -f {DUMP_PATH}",
            f"uiautomator dump {DUMP_PATH}",
            f"cat {DUMP_PATH} 2>/dev/null",
        ]
        * 3
    )


async def test_a_stale_file_is_never_taken_for_a_dump() -> None:
    # uiautomator exits 0 but writes nothing: without the rm, the old file would be read back.
    shell = ScriptedShell(["", "", ""])
    with pytest.raises(SandboxError) as raised:
        await dump_robustly(shell, pause=0)
    message = str(raised.value)
    assert message.count("the UI dump is empty") == 3
    assert "attempt 3" in message
    assert "stale" not in message


def test_app_names_map_to_packages() -> None:
    assert package_for("Markor") == "net.gsantner.markor"
    assert package_for("simple sms messenger") == "com.simplemobiletools.smsmessenger"
    assert package_for("org.example.app") == "org.example.app"
    assert package_for("Notes", {"notes": "com.example.notes"}) == "com.example.notes"
    with pytest.raises(ActionError, match="no known package for app 'Pinball'"):
        package_for("Pinball")


async def test_a_missing_device_is_named() -> None:
    device = AdbDevice("emulator-65534")
    with pytest.raises(SandboxError, match=r"emulator-65534"):
        await device.connect()


@needs_device
async def test_live_device_screenshot_dump_and_home() -> None:
    assert SERIAL is not None
    device = AdbDevice(SERIAL)
    await device.connect()
    width, height = await device.screen_size()
    assert width > 0
    assert height > 0
    png = await device.screenshot()
    assert png.startswith(b"\x89PNG")
    await perform_action(device, AndroidAction(action_type="navigate_home"))
    nodes = parse_hierarchy(await device.hierarchy())
    assert nodes
    elements = await device.elements()
    if elements:
        await perform_action(device, AndroidAction(action_type="wait"))


async def test_a_second_sandbox_waits_for_the_one_device_then_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sandboxes.android.sandbox as android_sandboxes

    monkeypatch.setattr(android_sandboxes, "DEVICE_WAIT", 0.2)
    provider = android_sandboxes.AdbProvider("emulator-65534")
    await provider._in_use.acquire()  # a first sandbox holds the device
    with pytest.raises(SandboxError, match="still held by another sandbox after 0 s"):
        await provider.load("aj_abcdefghij_avd_1")
    provider.release_device()
    # Once free, the next load goes on to the device (here: no adb server, named as such).
    with pytest.raises(SandboxError, match="adb"):
        await provider.load("aj_abcdefghij_avd_1")
    assert not provider._in_use.locked()


@needs_device
async def test_live_device_through_the_device_server() -> None:
    from mcp import Client, types

    from mcp_servers.device.server import device_server

    assert SERIAL is not None
    device = AdbDevice(SERIAL)
    await device.connect()
    async with Client(device_server(device).server()) as client:
        home = await client.call_tool("navigate_home", {})
        screen = await client.call_tool("get_screen", {})
    assert not home.is_error
    assert any(isinstance(block, types.ImageContent) for block in screen.content)
    text = "".join(b.text for b in screen.content if isinstance(b, types.TextContent))
    assert "UI elements:" in text


@pytest.mark.skipif(
    not (SERIAL or "").startswith("emulator-"),
    reason="no Android emulator attached: set ANDROID_SERIAL to an emulator's serial",
)
async def test_live_emulator_snapshots_save_load_and_delete() -> None:
    from sandboxes.android.adb import EmulatorConsole
    from sandboxes.runs import current_run

    assert SERIAL is not None
    console = EmulatorConsole(SERIAL)
    device = AdbDevice(SERIAL)
    await device.connect()
    name = current_run().new_name("avdtest")
    await console.save(name)
    try:
        assert name in await console.names()
        await console.load(name, device)
        assert await device.boot_completed()
    finally:
        await console.delete(name)
    assert name not in await console.names()
