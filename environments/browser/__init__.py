"""The browser kind: archived web pages in a headless Chromium, served by the browser MCP server.

Owns the kind's record (``kind.BrowserKind``, registered as ``browser``) and the typed accessor
``as_browser_sandbox``. The sandboxes are ``sandboxes.browser``'s and the tools
``mcp_servers.browser``'s; this package only ties them to the rest of the runtime.
"""

from environments.browser.kind import KIND, BrowserKind, as_browser_sandbox

__all__ = ["KIND", "BrowserKind", "as_browser_sandbox"]
