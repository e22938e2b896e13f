"""Android sandboxes, snapshots and providers on both backends.

Owns the lifecycle of a device as a sandbox. A task starts from an ``app_snapshot``:

- ``chromium``: the snapshot is a folder in the task (``path``) holding ``apps/`` (the phone's web
  apps), and optionally ``storage.json`` (each app's data: app id -> key -> value) and
  ``screen.json`` (``{"url": ...}``, the page on screen; default the home screen). A sandbox is a
  browser context; freezing keeps the apps' data and the screen in memory; every clone is a new
  context built from them. A read-only view refuses writes to app data.
- ``adb``: the snapshot is an emulator snapshot (``snapshot_name``), loaded into the one device
  the provider drives. Freezing saves a new emulator snapshot named after the run; a clone loads
  it. One device holds one state, so one sandbox is live at a time: the next waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import ClassVar

from dataset.assets import state_file
from dataset.models import AppSnapshotState, Task
from sandboxes.android.adb import AdbDevice, EmulatorConsole
from sandboxes.android.chromium import PhoneBrowser, WebDevice, WebDeviceState
from sandboxes.android.device import Device
from sandboxes.base import Sandbox, SandboxError, SandboxProvider, Snapshot
from sandboxes.runs import current_run, run_id_of, run_is_alive

__all__ = [
    "AdbProvider",
    "AndroidSandbox",
    "ChromiumProvider",
    "collect_emulator_snapshots",
    "read_web_snapshot",
]


def _app_snapshot(task: Task) -> AppSnapshotState:
    state = task.initial_state
    if not isinstance(state, AppSnapshotState):
        raise SandboxError(f"tasks/{task.id}: an android sandbox starts from an app_snapshot")
    return state


def read_web_snapshot(folder: Path, apps: Path | None = None) -> tuple[Path, WebDeviceState]:
    """The apps folder and the starting state of a Chromium-backend snapshot folder; problems
    raise ``SandboxError`` naming the file and field. ``apps``: the snapshot's apps when they
    live elsewhere (shared by a dataset's tasks); else its own ``apps/``."""
    apps = apps if apps is not None else folder / "apps"
    if not apps.is_dir():
        raise SandboxError(f"{folder}: a web snapshot needs an apps/ folder (not found: {apps})")
    state = WebDeviceState()
    storage_file = folder / "storage.json"
    if storage_file.is_file():
        try:
            raw = json.loads(storage_file.read_text(encoding="utf-8"))
        except ValueError as error:
            raise SandboxError(f"{storage_file}: not JSON: {error}") from None
        if not isinstance(raw, dict) or not all(
            isinstance(values, dict) and all(isinstance(value, str) for value in values.values())
            for values in raw.values()
        ):
            raise SandboxError(f"{storage_file}: must map app ids to objects of strings")
        state.storage = {str(app): dict(values) for app, values in raw.items()}
    screen_file = folder / "screen.json"
    if screen_file.is_file():
        try:
            url = json.loads(screen_file.read_text(encoding="utf-8"))["url"]
        except (ValueError, KeyError, TypeError) as error:
            raise SandboxError(f"{screen_file}: url: {error}") from None
        state.url = str(url)
    return apps, state


class AndroidSandbox(Sandbox):
    """A live device: a phone-shaped browser context, or the device behind adb."""

    kind: ClassVar[str] = "android"

    def __init__(self, name: str, device: Device, *, read_only: bool) -> None:
        self.name = name
        self.device = device
        self.read_only = read_only

    async def freeze(self) -> Snapshot:
        raise NotImplementedError  # each backend's subclass freezes its own way

    async def destroy(self) -> None:
        raise NotImplementedError


# -- chromium --------------------------------------------------------------------------------


class WebSandbox(AndroidSandbox):
    """A phone in a browser context."""

    device: WebDevice

    def __init__(
        self, name: str, device: WebDevice, provider: ChromiumProvider, apps: Path
    ) -> None:
        super().__init__(name, device, read_only=device.read_only)
        self.apps = apps
        self._provider = provider
        self._destroyed = False

    async def freeze(self) -> Snapshot:
        """Keep the apps' data and the screen; the context is closed."""
        if self.read_only:
            raise SandboxError(f"{self.name}: a read-only view cannot be frozen")
        state = await self.device.state()
        await self.destroy()
        snapshot = WebSnapshot(current_run().new_name("phone"), state, self.apps, self._provider)
        self._provider.snapshots.add(snapshot)
        return snapshot

    async def destroy(self) -> None:
        if self._destroyed:
            return
        self._destroyed = True
        await self.device.close()
        self._provider.sandboxes.discard(self)


class WebSnapshot(Snapshot):
    """A frozen phone: app data and screen; each clone is a new context built from it.

    A phone has one screen, so read-only views are not shared: each judge that asks gets its
    own (a judge's taps must not move another judge's screen). The snapshot owns them and
    closes them when it is destroyed; writable clones belong to whoever asked for them.
    """

    kind: ClassVar[str] = "android"

    def __init__(
        self, name: str, state: WebDeviceState, apps: Path, provider: ChromiumProvider
    ) -> None:
        self.name = name
        self.state = state
        self.apps = apps
        self._provider = provider
        self.views: list[WebSandbox] = []

    async def clone(self, *, writable: bool = True) -> Sandbox:
        """A new phone with this state (a read-only one refuses writes to app data)."""
        phone = await self._provider.open(self.state, self.apps, read_only=not writable)
        if not writable:
            self.views.append(phone)
        return phone

    async def destroy(self) -> None:
        """Close the read-only views handed out and forget the state."""
        views, self.views = self.views, []
        for view in views:
            await view.destroy()
        self._provider.snapshots.discard(self)


class ChromiumProvider(SandboxProvider):
    """Phones in one headless Chromium, started on first use."""

    kind: ClassVar[str] = "android"
    backend: ClassVar[str] = "chromium"

    def __init__(self, executable: str) -> None:
        self.executable = executable
        self.sandboxes: set[WebSandbox] = set()
        self.snapshots: set[WebSnapshot] = set()
        self._browser: PhoneBrowser | None = None
        self._lock = asyncio.Lock()

    async def _phone_browser(self) -> PhoneBrowser:
        async with self._lock:
            if self._browser is None:
                self._browser = await PhoneBrowser.launch(self.executable)
            return self._browser

    async def create(self, task: Task, task_dir: Path) -> Sandbox:
        """A phone with the task's web snapshot (``path``: apps, data, screen)."""
        snapshot = _app_snapshot(task)
        if snapshot.path is None:
            raise SandboxError(
                f"tasks/{task.id}: emulator snapshot {snapshot.snapshot_name!r} needs the adb "
                "backend (a device or emulator named by ANDROID_SERIAL); the chromium backend "
                "starts from a web snapshot folder (initial_state.path)"
            )
        shared = state_file(task_dir, snapshot.apps) if snapshot.apps is not None else None
        apps, state = read_web_snapshot(state_file(task_dir, snapshot.path), shared)
        return await self.open(state, apps, read_only=False)

    async def open(self, state: WebDeviceState, apps: Path, *, read_only: bool) -> WebSandbox:
        """A phone showing ``state``, with the web apps of the folder ``apps``."""
        browser = await self._phone_browser()
        device = await browser.new_device(apps, state, read_only=read_only)
        sandbox = WebSandbox(current_run().new_name("phone"), device, self, apps)
        self.sandboxes.add(sandbox)
        return sandbox

    async def aclose(self) -> None:
        """Close every phone and the browser."""
        for sandbox in list(self.sandboxes):
            await sandbox.destroy()
        self.snapshots.clear()
        if self._browser is not None:
            await self._browser.close()
            self._browser = None


# -- adb -------------------------------------------------------------------------------------


DEVICE_WAIT = 900.0
"""Seconds a new adb sandbox waits for the device before giving up with a message."""


class AdbSandbox(AndroidSandbox):
    """The device behind adb, in the state of one snapshot; holds the device until destroyed."""

    device: AdbDevice

    def __init__(self, name: str, device: AdbDevice, provider: AdbProvider) -> None:
        super().__init__(name, device, read_only=False)
        self._provider = provider
        self._destroyed = False

    async def freeze(self) -> Snapshot:
        """Save the device's state as an emulator snapshot named after the run."""
        name = current_run().new_name("avd")
        await self._provider.console.save(name)
        snapshot = AdbSnapshot(name, self._provider)
        self._provider.snapshots.add(snapshot)
        await self.destroy()
        return snapshot

    async def destroy(self) -> None:
        """Hand the device to the next sandbox (its state stays until the next load)."""
        if self._destroyed:
            return
        self._destroyed = True
        self._provider.release_device()


class AdbSnapshot(Snapshot):
    """An emulator snapshot this run saved; clones load it."""

    kind: ClassVar[str] = "android"

    def __init__(self, name: str, provider: AdbProvider) -> None:
        self.name = name
        self._provider = provider

    async def clone(self, *, writable: bool = True) -> Sandbox:
        """The device with this snapshot loaded (writable or not, it is the one device)."""
        return await self._provider.load(self.name)

    async def destroy(self) -> None:
        if self in self._provider.snapshots:
            self._provider.snapshots.discard(self)
            with contextlib.suppress(SandboxError):
                await self._provider.console.delete(self.name)


class AdbProvider(SandboxProvider):
    """One device or emulator, by serial; one live sandbox at a time."""

    kind: ClassVar[str] = "android"
    backend: ClassVar[str] = "adb"

    def __init__(self, serial: str, *, packages: dict[str, str] | None = None) -> None:
        self.serial = serial
        self.device = AdbDevice(serial, packages=packages)
        self.console = EmulatorConsole(serial)
        self.snapshots: set[AdbSnapshot] = set()
        self._in_use = asyncio.Lock()

    async def create(self, task: Task, task_dir: Path) -> Sandbox:
        """The device with the task's emulator snapshot (``snapshot_name``) loaded."""
        snapshot = _app_snapshot(task)
        if snapshot.snapshot_name is None:
            raise SandboxError(
                f"tasks/{task.id}: the adb backend loads emulator snapshots "
                "(initial_state.snapshot_name); this task has a web snapshot only"
            )
        return await self.load(snapshot.snapshot_name)

    async def load(self, name: str) -> AdbSandbox:
        """Wait for the device (at most ``DEVICE_WAIT`` seconds), then load snapshot ``name``."""
        try:
            await asyncio.wait_for(self._in_use.acquire(), DEVICE_WAIT)
        except TimeoutError:
            raise SandboxError(
                f"{self.serial} is still held by another sandbox after {DEVICE_WAIT:.0f} s: the "
                "adb backend has one device, so one sandbox (a replay, a judge's view or "
                "clone) at a time; judge one trajectory at a time (--jobs 1)"
            ) from None
        try:
            await self.device.connect()
            await self.console.load(name, self.device)
        except BaseException:
            self._in_use.release()
            raise
        return AdbSandbox(current_run().new_name("device"), self.device, self)

    def release_device(self) -> None:
        """Let the next sandbox have the device."""
        if self._in_use.locked():
            self._in_use.release()

    async def aclose(self) -> None:
        """Delete the snapshots this run saved."""
        for snapshot in list(self.snapshots):
            await snapshot.destroy()


async def collect_emulator_snapshots(serial: str) -> list[str]:
    """Delete the emulator snapshots that dead runs saved on ``serial``."""
    console = EmulatorConsole(serial)
    removed = []
    for name in await console.names():
        run_id = run_id_of(name)
        if run_id is None or run_is_alive(run_id):
            continue
        await console.delete(name)
        removed.append(f"emulator snapshot {name} on {serial}")
    return removed


# -- both ------------------------------------------------------------------------------------


class AutoProvider(SandboxProvider):
    """Each task on the backend its snapshot needs: web snapshots (``path``) in Chromium,
    emulator snapshots (``snapshot_name`` only) on the adb device, when one is configured."""

    kind: ClassVar[str] = "android"
    backend: ClassVar[str] = "auto"

    def __init__(self, chromium: ChromiumProvider, adb: AdbProvider | None) -> None:
        self.chromium = chromium
        self.adb = adb

    async def create(self, task: Task, task_dir: Path) -> Sandbox:
        snapshot = _app_snapshot(task)
        if snapshot.path is None and self.adb is not None:
            return await self.adb.create(task, task_dir)
        return await self.chromium.create(task, task_dir)

    async def aclose(self) -> None:
        try:
            await self.chromium.aclose()
        finally:
            if self.adb is not None:
                await self.adb.aclose()
