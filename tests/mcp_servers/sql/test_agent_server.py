"""The agents' SQL server: one implementation's tools, answering as that server does."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from mcp import types

from dataset.models import SqlSeedState, Task
from mcp_servers.sql.agent_server import agent_sql_server
from mcp_servers.sql.agent_tools import INSFORGE, SERVER_TOOLS, SQL_TOOLS
from sandboxes.postgres.provider import ClusterPostgresProvider
from sandboxes.postgres.sandbox import PostgresSandbox

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module")
async def sandbox(
    provider: ClusterPostgresProvider, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[PostgresSandbox]:
    folder = tmp_path_factory.getbasetemp() / "agent-server-seed"
    folder.mkdir(exist_ok=True)
    (folder / "seed.sql").write_text("CREATE TABLE t (a int); INSERT INTO t VALUES (1), (2);")
    task = Task(
        id="agent-server",
        domain="ds",
        subdomain="postgres",
        instruction="-",
        initial_state=SqlSeedState(),
    )
    made = await provider.create(task, Path(folder))
    yield made
    await made.destroy()


def _text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def test_one_implementation_is_published_with_its_own_validation_errors(
    sandbox: PostgresSandbox,
) -> None:
    server = agent_sql_server(sandbox, INSFORGE)
    assert set(server.tools) == set(SERVER_TOOLS[INSFORGE])
    refused = await server.call("run-raw-sql", {})
    assert refused.is_error
    assert _text(refused).startswith(
        "Error: MCP error -32602: Invalid arguments for tool run-raw-sql: ["
    )
    answered = await server.call("run-raw-sql", {"query": "SELECT count(*) AS n FROM t"})
    assert not answered.is_error
    body = json.loads(_text(answered).split("\n", 1)[1])
    assert body["rows"] == [{"n": "2"}]
    unknown = await server.call("execute_sql", {"sql": "SELECT 1"})
    assert unknown.is_error
    assert "unknown tool" in _text(unknown)


async def test_by_default_every_name_is_published(sandbox: PostgresSandbox) -> None:
    server = agent_sql_server(sandbox)
    assert set(server.tools) == set(SQL_TOOLS)
    supabase = await server.call("execute_sql", {"query": "SELECT a FROM t ORDER BY a"})
    assert '[{\\"a\\":1},{\\"a\\":2}]' in _text(supabase)
    postgres_mcp = await server.call("execute_sql", {"sql": "SELECT a FROM t ORDER BY a"})
    assert _text(postgres_mcp) == "[{'a': 1}, {'a': 2}]"
