"""Recorded superuser steps (``SET ROLE postgres``): replayed in a throwaway server of their own on
the docker backend, refused with the reason on the embedded one.

The recording is written as MCPMark's postgres-mcp answers (``str()`` of the last statement's
rows, ``../shared/reference.md`` §2) by an agent connected as the ``postgres`` superuser: what a
faithful replay must show again. The task's verifier checks the table the agent made as the
superuser, owned by ``postgres``, holds its row.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import docker
import pytest

from dataset.actions import ToolCallAction
from dataset.models import Label, Observation, Step, Task, Trajectory, VerifierRef
from environments.backends import BackendChoice, ProviderSet
from environments.postgres import KIND, as_postgres_sandbox
from replay.engine import replay_trajectory
from sandboxes.postgres.private import move_to_private_server
from sandboxes.postgres.provider import ClusterPostgresProvider, ClusterPostgresSandbox
from sandboxes.runs import RUN_LABEL, current_run
from tests.sandboxes.postgres.helpers import SHOP_SEED, write_task

VERIFY = """
import asyncio, os, sys
import asyncpg

async def main() -> bool:
    conn = await asyncpg.connect(
        host=os.environ["POSTGRES_HOST"], port=int(os.environ["POSTGRES_PORT"]),
        user=os.environ["POSTGRES_USERNAME"], password=os.environ["POSTGRES_PASSWORD"],
        database=os.environ["POSTGRES_DATABASE"],
    )
    owner = await conn.fetchval(
        "SELECT tableowner FROM pg_tables WHERE tablename = 'audit_log'")
    rows = await conn.fetchval("SELECT count(*) FROM audit_log") if owner else None
    print(f"owner={owner} rows={rows}")
    return owner == "postgres" and rows == 1

sys.exit(0 if asyncio.run(main()) else 1)
"""

ESCALATING = (
    "SET ROLE postgres;\n"
    "CREATE TABLE audit_log (id integer);\n"
    "INSERT INTO audit_log VALUES (1);\n"
    "SELECT count(*) AS n FROM pg_authid WHERE rolname = 'postgres' AND rolsuper"
)
"""Reads ``pg_authid``, which only a superuser may: the answer proves the switch took effect."""


def _task(tmp_path: Path, verifier: str = VERIFY) -> tuple[Task, Path]:
    task, folder = write_task(tmp_path / "shop", SHOP_SEED)
    (folder / "verify.py").write_text(textwrap.dedent(verifier))
    return task.model_copy(update={"verifier": VerifierRef(timeout_seconds=60)}), folder


def _step(index: int, sql: str, output: str, *, is_error: bool = False) -> Step:
    return Step(
        index=index,
        action=ToolCallAction(name="execute_sql", arguments={"sql": sql}),
        observation=Observation(text=output),
        is_error=is_error,
    )


def _trajectory(*extra: Step) -> Trajectory:
    return Trajectory(
        id="escalates",
        task_id="shop",
        agent="recorded",
        steps=[
            _step(1, "SELECT current_user AS me", "[{'me': 'postgres'}]"),
            _step(2, ESCALATING, "[{'n': 1}]"),
            _step(
                3,
                "SELECT tableowner FROM pg_tables WHERE tablename = 'audit_log'",
                "[{'tableowner': 'postgres'}]",
            ),
            *extra,
        ],
        label=Label(value="PASS", source="verifier"),
    )


def _private_containers() -> list[str]:
    client = docker.from_env()
    try:
        containers = client.containers.list(
            all=True, filters={"label": f"{RUN_LABEL}={current_run().run_id}"}
        )
        return [str(c.name) for c in containers if "_pgiso_" in str(c.name)]
    finally:
        client.close()


@pytest.mark.docker
async def test_a_superuser_step_replays_faithfully_in_a_server_of_its_own(
    tmp_path: Path,
) -> None:
    task, folder = _task(tmp_path)
    # Supabase's superuser, which the image lacks, is made in the private server.
    supabase = _step(
        4,
        "SET SESSION AUTHORIZATION supabase_admin;\nSELECT current_user AS me",
        "[{'me': 'supabase_admin'}]",
    )
    async with ProviderSet(BackendChoice.for_backend("docker")) as providers:
        result = await replay_trajectory(_trajectory(supabase), task, folder, providers)
        report = result.report
        assert [step.status for step in report.steps] == ["match"] * 4, report.problems
        assert report.verdict == "faithful"
        assert report.verifier is not None
        assert report.verifier.agrees, report.verifier
        assert "owner=postgres rows=1" in report.verifier.replayed.output
        # The throwaway server went with the sandbox.
        assert _private_containers() == []
        provider = await providers.get("postgres")
        assert isinstance(provider, ClusterPostgresProvider)
        assert provider.private_servers == set()


@pytest.mark.docker
async def test_the_private_server_goes_when_the_replay_errs(tmp_path: Path) -> None:
    """A failing step and a crashing verifier still leave no container behind."""
    task, folder = _task(tmp_path, verifier="raise RuntimeError('verifier broke')\n")
    broken = _step(4, "SET ROLE postgres; SELECT * FROM no_such_table", "[]")
    async with ProviderSet(BackendChoice.for_backend("docker")) as providers:
        result = await replay_trajectory(_trajectory(broken), task, folder, providers)
        assert result.report.steps[3].status == "diverged"
        assert result.report.verifier is not None
        assert result.report.verifier.replayed.errored
        assert _private_containers() == []


@pytest.mark.docker
async def test_closing_the_provider_removes_a_private_server_left_live(tmp_path: Path) -> None:
    """A replay killed mid-way (its sandbox never destroyed) leaves the server to the provider,
    which removes it when it closes."""
    task, folder = _task(tmp_path)
    async with ProviderSet(BackendChoice.for_backend("docker")) as providers:
        provider = await providers.get("postgres")
        sandbox = await provider.create(task, folder)
        assert isinstance(sandbox, ClusterPostgresSandbox)
        await move_to_private_server(sandbox, ["postgres"])
        assert sandbox.on_private_server
        assert len(_private_containers()) == 1
    assert _private_containers() == []


@pytest.mark.docker
async def test_the_judges_view_stays_read_only_in_the_private_server(tmp_path: Path) -> None:
    import asyncpg

    task, folder = _task(tmp_path)
    async with ProviderSet(BackendChoice.for_backend("docker")) as providers:
        result = await replay_trajectory(_trajectory(), task, folder, providers, keep=True)
        assert result.snapshot is not None
        view = as_postgres_sandbox(await result.snapshot.clone(writable=False))
        assert isinstance(view, ClusterPostgresSandbox)
        assert view.on_private_server, result.report.problems
        async with view.connect() as conn:
            assert await conn.fetchval("SELECT count(*) FROM audit_log") == 1
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await conn.execute("SET ROLE postgres")
            with pytest.raises(asyncpg.ReadOnlySQLTransactionError):
                await conn.execute("CREATE TABLE judge_note (x int)")
        # The judge's read-only SQL server refuses the recorded switch too.
        answer = await KIND.execute_call(view, "execute_sql", {"sql": ESCALATING})
        assert answer.is_error
        # A writable clone (a judge's own, or a verifier's) reaches what the agent made as
        # postgres, as the recorded superuser did.
        clone = as_postgres_sandbox(await result.snapshot.clone(writable=True))
        async with clone, clone.connect() as conn:
            assert await conn.fetchval("SELECT count(*) FROM audit_log") == 1
        assert len(_private_containers()) == 1
        await result.snapshot.destroy()
        assert _private_containers() == []


async def test_on_the_embedded_backend_the_step_is_refused_with_the_reason(
    tmp_path: Path,
) -> None:
    task, folder = _task(tmp_path)
    async with ProviderSet(BackendChoice.for_backend("local")) as providers:
        result = await replay_trajectory(_trajectory(), task, folder, providers)
    report = result.report
    assert [step.status for step in report.steps] == ["match", "failed", "diverged"]
    (refusal,) = [problem for problem in report.problems if "refused" in problem]
    assert "step 2" in refusal
    assert "SET ROLE postgres" in refusal
    assert "embedded backend" in refusal
    assert "--backend docker" in refusal
    # Not run: the table the superuser would have made does not exist.
    assert report.verifier is not None
    assert report.verifier.agrees is False
    assert "owner=None" in report.verifier.replayed.output


async def test_the_refuse_option_is_named_as_the_reason(tmp_path: Path) -> None:
    """``--kind-option postgres.superuser_steps=refuse`` never makes a private server, and the
    refusal says so (the check comes before any backend matters, so no Docker is needed)."""
    task, folder = _task(tmp_path)
    choice = BackendChoice.for_backend("local", options={"postgres": {"superuser_steps": "refuse"}})
    async with ProviderSet(choice) as providers:
        result = await replay_trajectory(_trajectory(), task, folder, providers, verify=False)
    (refusal,) = [problem for problem in result.report.problems if "refused" in problem]
    assert "superuser_steps is 'refuse'" in refusal
