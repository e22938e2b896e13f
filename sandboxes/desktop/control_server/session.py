"""A desktop session: the processes of one desktop, started in order, stopped together.

Xvfb (its own display), a session D-Bus, the AT-SPI accessibility bus, a window manager
(openbox) and LibreOffice with the GTK3 plugin and accessibility on, with its own profile, the
session's GTK settings (no blinking cursor) and the task's document; then the control server.
Each process is waited for only as far as the next one needs: the display and the bus are
awaited, the window manager and LibreOffice start together. A window manager that exits while
the session runs is started again (it takes over the windows already shown). When the session ends
(SIGTERM, SIGINT, or the server failing) every process it started is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

PROFILE_SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" \
xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="ShowTipOfTheDay" \
oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" \
oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Setup/Office"><prop oor:name="ooSetupInstCompleted" \
oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Setup/Product"><prop oor:name="ooSetupLastVersion" \
oor:op="fuse"><value>{version}</value></prop></item>
<item oor:path="/org.openoffice.Office.Recovery/AutoSave"><prop oor:name="Enabled" \
oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Recovery/RecoveryInfo"><prop oor:name="Enabled" \
oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="CollectUsageInformation" \
oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Help"><prop oor:name="Tip" \
oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Help"><prop oor:name="ExtendedTip" \
oor:op="fuse"><value>false</value></prop></item>
</oor:items>
"""
"""A fresh profile's settings: no tip-of-the-day dialog, no first-start or what's-new bars, no
autosave or recovery prompts (a desktop is thrown away, never recovered), and no tooltips (one
shows only after the pointer has rested a while on a button, so whether a screenshot holds it
depends on how busy the machine was; the accessibility tree names the buttons anyway). Saving in
a foreign format still asks, as a stock LibreOffice does."""

WINDOW_MANAGER_SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<openbox_config xmlns="http://openbox.org/3.4/rc">
  <applications>
    <application class="*" type="normal">
      <decor>no</decor>
      <maximized>true</maximized>
    </application>
  </applications>
</openbox_config>
"""
"""openbox's settings: application windows maximised and without a title bar. LibreOffice (GTK3
on X) reports screen coordinates without its frame's offset, so a title bar would put every node
of the accessibility tree a bar's height above where it is drawn; with no frame they coincide.
Dialogs keep their frames and sizes."""

TOOLKIT_SETTINGS = """[Settings]
gtk-cursor-blink = false
"""
"""GTK's settings for the session (LibreOffice's GTK3 plugin takes its text cursor's blinking
from them): the text cursor does not blink. A blinking cursor redraws the screen every 0.6 s, so
a screen nobody touches never stays the same for long: every still-screen wait and every look
again grabbed it anew; a cursor that is always drawn also shows the same in every screenshot."""

ACCESSIBILITY_ENVIRONMENT = {
    "SAL_USE_VCLPLUGIN": "gtk3",
    "GTK_MODULES": "gail:atk-bridge",
    "NO_AT_BRIDGE": "0",
    "ACCESSIBILITY_ENABLED": "1",
    "GNOME_ACCESSIBILITY": "1",
    "QT_ACCESSIBILITY": "1",
    "SAL_NO_MOUSEGRABS": "1",
}
"""What makes LibreOffice (GTK3 plugin) expose itself on the AT-SPI bus."""


def prepare_profile(profile: Path, version: str = "7.4") -> None:
    """Write a fresh LibreOffice profile's settings unless the profile already has them."""
    settings = profile / "user" / "registrymodifications.xcu"
    if not settings.exists():
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(PROFILE_SETTINGS.format(version=version), encoding="utf-8")


def office_command(profile: Path) -> list[str]:
    """The command (before a file) that opens a document in the session's LibreOffice."""
    return ["soffice", "--norestore", "--nologo", f"-env:UserInstallation={profile.as_uri()}"]


WINDOW_MANAGER_RESTARTS = 5
"""Times a session starts its window manager again after it exited (each exit is logged)."""


class Session:
    """The processes of one desktop."""

    def __init__(self, display: str, size: tuple[int, int], profile: Path) -> None:
        self.display = display
        self.size = size
        self.profile = profile
        self.processes: list[subprocess.Popen[bytes]] = []
        self.group_leaders: set[int] = set()
        self.environment: dict[str, str] = dict(os.environ)
        self.environment["DISPLAY"] = display
        self.window_manager: subprocess.Popen[bytes] | None = None
        self._stopping = False
        self._starting = threading.Lock()

    def write_toolkit_settings(self) -> None:
        """Write ``TOOLKIT_SETTINGS`` in a configuration folder of the session's own, searched
        before the system's (``XDG_CONFIG_DIRS``): the user's own GTK settings, if any, still
        come last and win."""
        folder = self.profile.parent / ".session-config"
        settings = folder / "gtk-3.0" / "settings.ini"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(TOOLKIT_SETTINGS, encoding="utf-8")
        system = self.environment.get("XDG_CONFIG_DIRS") or "/etc/xdg"
        self.environment["XDG_CONFIG_DIRS"] = f"{folder}:{system}"

    def _start(self, command: Sequence[str], extra: Mapping[str, str] | None = None,
               **options: object) -> subprocess.Popen[bytes]:  # fmt: skip
        with self._starting:
            if self._stopping:
                raise RuntimeError("the session is stopping")
            process = subprocess.Popen(
                list(command),
                env={**self.environment, **(extra or {})},
                stdin=subprocess.DEVNULL,
                **options,  # type: ignore[call-overload]
            )
            self.processes.append(process)
        if options.get("start_new_session"):
            self.group_leaders.add(process.pid)
        return process  # type: ignore[no-any-return]

    def start_display(self) -> None:
        """Start Xvfb and wait until it accepts clients. Keys do not repeat (``-r``): a key
        held down longer than the repeat delay (660 ms) would type again, and a recorded press
        whose release comes late on a busy machine would move the cursor twice. The server
        never resets (``-noreset``): by default it resets whenever its last client leaves, and
        the AT-SPI bus launcher is a client for a moment only (it sets a root window property
        and disconnects). On a busy machine openbox, connecting at about that time, was seen to
        exit at its start, most likely caught by such a reset (see ``keep_window_manager``)."""
        read, write = os.pipe()
        width, height = self.size
        self._start(
            ["Xvfb", self.display, "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp",
             "-displayfd", str(write), "-dpi", "96", "+extension", "RANDR", "-r", "-noreset"],
            pass_fds=(write,), stdout=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            if not pipe.readline().strip():
                raise RuntimeError("Xvfb did not start")

    def start_bus(self) -> None:
        """Start the session D-Bus and the AT-SPI bus launcher on it."""
        read, write = os.pipe()
        self._start(
            ["dbus-daemon", "--session", "--nofork", "--nopidfile", f"--print-address={write}",
             "--address=unix:tmpdir=/tmp"],
            pass_fds=(write,), stdout=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            address = pipe.readline().decode().strip()
        if not address:
            raise RuntimeError("the session D-Bus did not start")
        self.environment["DBUS_SESSION_BUS_ADDRESS"] = address
        self.environment.update(ACCESSIBILITY_ENVIRONMENT)
        self._start(["/usr/libexec/at-spi-bus-launcher", "--launch-immediately"])

    def start_window_manager(self) -> None:
        """Start openbox (it manages windows for ``wmctrl`` and ``/windows``) with
        ``WINDOW_MANAGER_SETTINGS``."""
        settings = self.profile.parent / ".openbox-rc.xml"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(WINDOW_MANAGER_SETTINGS, encoding="utf-8")
        self.window_manager = self._start(
            ["openbox", "--sm-disable", "--config-file", str(settings)],
            stdout=subprocess.DEVNULL,
        )

    def keep_window_manager(self) -> threading.Thread:
        """Watch the window manager from a thread and start it again, up to
        ``WINDOW_MANAGER_RESTARTS`` times, when it exits before the session stops. Seen on busy
        machines: openbox gone moments after its start, LibreOffice's window then shown but
        unmanaged, so no window is listed and the desktop never counts as ready."""

        def watch() -> None:
            for _ in range(WINDOW_MANAGER_RESTARTS):
                process = self.window_manager
                if process is None:
                    return
                code = process.wait()
                if self._stopping:
                    return
                print(f"openbox exited ({code}); starting it again", file=sys.stderr, flush=True)
                try:
                    self.start_window_manager()
                except (OSError, RuntimeError):
                    return

        thread = threading.Thread(target=watch, name="window-manager", daemon=True)
        thread.start()
        return thread

    def start_office(self, document: Path | None) -> None:
        """Start LibreOffice on ``document`` (or its start centre), with its own profile."""
        prepare_profile(self.profile)
        command = office_command(self.profile)
        self._start([*command, *([str(document)] if document else [])], start_new_session=True)

    def stop(self) -> None:
        """Kill every process the session started (their process groups too), newest first."""
        with self._starting:
            self._stopping = True
        for process in reversed(self.processes):
            if process.pid in self.group_leaders:  # its group outlives it (soffice.bin)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    process.kill()
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)


def run_session(
    *,
    display: str,
    size: tuple[int, int],
    profile: Path,
    document: Path | None,
    socket_path: str | None,
    host: str,
    port: int | None,
) -> int:
    """Start the desktop, serve the control protocol until told to stop, then stop the desktop."""
    from .http_api import ServerState, make_server
    from .screen import Screen

    session = Session(display, size, profile)

    def _stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _stop)
    started = time.monotonic()
    try:
        session.write_toolkit_settings()
        session.start_display()
        session.start_window_manager()
        session.keep_window_manager()
        session.start_bus()
        os.environ.update(session.environment)  # the server's commands run in the session
        session.start_office(document)
        state = ServerState(Screen(display), office_command(profile))
        server = make_server(state, host=host, port=port, socket_path=socket_path)
        print(f"desktop ready in {time.monotonic() - started:.2f} s", file=sys.stderr, flush=True)
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        return 0
    finally:
        session.stop()
    return 0
