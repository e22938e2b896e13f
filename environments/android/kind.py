"""The android kind's record: backends, replay of AndroidWorld actions, judge servers, leftovers.

Tasks of ``mobile/android`` start from an ``app_snapshot``. Three backends:

- ``auto`` (the default): web snapshots (``initial_state.path``) in the phone-sized Chromium,
  emulator snapshots (``snapshot_name``) on the device named by ``ANDROID_SERIAL``;
- ``chromium``: every task in Chromium (web snapshots only);
- ``adb``: every task on the ``ANDROID_SERIAL`` device (emulator snapshots only).

Without ``ANDROID_SERIAL`` an emulator-snapshot task is not served (it counts as not
replayable, as before this kind existed). Recorded AndroidWorld actions replay as gestures; a
step whose recording holds the UI element list is compared with the list after replaying it
(``AndroidKind.replay_step``).
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, ClassVar

from dataset.actions import AndroidAction
from dataset.models import AppSnapshotState, Task
from environments.diffs import short_diff
from environments.kind import (
    CommandLineBackend,
    EnvironmentKind,
    JudgeServerOptions,
    LeftoverSource,
    ProviderFactory,
    VerifierInputs,
    WorkerResources,
)
from environments.steps import RecordedStep, StepFidelity
from mcp_servers.results import ToolArgumentError, ToolResult, ToolSpec, call_tool
from sandboxes.base import Sandbox, SandboxError, SandboxProvider
from sandboxes.runs import current_run

if TYPE_CHECKING:
    from environments.backends import BackendChoice
    from mcp_servers.serving import ToolServer
    from sandboxes.android.sandbox import AdbProvider, AndroidSandbox, ChromiumProvider

SERIAL_VARIABLE = "ANDROID_SERIAL"
"""adb's own variable naming the device to use; the adb backend reads it."""

STATE_FILE_VARIABLE = "ANDROID_STATE_FILE"
"""What a task's ``verify.py`` gets on the Chromium backend: a JSON file of the phone's state
(``{"storage": {app: {key: value}}, "url": ...}``)."""


def as_android_sandbox(sandbox: Sandbox) -> AndroidSandbox:
    """``sandbox`` as an android sandbox; another kind's raises ``TypeError``."""
    from sandboxes.android.sandbox import AndroidSandbox

    if not isinstance(sandbox, AndroidSandbox):
        raise TypeError(f"{sandbox.name} is a {sandbox.kind} sandbox, not an android one")
    return sandbox


def configured_serial() -> str | None:
    """The device serial in ``ANDROID_SERIAL``, or None."""
    return os.environ.get(SERIAL_VARIABLE) or None


def _chromium_provider() -> ChromiumProvider:
    from sandboxes.android.chromium import chromium_executable
    from sandboxes.android.sandbox import ChromiumProvider
    from settings import get_settings

    return ChromiumProvider(chromium_executable(get_settings().chromium))


def _adb_provider() -> AdbProvider:
    from sandboxes.android.sandbox import AdbProvider

    serial = configured_serial()
    if serial is None:
        raise SandboxError(
            f"the android kind's adb backend needs a device: set {SERIAL_VARIABLE} to its serial"
        )
    return AdbProvider(serial)


async def _auto(choice: BackendChoice) -> SandboxProvider:
    from sandboxes.android.sandbox import AutoProvider

    return AutoProvider(_chromium_provider(), _adb_provider() if configured_serial() else None)


async def _chromium(choice: BackendChoice) -> SandboxProvider:
    return _chromium_provider()


async def _adb(choice: BackendChoice) -> SandboxProvider:
    return _adb_provider()


async def _phone_browsers() -> list[str]:
    from sandboxes.chromium import collect_chromium_leftovers

    return await collect_chromium_leftovers()


async def _directories() -> list[str]:
    from sandboxes.filesystem.local import collect_local_leftovers

    return await collect_local_leftovers()


async def _emulator_snapshots() -> list[str]:
    from sandboxes.android.sandbox import collect_emulator_snapshots

    serial = configured_serial()
    return await collect_emulator_snapshots(serial) if serial else []


class AndroidKind(EnvironmentKind):
    """A phone, reached through AndroidWorld's action set."""

    name: ClassVar[str] = "android"
    serve_name: ClassVar[str] = "android"
    tasks: ClassVar[frozenset[tuple[str, str]]] = frozenset({("mobile", "android")})
    worker_resources: ClassVar[WorkerResources] = WorkerResources(cpus=1.0, memory_mb=3072)
    """Heavier than the default: an emulator or device relay per state."""
    initial_states: ClassVar[frozenset[str]] = frozenset({"app_snapshot"})
    backends: ClassVar[Mapping[str, ProviderFactory]] = {
        "auto": _auto,
        "chromium": _chromium,
        "adb": _adb,
    }

    def serves(self, task: Task) -> bool:
        """Mobile/android tasks with a web snapshot, and with an emulator snapshot when a device
        is configured (``ANDROID_SERIAL``)."""
        if not super().serves(task):
            return False
        state = task.initial_state
        if not isinstance(state, AppSnapshotState):
            return True  # fails replay with a message naming the state
        return state.path is not None or configured_serial() is not None

    def backend_for(self, backend: CommandLineBackend) -> str:
        """``auto`` whatever ``--backend`` says: a phone is neither a host folder nor a
        container."""
        return "auto"

    def tool_spec(self, name: str) -> ToolSpec[Any] | None:
        """The device server's tool ``name`` (recorded as a tool call)."""
        from mcp_servers.device.server import ACTION_TOOLS

        return ACTION_TOOLS.get(name)

    async def execute_call(
        self, sandbox: Sandbox, name: str, arguments: dict[str, Any]
    ) -> ToolResult:
        """The device server's answer to the call, listing the UI elements afterwards."""
        from mcp_servers.device.server import ACTION_TOOLS, DeviceContext

        context = DeviceContext(
            device=as_android_sandbox(sandbox).device, observation="ui_elements"
        )
        return await call_tool(ACTION_TOOLS, context, name, arguments)

    async def replay_step(self, sandbox: Sandbox, recorded: RecordedStep) -> StepFidelity:
        """AndroidWorld actions replay as gestures, and the screen's element list afterwards
        is compared with the step's recorded one (its accessibility tree) when there is one;
        recorded tool calls of the device server get the default."""
        action = recorded.step.action
        if not isinstance(action, AndroidAction):
            return await super().replay_step(sandbox, recorded)
        step, position = recorded.step, recorded.position
        name = action.action_type
        try:
            result = await self._perform(sandbox, action)
        except ToolArgumentError as error:
            return StepFidelity(
                index=step.index, tool=name, status="failed", message=f"{position}: {error}"
            )
        except Exception as error:  # a broken sandbox must fail this step, not the whole run
            return StepFidelity(
                index=step.index,
                tool=name,
                status="failed",
                message=f"{position}: the action could not run: {type(error).__name__}: {error}",
            )
        writes = bool(result.wrote)
        if result.is_error:
            return StepFidelity(
                index=step.index,
                tool=name,
                status="failed",
                writes=writes,
                replayed_error=True,
                message=f"{position}: {result.text}",
            )
        shown = step.observation.accessibility_tree if step.observation else None
        outcome = StepFidelity(index=step.index, tool=name, status="unrecorded", writes=writes)
        if shown is None:
            return outcome
        if shown.strip() == result.text.strip():
            outcome.status = "match"
        else:
            outcome.status = "diverged"
            outcome.diff = short_diff(shown.strip(), result.text.strip())
            outcome.effect = "state" if writes else "presentation"
            outcome.effect_reason = "the screen differs after an action that can change state"
            if not writes:
                outcome.effect_reason = "the screen differs after an action that changes nothing"
        return outcome

    async def _perform(self, sandbox: Sandbox, action: AndroidAction) -> ToolResult:
        """An AndroidWorld action as gestures; the result's text is the UI element list after
        it, and ``wrote`` whether the action could change state."""
        from mcp_servers.device.server import ACTION_TOOLS, DeviceContext

        if action.action_type == "unknown":
            raise ToolArgumentError("an unknown action cannot be replayed", tool="unknown")
        fields = action.model_dump(exclude={"type", "action_type", "extra"}, exclude_none=True)
        context = DeviceContext(
            device=as_android_sandbox(sandbox).device, observation="ui_elements"
        )
        result = await call_tool(ACTION_TOOLS, context, action.action_type, fields)
        if result.is_error:
            return result
        text = result.text.split("UI elements:\n", 1)[-1]
        return ToolResult(text=text, wrote=action.action_type not in ("status", "answer", "wait"))

    @asynccontextmanager
    async def verifier_inputs(self, sandbox: Sandbox) -> AsyncIterator[VerifierInputs]:
        """Chromium phones: ``ANDROID_STATE_FILE``, a JSON export of every app's data and the
        screen (removed afterwards). Devices: ``ANDROID_SERIAL`` only (a boxed verifier has no
        network, so it cannot reach adb: such tasks are checked outside the box)."""
        from sandboxes.android.chromium import WebDevice

        device = as_android_sandbox(sandbox).device
        if not isinstance(device, WebDevice):
            yield VerifierInputs(environment={SERIAL_VARIABLE: configured_serial() or ""})
            return
        state = await device.state()
        export = current_run().directory() / f"{current_run().new_name('phonestate')}.json"
        export.write_text(json.dumps({"storage": state.storage, "url": state.url}))
        try:
            yield VerifierInputs(environment={STATE_FILE_VARIABLE: str(export)}, read_only=[export])
        finally:
            export.unlink(missing_ok=True)

    @asynccontextmanager
    async def judge_servers(
        self, sandbox: Sandbox, options: JudgeServerOptions
    ) -> AsyncIterator[list[ToolServer[Any]]]:
        """The device server on the phone (a read-only Chromium view refuses writes to app
        data; navigating it is harmless and private)."""
        from mcp_servers.device.server import device_server

        yield [device_server(as_android_sandbox(sandbox).device)]

    def agent_server(self, sandbox: Sandbox) -> ToolServer[Any] | None:
        """The device server, as scripted agents act through it."""
        from mcp_servers.device.server import device_server

        return device_server(as_android_sandbox(sandbox).device)

    def leftover_collectors(self, endpoint: str | None) -> Sequence[LeftoverSource]:
        """Emulator snapshots of dead runs (when a device is configured), Chromium's
        single-instance folders and memory cgroups, then the run folders that hold Chromium
        profiles (with the filesystem kind's). Chromium and its driver are
        helper processes, killed by the shared process collector first."""
        return (
            LeftoverSource("emulator snapshots", _emulator_snapshots, order=20),
            LeftoverSource("phone browsers", _phone_browsers, order=800),
            LeftoverSource("directories", _directories, order=900),
        )


KIND = AndroidKind()
"""The registered record (``environments.registry`` names it by module path)."""
