"""The emulated servers answer the real MCPMark runs' calls as the real servers did.

Every call of every Chinook run in ``../shared/mcpmark-sample`` (postgres-mcp, Supabase and
InsForge) is re-executed in order on a fresh copy of the Chinook database, through the server
implementation the run used, and its answer compared with the recorded one (normalised as replay
normalises). The expectations are the recordings themselves.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from environments.postgres.comparison import normalise_sql_output
from mcp_servers.recorded import RecordedCall, replaying
from mcp_servers.sql.agent_tools import call_sql_tool, server_of
from mcp_servers.sql.statements import sql_text
from sandboxes.postgres.provider import ClusterPostgresProvider
from tests.mcp_servers.sql.mcpmark_sample import (
    RECORDED_COLLATIONS,
    SERVERS,
    as_trajectory,
    chinook_runs,
    chinook_task,
    needs_sample,
    recorded_calls,
    run_id,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), needs_sample]


@pytest.mark.parametrize("run", chinook_runs(), ids=run_id)
async def test_every_recorded_call_gets_the_recorded_answer(
    provider: ClusterPostgresProvider, tmp_path_factory: pytest.TempPathFactory, run: Path
) -> None:
    server = run.parent.parent.name
    calls = recorded_calls(run)
    task, folder = chinook_task(
        tmp_path_factory.getbasetemp() / "chinook", RECORDED_COLLATIONS[server]
    )
    trajectory = as_trajectory(run, calls, task.id)
    assert server_of(trajectory) == SERVERS[server]  # named by meta.json's "mcp"
    sandbox = await provider.create(task, folder)
    differing: dict[int, str] = {}
    try:
        for step, call in zip(trajectory.steps, calls, strict=True):
            with replaying(RecordedCall(trajectory, step)):
                async with sandbox.connect(sql_text(call.arguments) or None) as connection:
                    result = await call_sql_tool(connection, call.name, call.arguments)
            replayed = normalise_sql_output(result.text, tool=call.name, arguments=call.arguments)
            recorded = normalise_sql_output(call.text, tool=call.name, arguments=call.arguments)
            if replayed != recorded or result.is_error != call.failed:
                differing[step.index] = f"{call.name}: {replayed[:300]!r} != {recorded[:300]!r}"
    finally:
        await sandbox.destroy()
    assert differing == {}
    assert len(calls) > 10  # the runs are real work, not a handful of calls
