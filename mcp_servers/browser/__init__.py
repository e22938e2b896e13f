"""The browser MCP server: Playwright MCP's tools over a browser that reads a page archive.

``tools`` holds the tool table, ``server`` binds it to one ``BrowserSession``, and
``python -m mcp_servers.browser`` serves an archive over stdio.
"""

from mcp_servers.browser.server import SERVER_NAME, browser_server
from mcp_servers.browser.tools import BROWSER_TOOLS

__all__ = ["BROWSER_TOOLS", "SERVER_NAME", "browser_server"]
