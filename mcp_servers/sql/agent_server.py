"""The SQL tools exactly as agents saw them, served over a writable Postgres sandbox.

The judge-facing server (``judge_server``) answers in JSON with row caps and read-only guards;
agents recorded against ``postgres-mcp``, Supabase or InsForge saw those servers' unrestricted
tools and their output. This server publishes them (``agent_tools``: one server
implementation's tool set, or by default every name at once, ``execute_sql`` choosing its
server by argument name), each call on a fresh session of the sandbox as its sandbox role,
committed on its own, the way replay re-executes them (and, like replay, naming that role as the
administrator it stands in for). Arguments that do not fit a tool are answered as that server
answers them (its own validation error text), not refused by the MCP layer. Scripted agents of
the authored suites are recorded against it, so their observations are what replay will
reproduce. It is for writable sandboxes the runtime made for an agent, never for judges.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp import types

from mcp_servers.results import ToolResult, ToolSpec
from mcp_servers.serving import ToolServer
from mcp_servers.sql.agent_tools import SERVER_TOOLS, SQL_TOOLS, call_sql_tool
from mcp_servers.sql.statements import sql_text
from sandboxes.postgres.sandbox import PostgresSandbox

if TYPE_CHECKING:
    from sandboxes.postgres.sandbox import PostgresConnection

SERVER_NAME = "postgres"

logger = logging.getLogger(__name__)


def _as_administrator(sandbox: PostgresSandbox, result: ToolResult) -> ToolResult:
    # As replay shows it: the sandbox's roles under the administrator's name.
    text = sandbox.as_administrator(result.text)
    return result if text == result.text else result.model_copy(update={"text": text})


def _on_sandbox(spec: ToolSpec[PostgresConnection]) -> ToolSpec[PostgresSandbox]:
    async def run(sandbox: PostgresSandbox, args: Any) -> ToolResult:
        statement = getattr(args, "sql", None) or getattr(args, "query", None)
        async with sandbox.connect(statement if isinstance(statement, str) else None) as conn:
            result = await spec.handler(conn, args)
        return _as_administrator(sandbox, result)

    return ToolSpec(
        spec.name,
        spec.arguments,
        run,
        spec.writes,
        spec.description,
        destructive=spec.writes,
        idempotent=not spec.writes,
    )


class AgentSqlServer(ToolServer[PostgresSandbox]):
    """The tools of one server implementation (or all of them) over a writable sandbox."""

    def __init__(self, sandbox: PostgresSandbox, server: str | None = None) -> None:
        tools = SERVER_TOOLS[server] if server is not None else SQL_TOOLS
        super().__init__(
            SERVER_NAME, {name: _on_sandbox(spec) for name, spec in tools.items()}, sandbox
        )
        self.implementation = server
        """The server implementation published (None: every name)."""

    async def call(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        """A known tool with object arguments runs as its server runs it (validation errors
        included); anything else is answered by ``ToolServer``."""
        if name not in self.tools or not isinstance(arguments or {}, Mapping):
            return await super().call(name, arguments)
        given = dict(arguments or {})

        async def work() -> ToolResult:
            async with self.context.connect(sql_text(given) or None) as connection:
                result = await call_sql_tool(connection, name, given, server=self.implementation)
            return _as_administrator(self.context, result)

        return await self.answer(name, work())


def agent_sql_server(sandbox: PostgresSandbox, server: str | None = None) -> AgentSqlServer:
    """The agents' SQL tools over ``sandbox`` (writable), with their recorded output format:
    ``server`` (``agent_tools.POSTGRES_MCP``, ``SUPABASE``, ``INSFORGE``) publishes that
    implementation's tools only; None publishes every name."""
    if sandbox.read_only:
        raise ValueError(f"{sandbox.name} is a read-only view: agents' tools write")
    return AgentSqlServer(sandbox, server)
