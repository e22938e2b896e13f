"""Headless Chromium as the runtime runs it: unprivileged, its own sandbox on, boxed, offline.

Shared by the browser kind (``sandboxes.browser``) and the android kind's Chromium phone
(``sandboxes.android.chromium``), so both get the same walls from one place. Owns starting and
stopping the browser process (Debian's ``chromium`` through Playwright's ``executable_path``;
Playwright's own browser downloads are never used), the launch flags, the box it runs in, its
memory cap, and its bookkeeping as a run's helper processes: the Playwright driver and the box
are noted with ``sandboxes.runs.track_process`` (killing the box kills every browser process in
it); the browser's profile and home live in the run's scratch folder, which the directory
collector removes, its temporary folder (short, for its socket) is ``/tmp/aj_<run>_<tag>_<n>_tmp``
and its memory cgroup ``aj_<run>_<tag>_<n>``, which ``collect_chromium_leftovers`` removes.

**The box.** Playwright starts a small script (``chromium-box``, written per browser) instead of
Chromium: it moves itself into the browser's memory cgroup (``BROWSER_MEMORY_BYTES``), hands the
profile Playwright made to ``CHROMIUM_USER``, and runs Chromium under bubblewrap with its own
pid, IPC and UTS namespaces, seeing ``/usr`` and ``/etc`` read-only and writing only its profile,
home and temporary folders; as root it drops to ``CHROMIUM_USER`` with ``setpriv`` (no
capabilities, ``no_new_privs``). Chromium's own sandbox is on (no ``--no-sandbox``): renderers run
in their own user namespace under a seccomp filter. An offline browser's box also has a network
namespace of its own, holding only its own loopback: no packet, UDP or TCP, leaves it.

**Network walls**, from the inside out: the kind answers every HTTP(S) request by routing and
never lets one continue; anything that slips past routing has only a proxy whose host name cannot
resolve (every host name maps to "not found", loopback included); WebRTC may not use UDP that does
not go through that proxy; and the box has no network at all.

**Memory.** Each renderer's script heap is capped (``RENDERER_HEAP_MB``) and the whole browser is
in a memory cgroup: a page that allocates past either is killed, not the machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import shutil
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil

from sandboxes.base import SandboxError
from sandboxes.memory import CGROUP_ROOT, MemoryCap, own_memory_cgroup, remove_cgroup
from sandboxes.runs import (
    NAME_PREFIX,
    current_run,
    run_id_of,
    run_is_alive,
    track_process,
    untrack_process,
)
from settings import get_settings

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Playwright

INSTALL_HINT = (
    "Chromium not found: install it with `apt-get install chromium` or point "
    "$AGENTJUDGE_CHROMIUM at a Chromium binary"
)

BUBBLEWRAP_HINT = (
    "Chromium runs in a bubblewrap box, and bwrap is not installed: install it with "
    "`apt-get install bubblewrap`"
)

SOCKET_ROOT = Path("/tmp")
"""Where browsers get their temporary folders (``aj_<run>_<tag>_<n>_tmp``): a fixed, short
path, because Chromium's single-instance socket lives there and socket paths are short."""

TAGS = ("browser", "phone")
"""The name tags of browser resources: the browser kind's and the phone's."""

CHROMIUM_USER = 65532
"""The uid and gid Chromium runs as when the runtime is root: no account of its own, not
``nobody`` (which dataset code runs as), so neither can touch the other's processes or files."""

RENDERER_HEAP_MB = 512
"""The most script heap (V8's old space) one renderer may hold, in MiB."""

BROWSER_MEMORY_BYTES = 4 * 2**30
"""The memory cgroup cap of one browser with all its processes (renderers first to go): room for
eight judges' contexts on a page each (about 1.8 GiB measured) and the page cache."""

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
)
"""Launch flags that keep the browser off the network (see the module docstring)."""

SOFTWARE_COMPOSITING = "--disable-gpu"
"""Software compositing without the emulated GPU: about a tenth less CPU per page here (the
browser kind's choice; the phone keeps the rendering its recorded screens were taken with)."""

RECORDING_ARGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--mute-audio",
)
"""Launch flags of a recording browser: it reaches the sites it records, nothing more chatty."""

LIMIT_ARGS = (f"--js-flags=--max-old-space-size={RENDERER_HEAP_MB}",)
"""Launch flags of every browser that cap what one page can hold."""

BOX_SCRIPT = "chromium-box"
"""The file name of the script Playwright starts instead of Chromium."""

CGROUP_NOTE = "cgroup"
"""A file in the browser's folder naming its memory cgroup (for ``gc``)."""

_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

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


def chromium_path(configured: Path | None = None, *, hint: str = INSTALL_HINT) -> str:
    """The browser binary: ``configured`` (default ``$AGENTJUDGE_CHROMIUM``), else
    ``/usr/bin/chromium``, else ``chromium`` on the PATH; a missing one raises ``SandboxError``
    saying how to get it (``hint``)."""
    if configured is None:
        configured = get_settings().chromium
    if configured is not None:
        if not configured.is_file():
            raise SandboxError(f"$AGENTJUDGE_CHROMIUM: {configured} is not a file")
        return str(configured)
    if Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium"
    found = shutil.which("chromium")
    if found is None:
        raise SandboxError(hint)
    return found


def box_script(
    executable: str,
    writable: list[Path],
    *,
    offline: bool,
    cgroup_procs: Path | None,
    privileged: bool,
    bwrap: str,
) -> str:
    """The script Playwright starts instead of Chromium (see the module docstring): it takes
    Chromium's arguments and runs ``executable`` with them in the box, ``writable`` bound
    read-write at their own paths."""
    namespaces = ["--unshare-ipc", "--unshare-pid", "--unshare-uts"]
    if offline:
        namespaces.append("--unshare-net")
    if not privileged:
        namespaces.insert(0, "--unshare-user")
    command = [bwrap, *namespaces, "--die-with-parent"]
    command += ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in _SYSTEM_LINKS:
        path = Path(name)
        if path.is_symlink():
            command += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            command += ["--ro-bind", name, name]
    command += ["--ro-bind-try", "/var/cache/fontconfig", "/var/cache/fontconfig"]
    command += ["--proc", "/proc", "--dev", "/dev"]
    command += ["--perms", "1777", "--tmpfs", "/dev/shm", "--perms", "1777", "--tmpfs", "/tmp"]
    made = {Path("/"), Path("/tmp"), Path("/dev"), Path("/dev/shm")}
    for path in writable:
        for parent in reversed(path.parents):
            if parent not in made:  # bubblewrap's own mount points are closed to the user
                made.add(parent)
                command += ["--perms", "0755", "--dir", str(parent)]
        command += ["--bind", str(path), str(path)]
    if privileged:
        command += [
            "setpriv",
            f"--reuid={CHROMIUM_USER}",
            f"--regid={CHROMIUM_USER}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]
    command.append(executable)
    lines = ["#!/bin/sh", "# Chromium in a box (agentjudge: sandboxes/chromium.py)", "set -e"]
    if cgroup_procs is not None:
        lines.append(f"echo $$ > {shlex.quote(str(cgroup_procs))}")
    if privileged:
        owner = f"{CHROMIUM_USER}:{CHROMIUM_USER}"
        lines += [
            'for argument in "$@"; do',
            '  case "$argument" in',
            f'    --user-data-dir=*) chown -R {owner} -- "${{argument#--user-data-dir=}}" ;;',
            "  esac",
            "done",
        ]
    lines.append("exec " + " ".join(shlex.quote(part) for part in command) + ' "$@"')
    return "\n".join(lines) + "\n"


def _children() -> set[int]:
    with contextlib.suppress(psutil.Error):
        return {child.pid for child in psutil.Process().children()}
    return set()


def _browser_pids(driver: int) -> list[int]:
    """The browser processes the driver started (direct children of the driver: the box)."""
    try:
        return [child.pid for child in psutil.Process(driver).children()]
    except psutil.Error:
        return []


class ChromiumProcess:
    """A running headless Chromium in its box with its Playwright driver; ``new_context`` hands
    out isolated browser contexts. Start with ``start``, end with ``close``."""

    def __init__(
        self,
        playwright: Playwright,
        browser: Browser,
        folder: Path,
        socket_folder: Path,
        pids: list[int],
        cap: MemoryCap | None,
    ) -> None:
        self.playwright = playwright
        self.browser = browser
        self.folder = folder
        """The run-scratch folder holding the browser's profile and home."""
        self.socket_folder = socket_folder
        """The browser's temporary folder under /tmp (its single-instance socket lives there)."""
        self.pids = pids
        """The driver's and the box's process ids (tracked as the run's helpers)."""
        self.cap = cap
        """The browser's memory cgroup (None where none could be made)."""
        self._closed = False

    @classmethod
    async def start(
        cls,
        *,
        offline: bool = True,
        tag: str = "browser",
        executable: str | None = None,
        extra_args: tuple[str, ...] = (SOFTWARE_COMPOSITING,),
    ) -> ChromiumProcess:
        """Start the driver and the boxed browser; its profile and home go to a fresh folder of
        the run's scratch space. ``offline=False`` leaves out the network walls
        (``ISOLATION_ARGS`` and the box's own network): only for recording pages from the live
        web (``sandboxes.browser.recording``). ``tag`` names its folders (one of ``TAGS``);
        ``executable`` defaults to ``chromium_path()``; ``extra_args`` are added flags."""
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import async_playwright

        executable = executable or chromium_path()
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise SandboxError(BUBBLEWRAP_HINT)
        privileged = os.geteuid() == 0
        run = current_run()
        folder = run.directory() / run.new_name(tag)
        folder.mkdir(mode=0o711)  # the browser's user passes through to its own folders
        home = folder / "home"
        home.mkdir(mode=0o700)
        # Chromium's single-instance socket needs a short path: its temporary folder is a
        # fresh one under /tmp, named after the run so that a later gc finds it.
        socket_folder = SOCKET_ROOT / f"{folder.name}_tmp"
        socket_folder.mkdir(mode=0o700)
        if privileged:
            for path in (home, socket_folder):
                os.chown(path, CHROMIUM_USER, CHROMIUM_USER)
        cap = await asyncio.to_thread(MemoryCap.create, folder.name, BROWSER_MEMORY_BYTES)
        if cap is not None:
            (folder / CGROUP_NOTE).write_text(str(cap.folder))
        script = folder / BOX_SCRIPT
        script.write_text(
            box_script(
                executable,
                [folder, socket_folder],
                offline=offline,
                cgroup_procs=cap.procs_file if cap is not None else None,
                privileged=privileged,
                bwrap=bwrap,
            )
        )
        script.chmod(0o700)
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
        flags = ISOLATION_ARGS if offline else RECORDING_ARGS
        try:
            browser = await playwright.chromium.launch(
                executable_path=str(script),
                headless=True,
                chromium_sandbox=True,
                args=[*flags, *LIMIT_ARGS, *extra_args],
                env={
                    **_browser_environment(),
                    "HOME": str(home),
                    "TMPDIR": str(socket_folder),
                },
            )
        except PlaywrightError as error:
            await playwright.stop()
            for pid in drivers:
                untrack_process(pid)
            if cap is not None:
                await asyncio.to_thread(cap.remove)
            shutil.rmtree(folder, ignore_errors=True)
            shutil.rmtree(socket_folder, ignore_errors=True)
            raise SandboxError(f"Chromium ({executable}) did not start: {error}") from None
        browsers = [pid for driver in drivers for pid in _browser_pids(driver)]
        for pid in browsers:
            track_process(pid)
        return cls(playwright, browser, folder, socket_folder, [*drivers, *browsers], cap)

    async def new_context(self, **options: Any) -> BrowserContext:
        """A fresh, empty browser context: no cookies, storage or cache shared with others;
        service workers blocked, downloads refused; ``options`` are Playwright's (viewport, ...).
        """
        return await self.browser.new_context(
            **{"viewport": {"width": 1280, "height": 800}, **options},
            service_workers="block",
            accept_downloads=False,
        )

    @property
    def closed(self) -> bool:
        """Whether ``close`` has run (or the browser died)."""
        return self._closed or not self.browser.is_connected()

    def memory_note(self) -> str:
        """The memory limits a page of this browser runs under, for error messages."""
        cap = f", the browser's memory cap {BROWSER_MEMORY_BYTES // 2**20:,} MiB"
        return f"a page's script heap is capped at {RENDERER_HEAP_MB} MiB" + (
            cap if self.cap is not None else ""
        )

    async def close(self) -> None:
        """Close the browser and the driver, forget the processes, remove the scratch folder and
        the cgroup. Safe to call twice."""
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
        if self.cap is not None:
            await asyncio.to_thread(self.cap.remove)
        await asyncio.to_thread(shutil.rmtree, self.folder, True)
        await asyncio.to_thread(shutil.rmtree, self.socket_folder, True)


def _browser_environment() -> dict[str, str]:
    """The browser's environment: the caller's minus proxies and credentials it has no use for."""
    kept = ("PATH", "LANG", "LC_ALL", "TZ", "FONTCONFIG_PATH", "XDG_RUNTIME_DIR")
    return {name: os.environ[name] for name in kept if name in os.environ}


# -- leftovers ------------------------------------------------------------------------------------

EXIT_WAIT_SECONDS = 5.0
"""How long a killed browser process may take to exit."""

_RESOURCE = re.compile(rf"{NAME_PREFIX}_.+_(?:{'|'.join(TAGS)})_\d+")


def _dead_run_processes(dead: set[str]) -> list[psutil.Process]:
    """Processes whose command line names a dead run's resources (a browser's profile and
    temporary folders carry ``aj_<run id>_``): this user's, and the browser user's."""
    found = []
    markers = [f"{NAME_PREFIX}_{run_id}_" for run_id in dead]
    owners = {os.getuid(), CHROMIUM_USER} if os.geteuid() == 0 else {os.getuid()}
    for process in psutil.process_iter(["cmdline", "uids"]):
        with contextlib.suppress(psutil.Error, TypeError):
            if process.info["uids"].real not in owners or process.pid == os.getpid():
                continue
            command = " ".join(process.info["cmdline"] or [])
            if any(marker in command for marker in markers):
                found.append(process)
    return found


async def collect_chromium_leftovers() -> list[str]:
    """Kill what is left of dead runs' browsers (the browser kind's and phones), wait for it to
    exit, and remove their temporary folders and memory cgroups."""
    folders = {}
    for tag in TAGS:
        for path in sorted(SOCKET_ROOT.glob(f"{NAME_PREFIX}_*_{tag}_*_tmp")):
            run_id = run_id_of(path.name)
            if run_id is not None and not path.is_symlink() and not run_is_alive(run_id):
                folders[path] = run_id
    dead = set(folders.values())
    removed: list[str] = []
    if dead:
        processes = await asyncio.to_thread(_dead_run_processes, dead)
        for process in processes:
            with contextlib.suppress(psutil.Error):
                process.kill()
                removed.append(f"browser process {process.pid}")
        await asyncio.to_thread(psutil.wait_procs, processes, EXIT_WAIT_SECONDS)
    own = own_memory_cgroup()
    if own is not None and own[0].is_relative_to(CGROUP_ROOT):
        for cgroup in sorted(own[0].glob(f"{NAME_PREFIX}_*")):
            run_id = run_id_of(cgroup.name)
            if not _RESOURCE.fullmatch(cgroup.name) or run_id is None or run_is_alive(run_id):
                continue
            if await asyncio.to_thread(remove_cgroup, cgroup):
                removed.append(f"browser cgroup {cgroup} of run {run_id}")
    for path, run_id in folders.items():
        await asyncio.to_thread(shutil.rmtree, path, True)
        removed.append(f"browser temporary folder {path} of run {run_id}")
    return removed
