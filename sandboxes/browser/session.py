"""One user's browser: a Playwright context whose every request is answered from an archive.

Owns ``BrowserSession``: the context, its tabs (pages in opening order, one of them current),
the routing that answers requests from the ``PageArchive`` (and the "not in the archive" page
for the rest), the list of refused addresses, and a lock that makes calls on one session take
turns. What the tools do with a session (snapshots, clicks, typing) is
``mcp_servers.browser``'s; this module only holds the browser state and its walls.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from sandboxes.browser.archive import MISS_HEADER, PageArchive, not_archived_response

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Dialog, Page, Route, WebSocketRoute

NAVIGATION_TIMEOUT_MS = 15_000
"""How long a navigation may take (answers come from memory: only a broken page takes long)."""

ACTION_TIMEOUT_MS = 5_000
"""How long a click, a fill or a wait for an element may take."""

_DOCUMENT_TYPES = frozenset({"document", "iframe"})


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

    def __init__(self, context: BrowserContext, archive: PageArchive) -> None:
        self.context = context
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

    @classmethod
    async def open(cls, context: BrowserContext, archive: PageArchive) -> BrowserSession:
        """Route ``context`` to ``archive`` and open its first (blank) tab."""
        session = cls(context, archive)
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        context.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
        await context.route("**/*", session._answer)
        await context.route_web_socket(lambda _url: True, session._refuse_socket)
        context.on("page", session._adopt)
        session._adopt(await context.new_page())  # also adopted by the event (once only)
        return session

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
        if page in self.tabs:
            return
        self.tabs.append(page)
        page.on("close", self._forget)
        page.on("dialog", self._dismiss)
        page.on("response", lambda response: self._note_status(page, response))

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
        """Open a blank tab and make it current."""
        page = await self.context.new_page()
        self._adopt(page)
        self.current = self.tabs.index(page)
        return page

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
