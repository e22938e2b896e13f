"""The postgres kind's hooks on an embedded cluster: replay calls, the exclusive-replay rule,
verifier inputs, judge servers per access mode, and closing the cluster with the provider."""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import mcp
import pytest
import pytest_asyncio

from dataset.actions import ToolCallAction
from dataset.models import Step, Trajectory
from dataset.store import load_dataset
from environments.backends import BackendChoice, ProviderSet
from environments.kind import JudgeServerOptions
from environments.postgres import KIND, as_postgres_sandbox
from mcp_servers.serving import ToolServer
from prompts.templates import load_template
from sandboxes.base import Snapshot
from sandboxes.postgres.embedded import EmbeddedPostgresCluster
from sandboxes.postgres.provider import ClusterPostgresProvider
from tests.sandboxes.postgres.helpers import write_task

module_loop = pytest.mark.asyncio(loop_scope="module")

MINI = Path(__file__).resolve().parents[3] / "datasets" / "examples" / "mini"
TASK_ID = "pg-active-customers-view"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def snapshot() -> AsyncIterator[Snapshot]:
    """The mini example's shop database, frozen, in an embedded cluster of its own."""
    mini = load_dataset(MINI)
    async with ProviderSet(BackendChoice()) as providers:
        provider = await providers.get("postgres")
        sandbox = await provider.create(mini.tasks[TASK_ID], mini.task_dir(TASK_ID))
        yield await sandbox.freeze()
    assert isinstance(provider, ClusterPostgresProvider)
    assert isinstance(provider.cluster, EmbeddedPostgresCluster)
    assert provider.cluster.pid is None  # closing the provider stopped its server


def _trajectory(*statements: str) -> Trajectory:
    return Trajectory(
        id="t",
        task_id=TASK_ID,
        agent="a",
        steps=[
            Step(index=index, action=ToolCallAction(name="execute_sql", arguments={"sql": sql}))
            for index, sql in enumerate(statements, start=1)
        ],
    )


def test_backends_from_the_command_line() -> None:
    assert list(KIND.backends) == ["embedded", "external", "docker"]
    assert KIND.backend_for("local") == "embedded"
    assert KIND.backend_for("docker") == "docker"
    # A DSN is an endpoint: it selects the external server whatever --backend says.
    dsn = "postgresql://u@h/db"
    assert BackendChoice.for_backend("docker", endpoints={"postgres": dsn}).label("postgres") == (
        "external"
    )
    assert KIND.serve_name == "sql"


def test_trajectories_that_may_manage_roles_replay_exclusively() -> None:
    assert KIND.replays_exclusively(_trajectory("SELECT 1", "CREATE ROLE auditor"))
    assert not KIND.replays_exclusively(_trajectory("SELECT status FROM customers GROUP BY 1"))
    assert KIND.tool_spec("execute_sql") is not None
    assert KIND.tool_spec("read_text_file") is None
    notes = KIND.prompt_notes(load_dataset(MINI).tasks[TASK_ID])
    assert notes is not None
    assert load_template(notes).template.strip()


@module_loop
async def test_calls_run_on_their_own_connection(snapshot: Snapshot) -> None:
    clone = await snapshot.clone(writable=True)
    async with clone:
        assert KIND.sandbox_root(clone) == ""
        made = await KIND.execute_call(clone, "execute_sql", {"sql": "CREATE TABLE t (x int)"})
        assert not made.is_error, made.text
        listed = await KIND.execute_call(
            clone, "execute_sql", {"sql": "SELECT count(*) AS n FROM t"}
        )
        assert "0" in listed.text


@module_loop
async def test_calls_run_as_the_sandbox_role_shown_as_the_administrator(
    snapshot: Snapshot,
) -> None:
    clone = as_postgres_sandbox(await snapshot.clone(writable=True))
    async with clone:
        role = (await clone.owner_connection()).user
        stand_ins = clone.stand_ins()
        assert role in stand_ins
        (administrator,) = set(stand_ins.values())
        assert administrator != role
        async with clone.connect() as connection:
            assert await connection.fetchval("SELECT current_user") == role
        # What names the roles standing in for the recorded administrator shows its name ...
        shown = await KIND.execute_call(
            clone,
            "execute_sql",
            {
                "sql": "SELECT current_user AS me, tableowner FROM pg_tables WHERE tablename ="
                " 'customers'"
            },
        )
        assert not shown.is_error, shown.text
        assert shown.text == f"[{{'me': '{administrator}', 'tableowner': '{administrator}'}}]"
        # ... and nothing else is touched: a name that merely contains one stays as it is.
        kept = await KIND.execute_call(
            clone, "execute_sql", {"sql": f"SELECT '{role}x' AS a, 'x{role}' AS b"}
        )
        assert kept.text == f"[{{'a': '{role}x', 'b': 'x{role}'}}]"


async def test_the_seed_timeout_reaches_the_provider() -> None:
    choice = BackendChoice.for_backend("local", options={"postgres": {"seed_timeout": "2.5"}})
    async with ProviderSet(choice) as providers:
        provider = await providers.get("postgres")
        assert isinstance(provider, ClusterPostgresProvider)
        assert provider.seed_timeout == 2.5
    async with ProviderSet(BackendChoice()) as providers:
        provider = await providers.get("postgres")
        assert isinstance(provider, ClusterPostgresProvider)
        assert provider.seed_timeout == 600


@module_loop
async def test_the_verifier_gets_the_database(snapshot: Snapshot) -> None:
    view = await snapshot.clone(writable=True)
    async with view, KIND.verifier_inputs(view) as inputs:
        sandbox = as_postgres_sandbox(view)
        database = sandbox.connection.database
        assert list(inputs.arguments) == [database]
        assert inputs.environment["POSTGRES_DATABASE"] == database
        assert database in inputs.environment["DATABASE_URL"]
        # The sandbox's own role, through a relay whose socket folder the box binds.
        assert inputs.environment["POSTGRES_USERNAME"] == (await sandbox.owner_connection()).user
        assert inputs.environment["POSTGRES_USERNAME"] != sandbox.connection.user
        (relay,) = inputs.read_only
        assert inputs.environment["POSTGRES_HOST"] == str(relay)
        assert (relay / f".s.PGSQL.{inputs.environment['POSTGRES_PORT']}").is_socket()
    assert not relay.exists()


@module_loop
async def test_the_verifier_may_act_as_the_plain_roles_of_its_database(
    tmp_path: Path,
) -> None:
    """Verifiers check a role's rights with SET ROLE: while the verifier runs, the sandbox's role
    may act as the plain roles the seed made and gave rights in its database, and never as a
    role with stronger attributes; afterwards, as before."""
    tag = secrets.token_hex(4)
    plain, strong, elsewhere = f"doctor_{tag}", f"boss_{tag}", f"stranger_{tag}"
    seed = (
        "CREATE TABLE customers (id integer);\nINSERT INTO customers VALUES (1);\n"
        f"CREATE ROLE {plain} NOLOGIN;\nGRANT SELECT ON customers TO {plain};\n"
        f"CREATE ROLE {strong} NOLOGIN CREATEROLE;\nGRANT SELECT ON customers TO {strong};\n"
        f"CREATE ROLE {elsewhere} NOLOGIN;\n"
    )
    task = write_task(tmp_path / "roles", seed, "roles")
    async with ProviderSet(BackendChoice()) as providers:
        provider = await providers.get("postgres")
        sandbox = as_postgres_sandbox(await provider.create(*task))

        async def may_act_as() -> dict[str, bool]:
            acting: dict[str, bool] = {}
            for role in (plain, strong, elsewhere):
                async with sandbox.connect_as_owner() as conn:
                    try:
                        async with conn.transaction():
                            await conn.execute(f"SET LOCAL ROLE {role}")
                        acting[role] = True
                    except asyncpg.PostgresError:
                        acting[role] = False
            return acting

        assert await may_act_as() == dict.fromkeys((plain, strong, elsewhere), False)
        async with KIND.verifier_inputs(sandbox):
            assert await may_act_as() == {plain: True, strong: False, elsewhere: False}
        assert await may_act_as() == dict.fromkeys((plain, strong, elsewhere), False)


async def _execute(server: ToolServer[object], sql: str) -> tuple[bool, str]:
    async with mcp.Client(server.server()) as client:
        result = await client.call_tool("execute_sql", {"sql": sql})
    return result.is_error, "".join(getattr(block, "text", "") for block in result.content)


@module_loop
async def test_judge_servers_per_access_mode(snapshot: Snapshot) -> None:
    view = await snapshot.clone(writable=False)
    async with KIND.judge_servers(view, JudgeServerOptions(writable=False)) as servers:
        (reader,) = servers
        assert "execute_sql" in reader.tools
        refused, text = await _execute(reader, "CREATE TABLE judge_note (x int)")
        assert refused, text
        _, rows = await _execute(reader, "SELECT count(*) AS n FROM customers")
        assert json.loads(rows)["row_count"] == 1
    clone = await snapshot.clone(writable=True)
    async with clone, KIND.judge_servers(clone, JudgeServerOptions(writable=True)) as servers:
        (writer,) = servers
        assert set(writer.tools) == set(reader.tools)
        refused, text = await _execute(writer, "CREATE TABLE judge_note (x int)")
        assert not refused, text


@module_loop
async def test_a_recorded_superuser_step_is_refused_with_its_reason(snapshot: Snapshot) -> None:
    """An agent that acted as the recording's superuser (``SET ROLE postgres``) is not replayed
    on a server this replay shares; nothing of the call runs."""
    clone = await snapshot.clone(writable=True)
    async with clone:
        refused = await KIND.execute_call(
            clone,
            "execute_sql",
            {"query": "SET ROLE postgres;\nCREATE TABLE escalated (x int);"},
        )
        assert refused.is_error
        assert refused.text.startswith("refused on replay")
        assert "(SET ROLE postgres)" in refused.text
        listed = await KIND.execute_call(
            clone,
            "execute_sql",
            {"sql": "SELECT count(*) AS n FROM pg_tables WHERE tablename = 'escalated'"},
        )
        assert listed.text == "[{'n': 0}]"


def test_superuser_switches_are_recognised() -> None:
    from sandboxes.postgres.roles import superuser_switch

    assert superuser_switch("set role postgres; select 1") == "set role postgres"
    assert superuser_switch('SET SESSION ROLE "postgres"') == 'SET SESSION ROLE "postgres"'
    assert superuser_switch("SET LOCAL ROLE supabase_admin") == "SET LOCAL ROLE supabase_admin"
    assert superuser_switch("SET SESSION AUTHORIZATION postgres") is not None
    assert superuser_switch("SET ROLE postgres_reader") is None
    assert superuser_switch("SET ROLE analytics_user") is None
    assert superuser_switch("RESET ROLE") is None
    assert superuser_switch("SELECT 'set role' AS text") is None
