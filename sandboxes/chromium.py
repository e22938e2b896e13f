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
in a memory cgroup (``BROWSER_MEMORY_BYTES``): a page that allocates past either is killed, not
the machine. Several users (judges; phones) share one browser, a context each, so each context
has a cgroup of its own inside the browser's (``CONTEXT_MEMORY_BYTES``): a page holding more than
its context's share is killed there, and the other contexts' pages keep their memory. Chromium never
lets two contexts share a renderer process, and isolates sites into processes of their own; which
renderer process shows which frame the browser reports in the opening record of a page's trace
(what DevTools reads too), so after every navigation, new tab or new frame of a context
(``ContextMemory``) its frames' processes are moved into the context's cgroup, a fraction of a
second after they start. Memory a process held before it was moved stays counted towards the
browser's cap only; a renderer the browser shows no frame in (a spare one, a shared worker's)
stays in the browser's cgroup.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
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

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Playwright

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

CONTEXT_MEMORY_BYTES = 1536 * 2**20
"""The memory cgroup cap of one browser context's renderer processes: several times what a
heavy page holds (a judge's context on an archived page measured 60-250 MiB), well below the
browser's, so one context cannot take the memory the others' pages need."""

BROWSER_CGROUP = "main"
"""The cgroup, inside the browser's, that the browser's own processes (and renderers not yet
given to a context) live in; contexts' cgroups are its siblings."""

TRACE_SECONDS = 5.0
"""How long asking the browser which processes show a page's frames may take."""

PLACE_ATTEMPTS = 4
"""How many more times a page is looked at when its frames' processes could not all be placed
(the browser's answer came while a navigation was under way, or not at all)."""

RETRY_SECONDS = 0.5
"""The pause before such a page is looked at again."""

MAX_TABS = 8
"""The most pages (tabs, popups) one browser context may have open; a page opening more has them
closed at once (the browser kind's ``BrowserSession`` and the phone's ``WebDevice`` both)."""

OPEN_LIMIT = f"""(() => {{
    const open = window.open;
    let left = {MAX_TABS};
    window.open = function (...args) {{
        if (left <= 0) return null;
        left -= 1;
        return open.apply(this, args);
    }};
}})();"""
"""An init script: each document may call ``window.open`` ``MAX_TABS`` times; later calls open
nothing. Only a brake on a page opening tabs in a loop (each one costs the browser a renderer
set-up before it can be closed); the cap itself is the context's owner's, which closes pages
past ``MAX_TABS``."""

CLOSE_SECONDS = 10.0
"""How long closing a tab or a context may take (``close_quietly``)."""

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
        *,
        contexts: bool = False,
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
        self.context_memory = ContextMemory(self) if contexts and cap is not None else None
        """Gives each context's renderer processes a cgroup of their own (None where the
        browser has no cgroups to make them in: ``contexts`` False)."""
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
        main = await _make_cgroups(folder, cap)
        script = folder / BOX_SCRIPT
        script.write_text(
            box_script(
                executable,
                [folder, socket_folder],
                offline=offline,
                cgroup_procs=(main or cap).procs_file if cap is not None else None,
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
        pids = [*drivers, *browsers]
        return cls(playwright, browser, folder, socket_folder, pids, cap, contexts=main is not None)

    async def new_context(self, **options: Any) -> BrowserContext:
        """A fresh, empty browser context: no cookies, storage or cache shared with others;
        service workers blocked, downloads refused; ``options`` are Playwright's (viewport, ...).
        """
        context = await self.browser.new_context(
            **{"viewport": {"width": 1280, "height": 800}, **options},
            service_workers="block",
            accept_downloads=False,
        )
        if self.context_memory is not None:
            await self.context_memory.watch(context)
        return context

    @property
    def closed(self) -> bool:
        """Whether ``close`` has run (or the browser died)."""
        return self._closed or not self.browser.is_connected()

    def memory_note(self) -> str:
        """The memory limits a page of this browser runs under, for error messages."""
        context = f", its browser context's memory cap {CONTEXT_MEMORY_BYTES // 2**20:,} MiB"
        cap = f", the browser's memory cap {BROWSER_MEMORY_BYTES // 2**20:,} MiB"
        return (
            f"a page's script heap is capped at {RENDERER_HEAP_MB} MiB"
            + (context if self.context_memory is not None else "")
            + (cap if self.cap is not None else "")
        )

    async def close(self) -> None:
        """Close the browser and the driver, forget the processes, remove the scratch folder and
        the cgroup. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if self.context_memory is not None:
            await self.context_memory.stop()
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


async def _make_cgroups(folder: Path, cap: MemoryCap | None) -> MemoryCap | None:
    """Note the browser's cgroup for ``gc`` and make the one its own processes start in."""
    if cap is None:
        return None
    (folder / CGROUP_NOTE).write_text(str(cap.folder))
    return await asyncio.to_thread(cap.child, BROWSER_CGROUP)


class ContextCap:
    """One browser context's memory cgroup, inside its browser's."""

    def __init__(self, cap: MemoryCap, limit_bytes: int, browser_pids: list[int]) -> None:
        self.cap = cap
        self.limit_bytes = limit_bytes
        self.browser_pids = browser_pids
        """The browser's own processes (its box), whose descendants show the pages."""
        self.moved: set[int] = set()
        """Host pids of the renderer processes moved into it."""
        self.reported = 0
        """Kills by the cap already reported (``new_kills``)."""

    def kills(self) -> int:
        """How many of the context's processes its cap ended so far."""
        return self.cap.oom_kills() or 0

    def new_kills(self) -> bool:
        """Whether the cap ended a process since the last time this said so."""
        kills = self.kills()
        if kills <= self.reported:
            return False
        self.reported = kills
        return True

    def describe(self) -> str:
        """The cap, as named in messages."""
        return f"the browser context's memory cap ({self.limit_bytes // 2**20:,} MiB)"

    async def holds(self, page: Page) -> bool:
        """Whether every renderer process showing ``page``'s frames is in this cgroup now
        (False when the browser did not say which they are). Memory a renderer allocated
        before it was moved here stays counted where it was: until this holds, a page's
        allocations count towards the browser's cap only."""
        renderers = await _page_renderers(page, self.browser_pids)
        members = set(await asyncio.to_thread(self.cap.pids))
        return bool(renderers) and all(host in members for host in renderers)


_context_caps: weakref.WeakKeyDictionary[BrowserContext, ContextCap] = weakref.WeakKeyDictionary()


def context_cap(context: BrowserContext) -> ContextCap | None:
    """The memory cgroup of ``context`` (None when it has none)."""
    return _context_caps.get(context)


def new_context_limit(context: BrowserContext) -> str | None:
    """The memory cap of ``context``, named, when it ended one of the context's processes since
    the last time this said so; else None (no such kill, or no cap)."""
    cap = context_cap(context)
    if cap is None or not cap.new_kills():
        return None
    return cap.describe()


class ContextMemory:
    """Gives each browser context of one browser a memory cgroup (``CONTEXT_MEMORY_BYTES``) and
    moves the renderer processes showing its frames into it (see the module docstring).

    A page is looked at again after each navigation of one of its frames and when it opens: a
    short trace of the page (its opening record names each frame's renderer process, by its pid
    in the box), one at a time per browser; the box's pids are then turned into the host's."""

    def __init__(self, process: ChromiumProcess, limit_bytes: int = CONTEXT_MEMORY_BYTES) -> None:
        self.process = process
        self.limit_bytes = limit_bytes
        self._count = 0
        self._pending: dict[Page, int] = {}
        """Pages to look at, with how many looks at each failed before."""
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._caps: list[ContextCap] = []

    async def watch(self, context: BrowserContext) -> ContextCap | None:
        """Make ``context``'s cgroup and follow its pages (None when no cgroup could be made)."""
        if self.process.cap is None:
            return None
        self._count += 1
        made = await asyncio.to_thread(
            self.process.cap.child, f"context_{self._count}", self.limit_bytes
        )
        if made is None:
            return None
        cap = ContextCap(made, self.limit_bytes, self.process.pids)
        _context_caps[context] = cap
        self._caps.append(cap)
        context.on("page", self._follow)
        context.on("close", lambda _context: self._forget(cap))
        for page in context.pages:
            self._follow(page)
        return cap

    def _follow(self, page: Page) -> None:
        page.on("framenavigated", lambda _frame: self._look_at(page))
        page.on("close", self._drop)
        self._look_at(page)

    def _drop(self, page: Page) -> None:
        self._pending.pop(page, None)

    def _look_at(self, page: Page, attempt: int = 0) -> None:
        self._pending[page] = attempt
        self._wake.set()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    def _forget(self, cap: ContextCap) -> None:
        # Its renderers exit with the context; the empty cgroup goes with the browser's.
        cap.moved.clear()

    async def _run(self) -> None:
        while not self.process.closed:
            await self._wake.wait()
            self._wake.clear()
            pages, self._pending = self._pending, {}
            for page, attempt in pages.items():
                cap = _context_caps.get(page.context)
                if cap is None or page.is_closed():
                    continue
                try:
                    placed = await asyncio.wait_for(self._place(page, cap), 3 * TRACE_SECONDS)
                except Exception as error:  # the page went away, or the browser did not say
                    logger.info("no processes placed for %s: %r", page.url, error)
                    placed = False
                if not placed and attempt < PLACE_ATTEMPTS and page not in self._pending:
                    asyncio.get_running_loop().call_later(
                        RETRY_SECONDS, self._look_at, page, attempt + 1
                    )

    async def _place(self, page: Page, cap: ContextCap) -> bool:
        """Move the processes of ``page``'s frames into ``cap``; whether each was found."""
        renderers = await _page_renderers(page, self.process.pids)
        placed = bool(renderers)
        for host in renderers:
            if host is None or host in self.process.pids:
                placed = False
                continue
            if host in cap.moved and host in cap.cap.pids():
                continue
            if await asyncio.to_thread(cap.cap.add, host):
                cap.moved.add(host)
            else:
                placed = False
        return placed

    async def stop(self) -> None:
        """Stop following pages."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        self._task = None


async def _page_renderers(page: Page, browser_pids: list[int]) -> list[int | None]:
    """The host pids of the processes showing ``page``'s frames (None for one not found among
    the descendants of ``browser_pids``); empty when the browser did not say."""
    inside = await _frame_processes(page)
    hosts = await asyncio.to_thread(_host_pids, browser_pids)
    return [hosts.get(pid) for pid in inside]


async def _frame_processes(page: Page) -> set[int]:
    """The pids (in the browser's box) of the renderer processes showing ``page``'s frames, from
    the opening record of a short trace of the page; empty when the browser did not say."""
    session = await page.context.new_cdp_session(page)
    pids: set[int] = set()
    complete: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def collected(params: dict[str, Any]) -> None:
        for event in params.get("value", []):
            if event.get("name") == "TracingStartedInBrowser":
                frames = (event.get("args") or {}).get("data", {}).get("frames", [])
                pids.update(
                    frame["processId"]
                    for frame in frames
                    if isinstance(frame.get("processId"), int)
                )

    def completed(_params: object) -> None:
        if not complete.done():
            complete.set_result(None)

    session.on("Tracing.dataCollected", collected)
    session.on("Tracing.tracingComplete", completed)
    try:
        async with _trace_lock(page):
            await asyncio.wait_for(
                session.send(
                    "Tracing.start",
                    {
                        "categories": "disabled-by-default-devtools.timeline",
                        "transferMode": "ReportEvents",
                    },
                ),
                TRACE_SECONDS,
            )
            await asyncio.wait_for(session.send("Tracing.end"), TRACE_SECONDS)
            await asyncio.wait_for(complete, TRACE_SECONDS)
    finally:
        with contextlib.suppress(Exception):
            await session.detach()
    return pids


_trace_locks: weakref.WeakKeyDictionary[Browser, asyncio.Lock] = weakref.WeakKeyDictionary()


def _trace_lock(page: Page) -> asyncio.Lock:
    """One trace at a time per browser (the browser runs one)."""
    browser = page.context.browser
    assert browser is not None
    if browser not in _trace_locks:
        _trace_locks[browser] = asyncio.Lock()
    return _trace_locks[browser]


def _host_pids(box: list[int]) -> dict[int, int]:
    """The processes of the browser's box: their pid in the box (as the browser names them) to
    their pid on the host, from each process's list of pids in nested namespaces."""
    found: dict[int, int] = {}
    for pid in box:
        try:
            processes = psutil.Process(pid).children(recursive=True)
        except psutil.Error:
            continue
        for process in processes:
            try:
                status = Path(f"/proc/{process.pid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("NSpid:"):
                    numbers = line.split()[1:]
                    if len(numbers) >= 2:
                        found[int(numbers[1])] = process.pid
    return found


def _browser_environment() -> dict[str, str]:
    """The browser's environment: the caller's minus proxies and credentials it has no use for."""
    kept = ("PATH", "LANG", "LC_ALL", "TZ", "FONTCONFIG_PATH", "XDG_RUNTIME_DIR")
    return {name: os.environ[name] for name in kept if name in os.environ}


async def close_quietly(target: Page | BrowserContext, seconds: float = CLOSE_SECONDS) -> bool:
    """Close a tab or a context, giving up after ``seconds``; whether it closed."""
    try:
        await asyncio.wait_for(target.close(), seconds)
    except Exception:
        return False
    return True


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
