"""One headless Chromium per provider, driven by Playwright, that cannot reach the network.

Owns starting and stopping the browser process (Debian's ``chromium`` through Playwright's
``executable_path``; Playwright's own browser downloads are never used), the launch flags that
keep it off the network, and its bookkeeping as a run's helper processes: the Playwright driver
and the browser are noted with ``sandboxes.runs.track_process`` (the browser leads its own
process group, so a later ``gc`` kills it with all its renderers after a ``kill -9``); the
browser's profile and home live in the run's scratch folder, which the directory collector
removes, and its temporary folder (short, for its socket) is ``/tmp/aj_<run>_browser_<n>_tmp``,
which ``sandboxes.browser.leftovers`` removes.

Network walls, from the inside out: every HTTP(S) request of every context is answered by the
context's route (``sandboxes.browser.session``) and never continues to the network; WebSockets
are routed and closed; service workers are blocked; and should anything slip past routing, the
browser's only way out is a proxy whose host name cannot resolve (every host name maps to
"not found", loopback included), so no connection leaves the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

from sandboxes.base import SandboxError
from sandboxes.runs import current_run, track_process, untrack_process
from settings import get_settings

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Playwright

INSTALL_HINT = (
    "Chromium not found: install it with `apt-get install chromium` or point "
    "$AGENTJUDGE_CHROMIUM at a Chromium binary"
)

SOCKET_ROOT = Path("/tmp")
"""Where browsers get their temporary folders (``aj_<run>_browser_<n>_tmp``): a fixed, short
path, because Chromium's single-instance socket lives there and socket paths are short."""

BLACKHOLE_PROXY = "http://no-network.invalid:9"
"""The proxy every request that escaped routing would have to use; its name never resolves."""

ISOLATION_ARGS = (
    f"--proxy-server={BLACKHOLE_PROXY}",
    "--proxy-bypass-list=<-loopback>",  # loopback goes through the dead proxy too
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-domain-reliability",
    "--disable-sync",
    "--no-pings",
    "--dns-prefetch-disable",
    "--disable-features=NetworkPrediction,OptimizationHints,MediaRouter,DialMediaRouteProvider",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--disable-extensions",
    "--mute-audio",
    # Software compositing without the emulated GPU: about a tenth less CPU per page here.
    "--disable-gpu",
)
"""Launch flags that keep the browser off the network (see the module docstring), and one that
saves CPU."""

RECORDING_ARGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--mute-audio",
)
"""Launch flags of a recording browser: it reaches the sites it records, nothing more chatty."""

_start_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)
"""Serialise starts, one lock per event loop: the driver is recognised as the child process
that appeared during a start."""


def _start_lock() -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    if loop not in _start_locks:
        _start_locks[loop] = asyncio.Lock()
    return _start_locks[loop]


def chromium_path() -> str:
    """The browser binary: ``$AGENTJUDGE_CHROMIUM``, else ``/usr/bin/chromium``, else
    ``chromium`` on the PATH; a missing one raises ``SandboxError`` saying how to get it."""
    configured = get_settings().chromium
    if configured is not None:
        if not configured.is_file():
            raise SandboxError(f"$AGENTJUDGE_CHROMIUM: {configured} is not a file")
        return str(configured)
    if Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium"
    found = shutil.which("chromium")
    if found is None:
        raise SandboxError(INSTALL_HINT)
    return found


def _children() -> set[int]:
    with contextlib.suppress(psutil.Error):
        return {child.pid for child in psutil.Process().children()}
    return set()


def _browser_pids(driver: int) -> list[int]:
    """The browser processes the driver started (direct children of the driver)."""
    try:
        return [child.pid for child in psutil.Process(driver).children()]
    except psutil.Error:
        return []


class ChromiumProcess:
    """A running headless Chromium with its Playwright driver; ``new_context`` hands out
    isolated browser contexts. Start with ``start``, end with ``close``."""

    def __init__(
        self,
        playwright: Playwright,
        browser: Browser,
        folder: Path,
        socket_folder: Path,
        pids: list[int],
    ) -> None:
        self.playwright = playwright
        self.browser = browser
        self.folder = folder
        """The run-scratch folder holding the browser's profile and home."""
        self.socket_folder = socket_folder
        """The browser's temporary folder under /tmp (its single-instance socket lives there)."""
        self.pids = pids
        """The driver's and the browser's process ids (tracked as the run's helpers)."""
        self._closed = False

    @classmethod
    async def start(cls, *, offline: bool = True) -> ChromiumProcess:
        """Start the driver and the browser; its profile and home go to a fresh folder of the
        run's scratch space. ``offline=False`` leaves out the network walls (``ISOLATION_ARGS``):
        only for recording pages from the live web (``sandboxes.browser.recording``)."""
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import async_playwright

        executable = chromium_path()
        run = current_run()
        folder = run.directory() / run.new_name("browser")
        folder.mkdir(mode=0o700)
        # Chromium's single-instance socket needs a short path: its temporary folder is a
        # fresh one under /tmp, named after the run so that a later gc finds it.
        socket_folder = SOCKET_ROOT / f"{folder.name}_tmp"
        socket_folder.mkdir(mode=0o700)
        async with _start_lock():
            before = _children()
            # The driver takes its temporary folder (where it makes the browser's profile)
            # from the environment it starts with; set it only for that moment.
            previous = os.environ.get("TMPDIR")
            os.environ["TMPDIR"] = str(folder)
            try:
                playwright = await async_playwright().start()
            finally:
                if previous is None:
                    os.environ.pop("TMPDIR", None)
                else:
                    os.environ["TMPDIR"] = previous
            drivers = sorted(_children() - before)
        for pid in drivers:
            track_process(pid)
        try:
            browser = await playwright.chromium.launch(
                executable_path=executable,
                headless=True,
                args=list(ISOLATION_ARGS if offline else RECORDING_ARGS),
                env={
                    **_browser_environment(),
                    "HOME": str(folder),
                    "TMPDIR": str(socket_folder),
                },
            )
        except PlaywrightError as error:
            await playwright.stop()
            for pid in drivers:
                untrack_process(pid)
            shutil.rmtree(folder, ignore_errors=True)
            shutil.rmtree(socket_folder, ignore_errors=True)
            raise SandboxError(f"Chromium ({executable}) did not start: {error}") from None
        browsers = [pid for driver in drivers for pid in _browser_pids(driver)]
        for pid in browsers:
            track_process(pid)
        return cls(playwright, browser, folder, socket_folder, [*drivers, *browsers])

    async def new_context(self) -> BrowserContext:
        """A fresh, empty browser context: no cookies, storage or cache shared with others;
        service workers blocked, downloads refused."""
        return await self.browser.new_context(
            service_workers="block",
            accept_downloads=False,
            viewport={"width": 1280, "height": 800},
            java_script_enabled=True,
        )

    @property
    def closed(self) -> bool:
        """Whether ``close`` has run (or the browser died)."""
        return self._closed or not self.browser.is_connected()

    async def close(self) -> None:
        """Close the browser and the driver, forget the processes, remove the scratch folder.
        Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.browser.close(), 10)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.playwright.stop(), 10)
        for pid in self.pids:
            with contextlib.suppress(psutil.Error):
                process = psutil.Process(pid)
                if process.is_running():
                    process.kill()
            untrack_process(pid)
        await asyncio.to_thread(shutil.rmtree, self.folder, True)
        await asyncio.to_thread(shutil.rmtree, self.socket_folder, True)


def _browser_environment() -> dict[str, str]:
    """The browser's environment: the caller's minus proxies and credentials it has no use for."""
    kept = ("PATH", "LANG", "LC_ALL", "TZ", "FONTCONFIG_PATH", "XDG_RUNTIME_DIR")
    return {name: os.environ[name] for name in kept if name in os.environ}
