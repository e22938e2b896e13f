"""The MCP server that exposes a sandbox to a judge, whatever the sandbox's kind.

A filesystem sandbox gets the filesystem server (without its writing tools unless the judge may
write), a Postgres sandbox the SQL server (``unrestricted`` on a writable clone, else
``read-only``); other kinds have no server yet. Used by the judge runner and by
``agentjudge serve``, so both hand out the same tool surface for the same access.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp_servers.serving import ToolServer
from sandboxes.base import Sandbox
from sandboxes.filesystem.sandbox import FilesystemSandbox
from sandboxes.postgres.sandbox import PostgresSandbox


@asynccontextmanager
async def environment_server(
    sandbox: Sandbox | None, *, writable: bool
) -> AsyncIterator[ToolServer[Any] | None]:
    """The server over ``sandbox`` (None for no sandbox or a kind without a server), closed
    when the block ends."""
    if isinstance(sandbox, FilesystemSandbox):
        from mcp_servers.filesystem.server import filesystem_server

        yield filesystem_server(sandbox.tree, read_only=not writable)
    elif isinstance(sandbox, PostgresSandbox):
        from mcp_servers.sql.judge_server import sql_server

        server = sql_server(sandbox, access="unrestricted" if writable else "read-only")
        try:
            yield server
        finally:
            await server.context.aclose()
    else:
        yield None
