"""The SQL tools exactly as agents saw them, served over a writable Postgres sandbox.

The judge-facing server (``judge_server``) answers in JSON with row caps and read-only guards;
agents recorded against ``postgres-mcp`` saw its unrestricted tools and its Python-repr output.
This server publishes those tools (``agent_tools.SQL_TOOLS``: the postgres-mcp names, plus the
Supabase and InsForge SQL tools) with that output, each call on a fresh session of the sandbox
as its sandbox role, committed on its own, the way replay re-executes them (and, like replay,
naming that role as the administrator it stands in for). Scripted agents of
the authored suites are recorded against it, so their observations are what replay will
reproduce. It is for writable sandboxes the runtime made for an agent, never for judges.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_servers.results import ToolResult, ToolSpec
from mcp_servers.serving import ToolServer
from mcp_servers.sql.agent_tools import SQL_TOOLS
from sandboxes.postgres.sandbox import PostgresSandbox

if TYPE_CHECKING:
    from sandboxes.postgres.sandbox import PostgresConnection

SERVER_NAME = "postgres"


def _on_sandbox(spec: ToolSpec[PostgresConnection]) -> ToolSpec[PostgresSandbox]:
    async def run(sandbox: PostgresSandbox, args: Any) -> ToolResult:
        statement = getattr(args, "sql", None) or getattr(args, "query", None)
        async with sandbox.connect(statement if isinstance(statement, str) else None) as conn:
            result = await spec.handler(conn, args)
        # As replay shows it: the sandbox's roles under the administrator's name.
        text = sandbox.as_administrator(result.text)
        return result if text == result.text else result.model_copy(update={"text": text})

    return ToolSpec(
        spec.name,
        spec.arguments,
        run,
        spec.writes,
        spec.description,
        destructive=spec.writes,
        idempotent=not spec.writes,
    )


def agent_sql_server(sandbox: PostgresSandbox) -> ToolServer[PostgresSandbox]:
    """The agents' SQL tools over ``sandbox`` (writable), with their recorded output format."""
    if sandbox.read_only:
        raise ValueError(f"{sandbox.name} is a read-only view: agents' tools write")
    tools = {name: _on_sandbox(spec) for name, spec in SQL_TOOLS.items()}
    return ToolServer(SERVER_NAME, tools, sandbox)
