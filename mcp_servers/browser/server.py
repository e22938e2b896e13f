"""The browser MCP server: the browser tools bound to one ``BrowserSession``.

Owns the server's name, the instructions a client receives and the summarisation switch; the
tools are ``tools``', summaries ``summaries``', the protocol ``mcp_servers.serving``'s.
"""

from __future__ import annotations

from mcp_servers.browser.tools import BROWSER_TOOLS
from mcp_servers.serving import ToolServer
from sandboxes.browser.session import BrowserSession

SERVER_NAME = "browser"

INSTRUCTIONS = (
    "A web browser that reads a fixed archive of web pages ({pages} archived addresses) instead "
    "of the live web. Open pages with browser_navigate, read them with browser_snapshot, and act "
    "on elements by the [ref=eN] references of the latest snapshot. An address that was not "
    "captured shows a 'Not in the archive' page (HTTP 404): the page cannot be checked here, "
    "which is not the same as the page not existing."
)


def browser_server(
    session: BrowserSession, *, summarise_pages: bool = False
) -> ToolServer[BrowserSession]:
    """A server with the browser tools over ``session``; with ``summarise_pages``, long page
    snapshots are summarised by the client's model (``summaries``)."""
    session.summarise_pages = summarise_pages
    return ToolServer(
        SERVER_NAME,
        BROWSER_TOOLS,
        session,
        instructions=INSTRUCTIONS.format(pages=len(session.archive)),
        samples=summarise_pages,
    )
