"""One user's browser: a Playwright context whose every request is answered from an archive.

Owns ``BrowserSession``: the context, its tabs (pages in opening order, one of them current, at most
``MAX_TABS``), the routing that answers requests from the ``PageArchive`` (and the "not in the
archive" page for the rest), the list of refused addresses, a lock that makes calls on one session
take turns, and ``recover``, which closes tabs that stopped answering (a script that never yields)
or crashed (out of memory) so that the next call finds a working browser. What the tools do with a
session (snapshots, clicks, typing) is ``mcp_servers.browser``'s; this module only holds the browser
state and its walls.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from sandboxes.browser.archive import MISS_HEADER, PageArchive, not_archived_response
from sandboxes.chromium import (
    CLOSE_SECONDS,
    MAX_TABS,
    OPEN_LIMIT,
    close_quietly,
    context_cap,
    new_context_limit,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from playwright.async_api import BrowserContext, Dialog, Page, Route, WebSocketRoute

NAVIGATION_TIMEOUT_MS = 15_000
"""How long a navigation may take (answers come from memory: only a broken page takes long)."""

ACTION_TIMEOUT_MS = 5_000
"""How long a click, a fill or a wait for an element may take."""

CALL_DEADLINE_SECONDS = 60.0
"""The longest one tool call may take (navigation, waits and the snapshot fit well within)."""

PROBE_SECONDS = 5.0
"""How long a tab may take to answer a trivial script before ``recover`` counts it as hung."""

_DOCUMENT_TYPES = frozenset({"document", "iframe"})


class TabLimitError(Exception):
    """Opening a tab would pass ``MAX_TABS``."""


@dataclass
class ArchiveTraffic:
    """What a session's routing answered: counts, and the addresses it refused."""

    served: int = 0
    """Requests answered from the archive."""
    refused: list[str] = field(default_factory=list)
    """Addresses not in the archive (answered with the "not in the archive" page), in order."""


@dataclass(frozen=True)
class PageSummary:
    """One page the user was shown summarised instead of in full."""

    url: str
    """The page's address."""
    snapshot_chars: int
    """The length of the full snapshot."""
    summary_chars: int
    """The length of the summary shown instead."""
    model: str
    """The model that wrote the summary, as the client reported it."""


class BrowserSession:
    """A browser context over one archive; pages are its tabs, ``page`` the current one."""

    def __init__(
        self,
        context: BrowserContext,
        archive: PageArchive,
        new_context: Callable[[], Awaitable[BrowserContext]] | None = None,
    ) -> None:
        self.context = context
        self.new_context = new_context
        """Makes a replacement context when a hung tab cannot be closed (None: none is made)."""
        self.archive = archive
        self.traffic = ArchiveTraffic()
        self.tabs: list[Page] = []
        self.current = 0
        self.lock = asyncio.Lock()
        """Calls on one session take turns (a judge may send several in one answer)."""
        self.closed = False
        self.last_status: dict[int, int] = {}
        """The HTTP status of each tab's main document, by ``id(page)``."""
        self.summarise_pages = False
        """Whether long snapshots are summarised by the client's model (``mcp_servers.browser``
        sets it for a judge's server; replay never does)."""
        self.summaries: list[PageSummary] = []
        """Every summary shown, in order."""
        self.tabs_closed_by_cap = 0
        """Tabs a page opened past ``MAX_TABS`` (closed at once) since the last call reported
        them."""
        self.call_deadline = CALL_DEADLINE_SECONDS
        """Seconds one tool call on this session may take before it is cut off and the session
        recovers (``mcp_servers.browser``)."""
        self.memory_limits = "the browser's memory limits"
        """The memory limits its pages run under, named in a crashed page's error."""
        self.crashed: list[str] = []
        """Addresses of tabs whose renderer died (out of memory) since the last ``recover``."""

    @classmethod
    async def open(
        cls,
        context: BrowserContext,
        archive: PageArchive,
        new_context: Callable[[], Awaitable[BrowserContext]] | None = None,
    ) -> BrowserSession:
        """Route ``context`` to ``archive`` and open its first (blank) tab; ``new_context``
        makes a replacement context should a hung tab not close."""
        session = cls(context, archive, new_context)
        await session._attach(context)
        return session

    async def _attach(self, context: BrowserContext) -> None:
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        context.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
        await context.route("**/*", self._answer)
        await context.route_web_socket(lambda _url: True, self._refuse_socket)
        await context.add_init_script(OPEN_LIMIT)
        context.on("page", self._adopt)
        self._adopt(await context.new_page())  # also adopted by the event (once only)

    # -- routing -------------------------------------------------------------------------------

    async def _answer(self, route: Route) -> None:
        request = route.request
        url = request.url
        if urlsplit(url).scheme not in ("http", "https"):
            await route.abort("blockedbyclient")
            return
        captured = self.archive.lookup(url)
        if captured is None:
            self.traffic.refused.append(url)
            status, headers, body = not_archived_response(
                url, document=request.resource_type in _DOCUMENT_TYPES
            )
        else:
            self.traffic.served += 1
            status, body = captured.status, captured.body()
            headers = {**captured.headers, MISS_HEADER: "hit"}
        with contextlib.suppress(Exception):  # the page may be gone by now
            await route.fulfill(status=status, headers=headers, body=body)

    async def _refuse_socket(self, socket: WebSocketRoute) -> None:
        # Never connected to a server: the page sees a socket that closes at once.
        self.traffic.refused.append(socket.url)
        with contextlib.suppress(Exception):
            await socket.close(code=1008, reason="not in the archive")

    def _adopt(self, page: Page) -> None:
        if page in self.tabs or page.context is not self.context:
            return
        if len(self.tabs) >= MAX_TABS:
            # A page opened it (window.open): close it before it loads anything.
            self.tabs_closed_by_cap += 1
            asyncio.get_running_loop().create_task(close_quietly(page))
            return
        self.tabs.append(page)
        page.on("close", self._forget)
        page.on("dialog", self._dismiss)
        page.on("crash", self._note_crash)
        page.on("response", lambda response: self._note_status(page, response))

    def _note_crash(self, page: Page) -> None:
        self.crashed.append(page.url)

    def context_limit_pending(self) -> bool:
        """Whether the context's own memory cap ended one of its processes since
        ``context_limit`` last said so."""
        cap = context_cap(self.context)
        return cap is not None and cap.kills() > cap.reported

    def context_limit(self) -> str | None:
        """The context's own memory cap, named, when it ended one of the context's processes
        since the last time this said so; else None (no such kill, or no cap)."""
        return new_context_limit(self.context)

    def _note_status(self, page: Page, response: object) -> None:
        from playwright.async_api import Response

        if (
            isinstance(response, Response)
            and response.request.is_navigation_request()
            and response.frame == page.main_frame
        ):
            self.last_status[id(page)] = response.status

    def _forget(self, page: Page) -> None:
        if page in self.tabs:
            index = self.tabs.index(page)
            self.tabs.remove(page)
            if self.current >= index and self.current > 0:
                self.current -= 1

    @staticmethod
    def _dismiss(dialog: Dialog) -> None:
        asyncio.get_running_loop().create_task(dialog.dismiss())

    # -- tabs ----------------------------------------------------------------------------------

    @property
    def page(self) -> Page:
        """The current tab."""
        if not self.tabs:
            raise RuntimeError("the browser has no open tab")
        self.current = min(self.current, len(self.tabs) - 1)
        return self.tabs[self.current]

    async def new_tab(self) -> Page:
        """Open a blank tab and make it current; ``TabLimitError`` when ``MAX_TABS`` are open."""
        if len(self.tabs) >= MAX_TABS:
            raise TabLimitError(
                f"{len(self.tabs)} tabs are open, the most one browser may have (the tab cap, "
                f"{MAX_TABS}); close one first"
            )
        page = await self.context.new_page()
        self._adopt(page)
        self.current = self.tabs.index(page)
        return page

    def take_tab_note(self) -> str | None:
        """A note on tabs closed by the cap since the last note, or None."""
        closed, self.tabs_closed_by_cap = self.tabs_closed_by_cap, 0
        if not closed:
            return None
        return (
            f"the page tried to open more tabs than the tab cap allows ({MAX_TABS} per "
            f"browser): {closed} were closed at once, and its further window.open calls "
            "open nothing"
        )

    async def recover(self) -> list[str]:
        """Make the browser usable after a call ran out of time or a page crashed: close every
        tab that crashed or does not answer a trivial script within ``PROBE_SECONDS`` (a script
        that never yields), replacing the whole context when closing one fails; keep at least
        one tab. Returns what was done, one line each."""
        done: list[str] = []
        for page in list(self.tabs):
            if not await _answers(page):
                url = page.url
                if await close_quietly(page, CLOSE_SECONDS):
                    self._forget(page)
                    done.append(f"closed the tab at {url}: it stopped answering or crashed")
                else:
                    done.append(await self._replace_context(url))
                    break
        self.crashed.clear()
        if not self.tabs and not self.closed:
            await self.new_tab()
            done.append("opened a blank tab in its place")
        return done

    async def _replace_context(self, url: str) -> str:
        old = self.context
        self.tabs.clear()
        self.current = 0
        asyncio.get_running_loop().create_task(close_quietly(old, CLOSE_SECONDS))
        if self.new_context is None:
            self.closed = True
            return f"the tab at {url} could not be closed; the browser is closed"
        self.context = await self.new_context()
        await self._attach(self.context)
        return (
            f"the tab at {url} could not be closed: the browser context was replaced by a fresh "
            "one (its cookies and other tabs are gone)"
        )

    def status_of(self, page: Page) -> int | None:
        """The HTTP status of ``page``'s main document, when it came from a request."""
        return self.last_status.get(id(page))

    async def close(self) -> None:
        """Close the context and every tab. Safe to call twice."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.context.close(), 10)


async def _answers(page: Page) -> bool:
    """Whether ``page`` runs a trivial script within ``PROBE_SECONDS`` (a crashed or closed tab,
    or one whose script never yields, does not)."""
    if page.is_closed():
        return False
    try:
        await asyncio.wait_for(page.evaluate("1"), PROBE_SECONDS)
    except Exception:
        return False
    return True
