"""The Chromium backend: a phone-sized headless Chromium showing local web apps as a device.

Owns ``PhoneBrowser`` (one headless Chromium per provider, started by ``sandboxes.chromium`` with
the browser kind's walls: boxed, unprivileged with Chromium's own sandbox on, off the network),
``WebDevice`` (one browser context = one phone: mobile viewport, touch, device pixel ratio 2, its
own app data) and ``WebDeviceState`` (the apps' data and the screen shown: what a snapshot keeps).

Each phone's context comes from ``ChromiumProcess.new_context``, so it gets a memory cgroup of its
own inside the browser's (``CONTEXT_MEMORY_BYTES``) and at most ``MAX_TABS`` pages: one phone's
page that allocates gigabytes, or opens windows in a loop, is stopped there while the other phones
of the same browser keep theirs. A call that finds the phone's page crashed fails with a
``SandboxError`` saying why (naming the context's cap when that ended it, from
``ContextCap.describe``) and the phone goes back to its home screen, as Android does when an app
dies.

The phone's "installed apps" are folders of static files (``<apps>/<app id>/index.html``); each app
runs at its own origin ``http://<app id>.phone.invalid/`` so that, as on Android, every app has its
own data (``localStorage``), and the home screen at ``http://home.phone.invalid/`` lists them. Every
request is answered from those folders by request interception: nothing listens on any port, the
host resolver maps every name to nowhere, a request for anything else is aborted, and what slips
past (WebRTC) meets a dead proxy and a box with no network. A read-only device refuses every write
to app data (the view judges share).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import mimetypes
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

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
)
from sandboxes.android.device import Device
from sandboxes.android.hierarchy import Bounds, UIElement, hierarchy_xml, parse_hierarchy
from sandboxes.base import SandboxError
from sandboxes.chromium import (
    MAX_TABS,
    OPEN_LIMIT,
    ChromiumProcess,
    close_quietly,
    new_context_limit,
)

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page, Route

__all__ = [
    "APP_DOMAIN",
    "HOME_APP",
    "PHONE_VIEWPORT",
    "PhoneBrowser",
    "WebDevice",
    "WebDeviceState",
    "app_origin",
    "installed_apps",
]

APP_DOMAIN = "phone.invalid"
"""Apps live at ``http://<app id>.phone.invalid/``; ``.invalid`` never resolves anywhere."""

HOME_APP = "home"
"""The launcher's app id (the home screen)."""

PHONE_VIEWPORT = (360, 740)
"""The screen in CSS pixels; at a device pixel ratio of 2 the screenshots are 720 x 1480."""

PIXEL_RATIO = 2
"""Device pixels per CSS pixel (screenshots and UI bounds are in device pixels, as on Android)."""

USER_AGENT = (
    "Mozilla/5.0 (Linux; Android 14; agentjudge phone) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36"
)

T = TypeVar("T")

_STORAGE_PAGE = "/__agentjudge_storage__"
"""A blank page every origin serves, where app data is read and written."""

_SCRIPTS = Path(__file__).parent


def _script(name: str) -> str:
    return (_SCRIPTS / name).read_text(encoding="utf-8")


_WRITE_STORAGE = (
    "values => { for (const [k, v] of Object.entries(values)) localStorage.setItem(k, v); }"
)
_READ_STORAGE = "() => Object.fromEntries(Object.entries(localStorage))"
_TEXT_FIELDS = (
    "Array.from(document.querySelectorAll('input[id], textarea[id]'))"
    ".filter(e => !['checkbox', 'radio', 'button', 'submit'].includes(e.type))"
)
_READ_SCREEN = (
    f"() => ({{fields: Object.fromEntries({_TEXT_FIELDS}.map(e => [e.id, e.value])),"
    " scroll: [Math.round(window.scrollX), Math.round(window.scrollY)]})"
)
_RESTORE_SCREEN = (
    "({fields, scroll}) => { for (const [id, value] of Object.entries(fields)) {"
    " const e = document.getElementById(id); if (e && e.value !== value) { e.value = value;"
    " e.dispatchEvent(new Event('input', {bubbles: true})); } }"
    " window.scrollTo(scroll[0], scroll[1]); }"
)


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def app_origin(app_id: str) -> str:
    """The origin an app runs at (``http://notes.phone.invalid``)."""
    return f"http://{app_id}.{APP_DOMAIN}"


@dataclass(frozen=True)
class InstalledApp:
    """One web app on the phone."""

    app_id: str
    """Its folder name and the first label of its origin (``notes``)."""
    name: str
    """The name the home screen shows and ``open_app`` accepts (``Notes``)."""
    folder: Path
    """The folder its files are served from."""


def installed_apps(apps_dir: Path) -> dict[str, InstalledApp]:
    """The apps under ``apps_dir`` by id: each sub-folder with an ``index.html``; its display
    name is ``app.json``'s ``name`` when present, else the folder name capitalised."""
    apps: dict[str, InstalledApp] = {}
    if not apps_dir.is_dir():
        raise SandboxError(f"{apps_dir}: no such apps folder")
    for folder in sorted(apps_dir.iterdir()):
        if not (folder / "index.html").is_file() or folder.name == HOME_APP:
            continue
        if not folder.name.replace("-", "").isalnum() or not folder.name.islower():
            raise SandboxError(f"{folder}: app folder names must be lowercase letters and digits")
        name = folder.name.capitalize()
        manifest = folder / "app.json"
        if manifest.is_file():
            try:
                name = str(json.loads(manifest.read_text(encoding="utf-8"))["name"])
            except (ValueError, KeyError, TypeError) as error:
                problem = f"{manifest}: needs a JSON object with a name: {error}"
                raise SandboxError(problem) from None
        apps[folder.name] = InstalledApp(folder.name, name, folder)
    return apps


def _home_page(apps: dict[str, InstalledApp]) -> str:
    """The launcher: one big button per app, in a grid, like a phone's home screen."""
    icons = "\n".join(
        f'<a class="icon" id="app-{app.app_id}" href="{app_origin(app.app_id)}/">'
        f'<span class="glyph" data-letter="{html.escape(app.name[:1])}"></span>'
        f'<span class="label">{html.escape(app.name)}</span></a>'
        for app in apps.values()
    )
    return f"""<!doctype html><html data-package="com.agentjudge.launcher"><head>
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Home</title>
<style>
body {{ margin: 0; font-family: sans-serif; background: #1d3557; color: white; }}
.grid {{ display: grid; grid-template-columns: repeat(4, 1fr); gap: 18px; padding: 40px 14px; }}
.icon {{ display: flex; flex-direction: column; align-items: center; color: white;
  text-decoration: none; font-size: 13px; }}
.glyph {{ width: 56px; height: 56px; border-radius: 16px; background: #457b9d; display: flex;
  align-items: center; justify-content: center; font-size: 26px; margin-bottom: 6px; }}
.glyph::before {{ content: attr(data-letter); }}
</style></head><body><div class="grid">{icons}</div></body></html>"""


@dataclass
class WebDeviceState:
    """What a web phone's snapshot keeps: every app's data and the page on screen."""

    storage: dict[str, dict[str, str]] = field(default_factory=dict)
    """Each app's ``localStorage`` (app id -> key -> value)."""
    url: str = f"{app_origin(HOME_APP)}/"
    """The page on screen (the suite's apps keep their current view in its fragment)."""
    fields: dict[str, str] = field(default_factory=dict)
    """What the text fields on screen hold (field id -> value): typing not saved yet."""
    scroll: tuple[int, int] = (0, 0)
    """How far the page on screen is scrolled (CSS pixels)."""


class PhoneBrowser:
    """One headless Chromium (per provider) that hands out phone-shaped contexts: started by
    ``sandboxes.chromium`` with the browser kind's walls (boxed as an unprivileged user with
    Chromium's own sandbox on, no network of its own, the dead proxy, WebRTC kept off UDP, the
    memory caps: the browser's, and each phone's context's where cgroups can be made)."""

    def __init__(self, process: ChromiumProcess) -> None:
        self._process = process
        self._pids = process.pids

    @classmethod
    async def launch(cls, executable: str) -> PhoneBrowser:
        """Start Playwright's driver and Chromium; their processes are tracked so that ``gc``
        kills them if this run dies, and Chromium's profile lives in the run's scratch folder.
        Where the browser gets a memory cgroup, ``ChromiumProcess.start`` makes the one its own
        processes start in, and each phone's context gets one beside it (``context_memory``)."""
        process = await ChromiumProcess.start(
            tag="phone", executable=executable, extra_args=("--no-first-run",)
        )
        return cls(process)

    async def new_device(
        self, apps_dir: Path, state: WebDeviceState, *, read_only: bool = False
    ) -> WebDevice:
        """A fresh phone showing ``state``: its apps served from ``apps_dir``."""
        device = WebDevice(self._process, installed_apps(apps_dir), read_only=read_only)
        try:
            await device.start(state)
        except BaseException:
            await device.close()
            raise
        return device

    async def close(self) -> None:
        """Stop Chromium and the driver, forget their processes, remove the profile."""
        await self._process.close()


class WebDevice(Device):
    """One phone: a browser context with a mobile viewport, touch input and its own app data."""

    def __init__(
        self, process: ChromiumProcess, apps: dict[str, InstalledApp], *, read_only: bool
    ) -> None:
        self._process = process
        self.apps = apps
        self.read_only = read_only
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._crashed = False
        """Whether the page on screen crashed (its renderer died) since it was opened."""
        self._opening = 0
        """Pages the phone itself is opening (the screen, a storage page): never closed by the
        tab cap."""
        self.blocked: list[str] = []
        """Requests refused because they left the phone (for tests and diagnostics)."""
        self.pages_closed_by_cap = 0
        """Pages an app opened past ``MAX_TABS`` (closed at once; for tests and diagnostics)."""

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self, state: WebDeviceState) -> None:
        """Open the context, load the apps' data, and show ``state.url``."""
        width, height = PHONE_VIEWPORT
        # Service workers blocked and downloads refused by ``new_context``, which also gives
        # the context its memory cgroup.
        self._context = await self._process.new_context(
            viewport={"width": width, "height": height},
            screen={"width": width, "height": height},
            device_scale_factor=PIXEL_RATIO,
            is_mobile=True,
            has_touch=True,
            user_agent=USER_AGENT,
            locale="en-US",
            timezone_id="UTC",
        )
        self._context.on("page", self._adopt)
        await self._context.add_init_script(OPEN_LIMIT)
        await self._context.route("**/*", self._serve)
        for app_id, values in state.storage.items():
            await self._with_origin(app_id, _WRITE_STORAGE, values)
        if self.read_only:
            await self._context.add_init_script(_script("read_only.js"))
        await self._open_screen(state.url)
        await self.page.evaluate(_RESTORE_SCREEN, {"fields": state.fields, "scroll": state.scroll})

    async def _open_screen(self, url: str) -> None:
        """A fresh page on screen, showing ``url``."""
        page = await self._new_page()
        self._page, self._crashed = page, False
        page.on("crash", self._note_crash)
        await self._goto(url)

    def _note_crash(self, page: Page) -> None:
        if page is self._page:
            self._crashed = True

    async def _new_page(self) -> Page:
        """A page of the phone's own (not counted against the apps' windows by ``_adopt``)."""
        if self._context is None:
            raise SandboxError("the device is closed")
        self._opening += 1
        try:
            return await self._context.new_page()
        except BaseException:
            self._opening = max(0, self._opening - 1)
            raise

    def _adopt(self, page: Page) -> None:
        """Close a page an app opened past ``MAX_TABS`` (``window.open`` in a loop) at once; the
        phone's own pages are let through (its ``new_page`` calls are counted, and each one's
        page arrives here before the call returns)."""
        if self._opening > 0:
            self._opening -= 1
            return
        if self._context is not None and len(self._context.pages) > MAX_TABS:
            self.pages_closed_by_cap += 1
            asyncio.get_running_loop().create_task(close_quietly(page))

    def _crash_note(self, error: BaseException | None) -> str | None:
        """Why the page on screen failed under a call, when it crashed: the context's own memory
        cap, named, when that ended one of its processes since last said; else the memory
        limits a page runs under. None when the page did not crash (``error`` is another)."""
        limit = new_context_limit(self._context) if self._context is not None else None
        crashed = self._crashed or (error is not None and "crash" in str(error).casefold())
        if limit is not None:
            return (
                f"the phone's page ({self.page.url}) was stopped by {limit}, which holds this "
                "phone's pages only"
            )
        if crashed:
            return (
                f"the phone's page ({self.page.url}) crashed, most likely out of memory "
                f"({self._process.memory_note()})"
            )
        return None

    async def _guarded(self, call: Callable[[], Awaitable[T]]) -> T:
        """Run ``call`` on the page on screen; when that page crashed (before or under the call),
        raise ``SandboxError`` saying why, and put a fresh page on the home screen."""
        error: Exception | None = None
        if not self._crashed:
            try:
                return await call()
            except (ActionError, SandboxError):
                raise
            except Exception as failed:  # Playwright's: the page went away under the call
                error = failed
        note = self._crash_note(error)
        if note is None:
            assert error is not None
            raise error
        await close_quietly(self.page)
        try:
            await self._open_screen(f"{app_origin(HOME_APP)}/")
        except Exception as failed:
            note += f"; the phone could not be restarted: {_first_line(failed)}"
        else:
            note += "; the app was closed and the phone shows the home screen"
        raise SandboxError(note) from None

    async def close(self) -> None:
        """Close the context (its pages and data)."""
        if self._context is not None:
            with contextlib.suppress(Exception):
                await self._context.close()
        self._context = self._page = None

    async def state(self) -> WebDeviceState:
        """Every app's data and the page on screen, now."""
        return await self._guarded(self._state)

    async def _state(self) -> WebDeviceState:
        storage: dict[str, dict[str, str]] = {}
        for app_id in self.apps:
            values = await self._with_origin(app_id, _READ_STORAGE, None)
            if values:
                storage[app_id] = {str(key): str(value) for key, value in values.items()}
        screen = await self.page.evaluate(_READ_SCREEN)
        return WebDeviceState(
            storage=storage,
            url=self.page.url,
            fields={str(key): str(value) for key, value in screen["fields"].items()},
            scroll=(int(screen["scroll"][0]), int(screen["scroll"][1])),
        )

    @property
    def page(self) -> Page:
        """The page on screen."""
        if self._page is None:
            raise SandboxError("the device is closed")
        return self._page

    async def _with_origin(self, app_id: str, script: str, argument: Any) -> Any:
        """Run ``script`` in a blank page of app ``app_id``'s origin (its data, not its UI)."""
        if self._context is None:
            raise SandboxError("the device is closed")
        page = await self._new_page()
        try:
            await page.goto(f"{app_origin(app_id)}{_STORAGE_PAGE}")
            return await page.evaluate(script, argument)
        finally:
            await page.close()

    async def _serve(self, route: Route) -> None:
        """Answer a request from the app folders; abort anything that would leave the phone."""
        url = urlsplit(route.request.url)
        host = url.hostname or ""
        app_id, _, domain = host.partition(".")
        if url.scheme != "http" or domain != APP_DOMAIN:
            self.blocked.append(route.request.url)
            await route.abort("blockedbyclient")
            return
        if url.path == _STORAGE_PAGE:
            await route.fulfill(status=200, content_type="text/html", body="<!doctype html>")
            return
        if app_id == HOME_APP:
            await route.fulfill(status=200, content_type="text/html", body=_home_page(self.apps))
            return
        app = self.apps.get(app_id)
        if app is None:
            await route.fulfill(status=404, content_type="text/plain", body="no such app")
            return
        relative = url.path.lstrip("/") or "index.html"
        if relative.endswith("/"):
            relative += "index.html"
        folder = app.folder.resolve()
        path = (folder / relative).resolve()
        if not path.is_relative_to(folder) or not path.is_file():
            await route.fulfill(status=404, content_type="text/plain", body="not found")
            return
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        await route.fulfill(status=200, content_type=mime, body=path.read_bytes())

    async def _goto(self, url: str) -> None:
        await self.page.goto(url, wait_until="load")

    # -- the Device surface ----------------------------------------------------------------------

    async def screen_size(self) -> tuple[int, int]:
        """720 x 1480 device pixels."""
        return PHONE_VIEWPORT[0] * PIXEL_RATIO, PHONE_VIEWPORT[1] * PIXEL_RATIO

    async def screenshot(self) -> bytes:
        """The viewport as PNG, in device pixels."""
        return await self._guarded(
            lambda: self.page.screenshot(type="png", animations="disabled", caret="hide")
        )

    async def hierarchy(self) -> str:
        """The page's visible elements as uiautomator XML, validated like a device's dump."""
        return await self._guarded(self._hierarchy)

    async def _hierarchy(self) -> str:
        nodes: list[dict[str, Any]] = await self.page.evaluate(_script("dump_page.js"))
        elements = [
            UIElement(
                class_name=node["cls"],
                text=node["text"],
                content_desc=node["desc"],
                resource_id=node["rid"],
                package=node["pkg"],
                hint=node["hint"],
                bounds=Bounds(
                    left=node["box"][0],
                    top=node["box"][1],
                    right=node["box"][2],
                    bottom=node["box"][3],
                ),
                flags={name: bool(value) for name, value in node["flags"].items()},
                depth=int(node["depth"]),
            )
            for node in nodes
        ]
        xml = hierarchy_xml(elements)
        parse_hierarchy(xml)  # the same check a device's dump gets
        return xml

    async def run(self, operation: DeviceOperation) -> None:
        """One primitive: touches go through the touch screen, keys through the keyboard."""
        await self._guarded(lambda: self._run(operation))

    async def _run(self, operation: DeviceOperation) -> None:
        page = self.page
        if isinstance(operation, Tap):
            await self._check_point(operation.x, operation.y)
            await page.touchscreen.tap(operation.x / PIXEL_RATIO, operation.y / PIXEL_RATIO)
        elif isinstance(operation, LongPress):
            await self._check_point(operation.x, operation.y)
            await self._touch_hold(operation)
        elif isinstance(operation, Swipe):
            await self._swipe(operation)
        elif isinstance(operation, TypeText):
            await page.keyboard.insert_text(operation.text)
        elif isinstance(operation, ClearText):
            await page.keyboard.press("ControlOrMeta+a")
            await page.keyboard.press("Backspace")
        elif isinstance(operation, PressKey):
            await self._key(operation.key)
        elif isinstance(operation, LaunchApp):
            await self._goto(f"{app_origin(self._app_named(operation.name))}/")
        elif isinstance(operation, Wait):
            await asyncio.sleep(operation.seconds)
        with contextlib.suppress(Exception):
            await page.wait_for_load_state("load", timeout=5000)

    async def _check_point(self, x: int, y: int) -> None:
        width, height = await self.screen_size()
        if not (0 <= x < width and 0 <= y < height):
            raise ActionError(f"point ({x}, {y}) is off the {width}x{height} screen")

    def _app_named(self, name: str) -> str:
        wanted = name.strip().casefold()
        for app in self.apps.values():
            if wanted in (app.app_id.casefold(), app.name.casefold()):
                return app.app_id
        known = ", ".join(app.name for app in self.apps.values())
        raise ActionError(f"no app named {name!r} on this phone (installed: {known})")

    async def _key(self, key: str) -> None:
        page = self.page
        if key == "home":
            await self._goto(f"{app_origin(HOME_APP)}/")
        elif key == "back":
            # An app may handle back itself (closing a dialog), as Android apps do; otherwise
            # the browser's history goes one page back.
            handled = await page.evaluate(
                "() => typeof window.onDeviceBack === 'function' ? !!window.onDeviceBack() : false"
            )
            if not handled and await page.go_back(wait_until="load") is None:
                await self._goto(f"{app_origin(HOME_APP)}/")  # nothing to go back to
        else:
            await page.keyboard.press("Enter")

    async def _session(self) -> Any:
        if self._context is None:
            raise SandboxError("the device is closed")
        return await self._context.new_cdp_session(self.page)

    async def _touch_hold(self, operation: LongPress) -> None:
        session = await self._session()
        point = {"x": operation.x / PIXEL_RATIO, "y": operation.y / PIXEL_RATIO}
        try:
            touch = "Input.dispatchTouchEvent"
            await session.send(touch, {"type": "touchStart", "touchPoints": [point]})
            await asyncio.sleep(operation.milliseconds / 1000)
            await session.send(touch, {"type": "touchEnd", "touchPoints": []})
        finally:
            await session.detach()

    async def _swipe(self, operation: Swipe) -> None:
        """A touch drag from the first point to the second in the gesture's time; the finger
        rests at the end before lifting, so the page stops where the finger did (no fling)."""
        session = await self._session()
        steps = max(2, operation.milliseconds // 16)

        def point(fraction: float) -> list[dict[str, float]]:
            x = operation.x1 + (operation.x2 - operation.x1) * fraction
            y = operation.y1 + (operation.y2 - operation.y1) * fraction
            return [{"x": x / PIXEL_RATIO, "y": y / PIXEL_RATIO}]

        touch = "Input.dispatchTouchEvent"
        try:
            await session.send(touch, {"type": "touchStart", "touchPoints": point(0)})
            for step in range(1, steps + 1):
                await session.send(touch, {"type": "touchMove", "touchPoints": point(step / steps)})
                await asyncio.sleep(operation.milliseconds / 1000 / steps)
            await asyncio.sleep(0.15)
            await session.send(touch, {"type": "touchMove", "touchPoints": point(1)})
            await session.send(touch, {"type": "touchEnd", "touchPoints": []})
        finally:
            await session.detach()


def chromium_executable(configured: Path | None) -> str:
    """The Chromium binary: ``configured`` (``AGENTJUDGE_CHROMIUM``), else ``/usr/bin/chromium``,
    else ``chromium`` on the PATH; ``SandboxError`` saying how to get one when there is none."""
    if configured is not None:
        if configured.is_file():
            return str(configured)
        raise SandboxError(f"AGENTJUDGE_CHROMIUM={configured}: no such file")
    for candidate in ("/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).is_file():
            return candidate
    raise SandboxError(
        "the android kind's chromium backend needs Chromium: `apt-get install chromium`, or "
        "point AGENTJUDGE_CHROMIUM at a Chromium binary"
    )
