"""The GUI MCP server: AJ-Bench's mouse-and-keyboard action set over one live desktop.

``server`` owns the tool table (``CLICK`` ... ``WAIT`` and ``OBSERVE``) and ``desktop_server``,
which binds it to a desktop reached through ``sandboxes.desktop.client.DesktopClient``;
``__main__`` serves it over stdio for any MCP client.
"""

from mcp_servers.desktop.server import (
    ACTION_TOOLS,
    OBSERVE_TOOL,
    SERVER_NAME,
    TOOLS,
    DesktopContext,
    desktop_server,
)

__all__ = [
    "ACTION_TOOLS",
    "OBSERVE_TOOL",
    "SERVER_NAME",
    "TOOLS",
    "DesktopContext",
    "desktop_server",
]
