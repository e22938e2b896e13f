"""``python -m mcp_servers.device``: serve one device over stdio.

Usage: ``python -m mcp_servers.device --snapshot FOLDER`` (a web snapshot folder: ``apps/``,
optional ``storage.json`` and ``screen.json``; a phone-sized headless Chromium shows it; ``--apps
FOLDER`` when its apps live elsewhere, as in a dataset's shared assets) or
``--serial SERIAL`` (a device or emulator on the local adb server), with ``--observation
screenshot|ui_elements|both`` and, to serve ``VIEW_TRAJECTORY_STEP`` too, ``--trajectory FILE``.
Bad input is reported on stderr naming the file, with exit code 2. The Chromium phone and its
processes end when the client hangs up.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from dataset.problems import DatasetError
from mcp_servers.device.server import DeviceContext, ObservationMode, device_server
from mcp_servers.serving import ToolServer, serve_stdio
from sandboxes.android.device import Device
from sandboxes.base import SandboxError

if TYPE_CHECKING:
    from mcp_servers.trajectory.loading import LoadedTrajectory

EXIT_BAD_INPUT = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mcp_servers.device",
        description="Serve a phone over stdio as an MCP server with AndroidWorld's action set.",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--snapshot", type=Path, help="a web snapshot folder (Chromium backend)")
    where.add_argument("--serial", help="a device or emulator serial on the local adb server")
    parser.add_argument(
        "--apps", type=Path, help="the snapshot's apps folder, when not the snapshot's apps/"
    )
    parser.add_argument(
        "--observation",
        choices=["screenshot", "ui_elements", "both"],
        default="both",
        help="what each answer shows of the screen (default: both)",
    )
    parser.add_argument("--trajectory", type=Path, help="also serve VIEW_TRAJECTORY_STEP on it")
    return parser


async def _serve_web(
    snapshot: Path,
    apps_folder: Path | None,
    observation: ObservationMode,
    recording: LoadedTrajectory | None,
) -> None:
    from sandboxes.android.chromium import PhoneBrowser, chromium_executable
    from sandboxes.android.sandbox import read_web_snapshot
    from settings import get_settings

    apps, state = read_web_snapshot(snapshot, apps_folder)
    browser = await PhoneBrowser.launch(chromium_executable(get_settings().chromium))
    try:
        device = await browser.new_device(apps, state)
        try:
            await serve_stdio(_server(device, observation, recording).server())
        finally:
            await device.close()
    finally:
        await browser.close()


async def _serve_adb(
    serial: str, observation: ObservationMode, recording: LoadedTrajectory | None
) -> None:
    from sandboxes.android.adb import AdbDevice

    device = AdbDevice(serial)
    await device.connect()
    await serve_stdio(_server(device, observation, recording).server())


def _server(
    device: Device, observation: ObservationMode, recording: LoadedTrajectory | None
) -> ToolServer[DeviceContext]:
    if recording is None:
        return device_server(device, observation=observation)
    return device_server(
        device,
        observation=observation,
        trajectory=recording.trajectory,
        task=recording.task,
        base_dir=recording.base_dir,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Start the device and serve it until the client hangs up; 2 on bad input."""
    arguments = _parser().parse_args(argv)
    recording = None
    if arguments.trajectory is not None:
        from mcp_servers.trajectory.loading import load_trajectory_file

        try:
            recording = load_trajectory_file(arguments.trajectory)
        except DatasetError as error:
            for problem in error.problems:
                print(problem, file=sys.stderr)
            return EXIT_BAD_INPUT
    try:
        if arguments.snapshot is not None:
            anyio.run(
                _serve_web, arguments.snapshot, arguments.apps, arguments.observation, recording
            )
        else:
            anyio.run(_serve_adb, arguments.serial, arguments.observation, recording)
    except SandboxError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


if __name__ == "__main__":
    sys.exit(main())
