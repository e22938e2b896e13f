"""The adb backend: a real device or emulator reached by serial, for users who have one.

Owns ``AdbDevice`` (the ``Device`` surface over ``adbutils``: ``screencap``, robust ``uiautomator
dump``, ``input`` gestures and keys, app launch) and ``EmulatorConsole`` (emulator snapshots:
``adb emu avd snapshot save/load/delete/list``, which need the ``adb`` program, then a wait for
``sys.boot_completed``). Every call is bounded by a timeout. Dumps are made robust the way
AndroidWorld's users learnt to: delete the old file first, dump, read it back, check that it is
a complete hierarchy, and retry a few times, since ``uiautomator dump`` can exit 0 after failing
and leave a stale or half-written file.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from sandboxes.android.actions import (
    ActionError,
    ClearText,
    DeviceOperation,
    LaunchApp,
    LongPress,
    PressKey,
    Swipe,
    Tap,
    TypeText,
    Wait,
    adb_input_text,
)
from sandboxes.android.device import Device
from sandboxes.android.hierarchy import HierarchyError, parse_hierarchy
from sandboxes.base import SandboxError

__all__ = [
    "DUMP_ATTEMPTS",
    "DUMP_PATH",
    "KNOWN_PACKAGES",
    "AdbDevice",
    "EmulatorConsole",
    "dump_robustly",
    "package_for",
]

DUMP_PATH = "/sdcard/agentjudge_window_dump.xml"
"""Where the device writes its UI dump (deleted before each dump)."""

DUMP_ATTEMPTS = 3
"""Dumps tried before giving up on a screen."""

ADB_PORT = 5037
"""The adb server's port on 127.0.0.1."""

COMMAND_TIMEOUT = 30.0
"""Seconds one adb shell command may take."""

BOOT_TIMEOUT = 180.0
"""Seconds a snapshot load may take until ``sys.boot_completed`` is 1."""

KEYCODES = {"home": 3, "back": 4, "enter": 66}
"""Android key codes of the keys actions press."""

KNOWN_PACKAGES: dict[str, str] = {
    "audio recorder": "com.dimowner.audiorecorder",
    "calendar": "com.simplemobiletools.calendar.pro",
    "camera": "com.android.camera2",
    "chrome": "com.android.chrome",
    "clock": "com.google.android.deskclock",
    "contacts": "com.google.android.contacts",
    "expense": "com.arduia.expense",
    "files": "com.google.android.documentsui",
    "markor": "net.gsantner.markor",
    "osmand": "net.osmand",
    "phone": "com.google.android.dialer",
    "recipe": "com.flauschcode.broccoli",
    "retro music": "code.name.monkey.retromusic",
    "settings": "com.android.settings",
    "simple gallery pro": "com.simplemobiletools.gallery.pro",
    "simple sms messenger": "com.simplemobiletools.smsmessenger",
    "tasks": "org.tasks",
    "vlc": "org.videolan.vlc",
}
"""App names AndroidWorld's agents use, and their packages (a dotted name is taken as a
package as it is)."""

T = TypeVar("T")


def package_for(name: str, extra: dict[str, str] | None = None) -> str:
    """The package ``open_app`` launches for ``name``: a dotted name as it is, else the name
    looked up (case-insensitively) in ``extra`` and ``KNOWN_PACKAGES``."""
    wanted = name.strip()
    if "." in wanted and " " not in wanted:
        return wanted
    table = {key.casefold(): value for key, value in {**KNOWN_PACKAGES, **(extra or {})}.items()}
    package = table.get(wanted.casefold())
    if package is None:
        raise ActionError(f"no known package for app {name!r}; name the package itself")
    return package


async def dump_robustly(
    shell: Callable[[str], Awaitable[str]],
    *,
    attempts: int = DUMP_ATTEMPTS,
    pause: float = 0.5,
) -> str:
    """A checked ``uiautomator dump`` through ``shell`` (runs one command, returns its output).

    Each attempt removes the old dump, dumps, reads the file back and parses it; a missing,
    empty, cut-short or node-less file is retried after ``pause`` seconds. Raises
    ``SandboxError`` with every attempt's problem when none succeeds.
    """
    problems: list[str] = []
    for attempt in range(1, attempts + 1):
        await shell(f"rm -f {DUMP_PATH}")
        said = await shell(f"uiautomator dump {DUMP_PATH}")
        text = await shell(f"cat {DUMP_PATH} 2>/dev/null")
        try:
            parse_hierarchy(text)
        except HierarchyError as error:
            problems.append(f"attempt {attempt}: {error} (uiautomator said: {said.strip()!r})")
            await asyncio.sleep(pause)
            continue
        return text
    raise SandboxError("uiautomator dump failed: " + "; ".join(problems))


class AdbDevice(Device):
    """A device or emulator by serial, through the adb server on 127.0.0.1."""

    def __init__(self, serial: str, *, packages: dict[str, str] | None = None) -> None:
        self.serial = serial
        self.packages = packages or {}
        self._device: Any = None
        self._size: tuple[int, int] | None = None

    async def connect(self) -> None:
        """Find the device on the local adb server; ``SandboxError`` when no server listens on
        127.0.0.1:5037 (the runtime does not start one: it would outlive the run) or the
        device is not attached."""
        import adbutils

        try:
            _, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", ADB_PORT), COMMAND_TIMEOUT
            )
        except (OSError, TimeoutError):
            raise SandboxError(
                f"no adb server on 127.0.0.1:{ADB_PORT}: start it with `adb start-server` "
                f"(device {self.serial!r} is looked up there)"
            ) from None
        writer.close()

        def find() -> Any:
            client = adbutils.AdbClient(
                host="127.0.0.1", port=ADB_PORT, socket_timeout=COMMAND_TIMEOUT
            )
            serials = [item.serial for item in client.device_list()]
            if self.serial not in serials:
                attached = ", ".join(serials) or "none"
                raise SandboxError(f"no device {self.serial!r} on adb (attached: {attached})")
            return client.device(serial=self.serial)

        try:
            self._device = await asyncio.wait_for(asyncio.to_thread(find), COMMAND_TIMEOUT)
        except (OSError, adbutils.AdbError) as error:
            raise SandboxError(f"adb server on 127.0.0.1:{ADB_PORT} not usable: {error}") from None

    async def _call(self, work: Callable[[], T]) -> T:
        if self._device is None:
            await self.connect()
        return await asyncio.wait_for(asyncio.to_thread(work), COMMAND_TIMEOUT)

    async def shell(self, command: str) -> str:
        """One shell command's output (text)."""
        return str(await self._call(lambda: self._device.shell(command, timeout=COMMAND_TIMEOUT)))

    async def screen_size(self) -> tuple[int, int]:
        """The display's size in pixels (as ``wm size`` reports it, rotation applied)."""
        if self._size is None:
            size = await self._call(self._device.window_size)
            self._size = (int(size[0]), int(size[1]))
        return self._size

    async def screenshot(self) -> bytes:
        """``screencap -p``, checked to be a PNG (retried once)."""
        for _ in range(2):
            data = await self._call(
                lambda: self._device.shell("screencap -p", encoding=None, timeout=COMMAND_TIMEOUT)
            )
            if isinstance(data, bytes) and data.startswith(b"\x89PNG\r\n\x1a\n"):
                return data
        raise SandboxError(f"{self.serial}: screencap did not return a PNG")

    async def hierarchy(self) -> str:
        """A checked ``uiautomator dump`` (``dump_robustly``)."""
        return await dump_robustly(self.shell)

    async def run(self, operation: DeviceOperation) -> None:
        """One primitive through ``input``, ``monkey`` or a pause."""
        if isinstance(operation, Tap):
            await self.shell(f"input tap {operation.x} {operation.y}")
        elif isinstance(operation, LongPress):
            x, y, ms = operation.x, operation.y, operation.milliseconds
            await self.shell(f"input swipe {x} {y} {x} {y} {ms}")
        elif isinstance(operation, Swipe):
            o = operation
            await self.shell(f"input swipe {o.x1} {o.y1} {o.x2} {o.y2} {o.milliseconds}")
        elif isinstance(operation, TypeText):
            for chunk in adb_input_text(operation.text):
                await self.shell(f"input text {chunk}")
        elif isinstance(operation, ClearText):
            await self.shell("input keyevent KEYCODE_MOVE_END")
            await self.shell("input keyevent " + " ".join(["KEYCODE_DEL"] * 200))
        elif isinstance(operation, PressKey):
            await self.shell(f"input keyevent {KEYCODES[operation.key]}")
        elif isinstance(operation, LaunchApp):
            package = package_for(operation.name, self.packages)
            said = await self.shell(f"monkey -p {package} -c android.intent.category.LAUNCHER 1")
            if "No activities found" in said or "Error" in said:
                raise ActionError(f"could not open {operation.name!r} ({package}): {said.strip()}")
        elif isinstance(operation, Wait):
            await asyncio.sleep(operation.seconds)

    async def boot_completed(self) -> bool:
        """Whether ``sys.boot_completed`` is 1."""
        return (await self.shell("getprop sys.boot_completed")).strip() == "1"


class EmulatorConsole:
    """Emulator snapshots of one serial, through ``adb -s SERIAL emu avd snapshot ...``."""

    def __init__(self, serial: str, adb: str | None = None) -> None:
        self.serial = serial
        self.adb = adb or shutil.which("adb")

    async def command(self, *arguments: str, timeout: float = BOOT_TIMEOUT) -> str:
        """Run ``adb -s SERIAL emu ARGUMENTS``; ``SandboxError`` on failure or timeout."""
        if self.adb is None:
            raise SandboxError("emulator snapshots need the adb program: apt-get install adb")
        process = await asyncio.create_subprocess_exec(
            self.adb,
            "-s",
            self.serial,
            "emu",
            *arguments,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            output, _ = await asyncio.wait_for(process.communicate(), timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            problem = f"adb emu {' '.join(arguments)}: no answer in {timeout:.0f} s"
            raise SandboxError(problem) from None
        text = output.decode("utf-8", "replace")
        if process.returncode != 0 or "KO" in text.split():
            raise SandboxError(f"adb emu {' '.join(arguments)} failed: {text.strip()}")
        return text

    async def load(self, name: str, device: AdbDevice) -> None:
        """Load snapshot ``name`` and wait until the system says it has booted."""
        await self.command("avd", "snapshot", "load", name)
        deadline = asyncio.get_running_loop().time() + BOOT_TIMEOUT
        while not await device.boot_completed():
            if asyncio.get_running_loop().time() > deadline:
                raise SandboxError(f"{self.serial}: not booted {BOOT_TIMEOUT:.0f} s after loading")
            await asyncio.sleep(1.0)

    async def save(self, name: str) -> None:
        """Save the emulator's state as snapshot ``name``."""
        await self.command("avd", "snapshot", "save", name)

    async def delete(self, name: str) -> None:
        """Delete snapshot ``name``."""
        await self.command("avd", "snapshot", "delete", name)

    async def names(self) -> list[str]:
        """The emulator's snapshot names (the first column of ``avd snapshot list``)."""
        text = await self.command("avd", "snapshot", "list", timeout=COMMAND_TIMEOUT)
        names = []
        for line in text.splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0].isdigit():
                names.append(parts[1])
        return names
