"""Hostile seeds and hostile replayed SQL against every Postgres backend: the runtime's own
embedded cluster, a user's server the test starts itself (given as a DSN, once with its superuser
and once with a CREATEDB CREATEROLE role), and the Docker cluster.

Each test fingerprints the server through its real superuser before and after (databases, roles
with their attributes, passwords, memberships and settings, ``pg_file_settings``,
``postgresql.auto.conf``, non-default settings, the user's own database and table) and requires
it unchanged; files a hostile statement would write are watched; each refusal must name the seed
and the cause.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from dataset.models import SqlSeedState, Task
from environments.postgres.kind import KIND
from sandboxes.base import SandboxError
from sandboxes.postgres import admin
from sandboxes.postgres.embedded import EmbeddedPostgresCluster
from sandboxes.postgres.external import ExternalPostgresCluster
from sandboxes.postgres.provider import ClusterPostgresProvider, ClusterPostgresSandbox
from sandboxes.postgres.roles import CREATEROLE_WITHHELD
from sandboxes.postgres.sandbox import PostgresCluster, PostgresConnectionInfo
from sandboxes.runs import SHARED_MEMORY, current_run

REPOSITORY = Path(__file__).resolve().parents[2]

SHOP = """
CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL);
INSERT INTO customers VALUES (1, 'Ada'), (2, 'Bilal');
"""


@dataclass
class Server:
    """A server the runtime is pointed at, and how the test watches it."""

    name: str
    cluster: PostgresCluster
    """What the provider is given."""
    superuser: PostgresConnectionInfo
    """The server's own superuser, for fingerprints (never given to the runtime, except for
    the embedded cluster, which is the runtime's)."""
    unrelated: str
    """A database of the user's, with a table of theirs."""


def _run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


async def _execute(info: PostgresConnectionInfo, *statements: str) -> None:
    conn = await admin.connect(info)
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


async def _furnish(info: PostgresConnectionInfo, unrelated: str) -> None:
    """What a user's server holds that the runtime must not touch."""
    await _execute(
        info,
        f"CREATE DATABASE {admin.quote_ident(unrelated)}",
        f"CREATE ROLE userrole_{unrelated[-8:]} LOGIN PASSWORD 'user-secret' CONNECTION LIMIT 3",
    )
    await _execute(
        info.with_database(unrelated),
        "CREATE TABLE ledger (id integer PRIMARY KEY, amount numeric)",
        "INSERT INTO ledger SELECT g, g * 1.5 FROM generate_series(1, 50) g",
    )


async def _open_once(cluster: PostgresCluster) -> None:
    # A provider's first connection on a cluster of the runtime's own revokes the maintenance
    # databases from PUBLIC, once per cluster: done before any fingerprint.
    async with ClusterPostgresProvider(cluster) as provider, provider.admin_pool.connection():
        pass


@pytest.fixture(scope="module")
def own_embedded() -> Iterator[tuple[EmbeddedPostgresCluster, str]]:
    """The runtime's own embedded cluster, with a database standing for other work on it."""
    cluster = EmbeddedPostgresCluster(in_memory=SHARED_MEMORY.is_dir())
    _run(cluster.start())
    unrelated = f"unrelated_{secrets.token_hex(4)}"
    _run(_furnish(cluster.admin, unrelated))

    _run(_open_once(cluster))
    yield cluster, unrelated
    _run(cluster.stop())


@pytest.fixture(scope="module")
def user_server() -> Iterator[tuple[EmbeddedPostgresCluster, str, PostgresConnectionInfo]]:
    """A user's own server, started by the test: a password-protected superuser on a private
    socket, an unrelated database, a role of theirs, and a CREATEDB CREATEROLE role for the
    runtime (the weakest DSN the runtime supports)."""
    cluster = EmbeddedPostgresCluster(in_memory=SHARED_MEMORY.is_dir())
    _run(cluster.start())
    unrelated = f"userdb_{secrets.token_hex(4)}"
    _run(_furnish(cluster.admin, unrelated))
    delegate = cluster.admin.model_copy(
        update={"user": f"ajdsn_{secrets.token_hex(4)}", "password": secrets.token_hex(12)}
    )
    _run(
        _execute(
            cluster.admin,
            f"CREATE ROLE {delegate.user} LOGIN CREATEDB CREATEROLE"
            f" PASSWORD {admin.quote_literal(delegate.password)}",
        )
    )
    yield cluster, unrelated, delegate
    _run(cluster.stop())


@pytest.fixture(scope="module")
def docker_server() -> Iterator[tuple[PostgresCluster, str]]:
    """The Docker cluster (needs the Engine and the sandbox image)."""
    from sandboxes.docker.images import ensure_sandbox_image
    from sandboxes.postgres.docker_cluster import DockerPostgresCluster

    cluster = DockerPostgresCluster(ensure_sandbox_image())
    _run(cluster.start())
    unrelated = f"unrelated_{secrets.token_hex(4)}"
    _run(_furnish(cluster.admin, unrelated))
    _run(_open_once(cluster))
    yield cluster, unrelated
    _run(cluster.stop())


@pytest.fixture(
    params=[
        "embedded",
        "external-superuser",
        "external-createrole",
        pytest.param("docker", marks=pytest.mark.docker),
    ]
)
def server(request: pytest.FixtureRequest) -> Server:
    """Each backend in turn."""
    if request.param == "embedded":
        cluster, unrelated = request.getfixturevalue("own_embedded")
        return Server("embedded", cluster, cluster.admin, unrelated)
    if request.param == "docker":
        docker, unrelated = request.getfixturevalue("docker_server")
        return Server("docker", docker, docker.admin, unrelated)
    user, unrelated, delegate = request.getfixturevalue("user_server")
    dsn = user.admin if request.param == "external-superuser" else delegate
    external = ExternalPostgresCluster(dsn.dsn)
    _run(external.start())
    return Server(request.param, external, user.admin, unrelated)


async def fingerprint(server: Server, watched: list[Path] | None = None) -> dict[str, Any]:
    """Everything of the server a hostile seed or statement could change, as its superuser
    sees it."""
    conn = await admin.connect(server.superuser)
    try:
        queries = {
            "databases": "SELECT datname, pg_get_userbyid(datdba) AS owner, datistemplate,"
            " datallowconn, datconnlimit, datacl::text FROM pg_database ORDER BY 1",
            "roles": "SELECT rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb,"
            " rolcanlogin, rolreplication, rolbypassrls, rolconnlimit, rolpassword,"
            " rolvaliduntil::text FROM pg_authid ORDER BY 1",
            "memberships": "SELECT r.rolname AS role, m.rolname AS member, a.admin_option"
            " FROM pg_auth_members a JOIN pg_roles r ON r.oid = a.roleid"
            " JOIN pg_roles m ON m.oid = a.member ORDER BY 1, 2",
            "role settings": "SELECT setdatabase, setrole::regrole::text, setconfig::text"
            " FROM pg_db_role_setting ORDER BY 1, 2",
            "file settings": "SELECT sourcefile, sourceline, name, setting, applied, error"
            " FROM pg_file_settings ORDER BY 1, 2",
            "auto.conf": "SELECT pg_read_file('postgresql.auto.conf') AS content",
            "settings": "SELECT name, setting, source FROM pg_settings"
            " WHERE source NOT IN ('default', 'client', 'session') ORDER BY 1",
        }
        found: dict[str, Any] = {
            key: [tuple(row) for row in await conn.fetch(query)] for key, query in queries.items()
        }
    finally:
        await conn.close()
    found["ledger"] = [
        tuple(row)
        for row in await _fetch(
            server.superuser.with_database(server.unrelated),
            "SELECT count(*), sum(amount)::text FROM ledger",
        )
    ]
    found["files"] = {str(path): path.exists() for path in watched or []}
    return found


async def _fetch(info: PostgresConnectionInfo, sql: str) -> list[Any]:
    conn = await admin.connect(info)
    try:
        return list(await conn.fetch(sql))
    finally:
        await conn.close()


def write_task(folder: Path, seed: str, task_id: str) -> tuple[Task, Path]:
    """A postgres task seeded with ``seed``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "seed.sql").write_text(seed)
    return (
        Task(
            id=task_id,
            domain="ds",
            subdomain="postgres",
            instruction="Anything.",
            initial_state=SqlSeedState(),
        ),
        folder,
    )


@asynccontextmanager
async def provider_on(server: Server, **options: Any) -> AsyncIterator[ClusterPostgresProvider]:
    """A provider on the server that must leave no database or role of this run behind."""
    async with ClusterPostgresProvider(server.cluster, **options) as provider:
        yield provider
    leftovers = await _fetch(
        server.superuser,
        "SELECT datname AS name FROM pg_database WHERE datname LIKE '"
        + current_run().prefix
        + "%' UNION ALL SELECT rolname FROM pg_roles WHERE rolname LIKE '"
        + current_run().prefix
        + "%'",
    )
    assert leftovers == []


def watched_folder(tmp_path: Path) -> Path:
    """A folder any OS user may write (the server's included): a marker there is real."""
    folder = tmp_path / "watched"
    folder.mkdir()
    folder.chmod(0o777)
    tmp_path.chmod(0o755)
    return folder


HOSTILE_SEEDS: list[Any] = [
    pytest.param(
        "CREATE TABLE t (a integer);\n\\! touch {marker}\n",
        r"line 2: psql meta-command \\! is not allowed",
        id="shell-meta-command",
    ),
    pytest.param(
        "COPY (SELECT 1) TO PROGRAM 'touch {marker}';\n",
        r"failed at line 1: .*COPY to or from an external program",
        id="copy-to-program",
    ),
    pytest.param(
        "ALTER SYSTEM SET work_mem = '1GB';\n",
        r"failed at line 1: (permission denied to set parameter|must be superuser)",
        id="alter-system",
    ),
    pytest.param(
        "SELECT pg_read_file('/etc/passwd');\n",
        r"failed at line 1: permission denied for function pg_read_file",
        id="read-file",
    ),
    pytest.param(
        "SELECT lo_export(lo_import('/etc/passwd'), '{marker}');\n",
        r"failed at line 1: permission denied for function lo_(import|export)",
        id="large-object-files",
    ),
    pytest.param(
        'DROP DATABASE "{unrelated}";\n',
        r"failed at line 1: must be owner of database",
        id="drop-other-database",
    ),
    pytest.param(
        "ALTER ROLE \"{dsn_role}\" PASSWORD 'pwned';\n",
        r"failed at line 1: (permission denied to alter role|must be superuser)",
        id="alter-dsn-role",
    ),
    pytest.param(
        "ALTER ROLE \"{dsn_role}\" SET work_mem = '1GB';\n",
        r"failed at line 1: (permission denied to alter role|must be superuser|permission denied)",
        id="alter-dsn-role-settings",
    ),
    pytest.param(
        "ALTER ROLE ALL SET search_path = nowhere;\n",
        r"failed at line 1: (permission denied|must be superuser)",
        id="alter-every-role",
    ),
    pytest.param(
        "CREATE ROLE evil_{token} SUPERUSER;\n",
        r"failed at line 1: (permission denied to create role|must be superuser)",
        id="create-superuser",
    ),
    pytest.param(
        "GRANT pg_execute_server_program TO CURRENT_USER;\n",
        r"failed at line 1: (permission denied to grant role|must have admin option)",
        id="grant-server-program",
    ),
    pytest.param(
        'SET SESSION AUTHORIZATION "{dsn_role}";\n',
        r"failed at line 1: permission denied to set session authorization",
        id="session-authorization",
    ),
]


@pytest.mark.parametrize(("seed", "cause"), HOSTILE_SEEDS)
async def test_a_hostile_seed_is_refused_and_the_server_is_unchanged(
    server: Server, tmp_path: Path, seed: str, cause: str
) -> None:
    marker = watched_folder(tmp_path) / "x"
    text = seed.format(
        marker=marker,
        unrelated=server.unrelated,
        dsn_role=server.cluster.admin.user,
        token=secrets.token_hex(4),
    )
    task, folder = write_task(tmp_path / "hostile", text, "hostile")
    before = await fingerprint(server, [marker])
    async with provider_on(server) as provider:
        with pytest.raises(SandboxError) as caught:
            await provider.create(task, folder)
        message = str(caught.value)
        assert message.startswith(f"task hostile: seed {folder / 'seed.sql'}")
        assert re.search(cause, message), message
        # The runtime goes on: an honest task still seeds.
        honest = await provider.create(*write_task(tmp_path / "honest", SHOP, "honest"))
        async with honest.connect() as conn:
            assert await conn.fetchval("SELECT count(*) FROM customers") == 2
    assert await fingerprint(server, [marker]) == before
    assert not marker.exists()


async def test_seed_settings_do_not_leak_into_other_seeds_or_sandboxes(
    server: Server, tmp_path: Path
) -> None:
    changer = (
        "SET search_path = nowhere;\n"
        "SELECT set_config('search_path', 'nowhere', false);\n"
        "SELECT pg_catalog.set_config('statement_timeout', '4321s', false);\n"
        "ALTER ROLE CURRENT_USER SET search_path = nowhere;\n"
        "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET search_path = nowhere',"
        " current_database()); END $$;\n"
        "CREATE TABLE public.marked (a integer);\n"
    )
    plain = "CREATE TABLE plain (a integer);\nINSERT INTO plain VALUES (1);\n"
    before = await fingerprint(server)
    async with provider_on(server) as provider:
        changed = await provider.create(*write_task(tmp_path / "a", changer, "changer"))
        # Seeded after, and alongside, the seed that changed its settings: unqualified names
        # still land in public.
        after_it, *alongside = await asyncio.gather(
            provider.create(*write_task(tmp_path / "b", plain, "plain")),
            provider.create(*write_task(tmp_path / "c", plain, "plain-too")),
            provider.create(*write_task(tmp_path / "a", changer, "changer")),
        )
        for sandbox in (changed, after_it, *alongside):
            async with sandbox.connect() as conn:
                assert await conn.fetchval("SHOW search_path") == '"$user", public'
                assert await conn.fetchval("SHOW statement_timeout") == "0"
        async with after_it.connect() as conn:
            assert await conn.fetchval("SELECT count(*) FROM plain") == 1
        # A replayed ALTER ROLE of a sandbox's own role stays with that role.
        result = await KIND.execute_call(
            changed, "execute_sql", {"sql": "ALTER ROLE CURRENT_USER SET search_path = nowhere"}
        )
        assert not result.is_error, result.text
        # (role settings apply from the role's next login)
        role_of_changed = await changed.owner_connection()
        assert await _fetch(role_of_changed, "SHOW search_path") == [("nowhere",)]
        assert await _fetch(await after_it.owner_connection(), "SHOW search_path") == [
            ('"$user", public',)
        ]
        async with after_it.connect() as conn:
            assert await conn.fetchval("SHOW search_path") == '"$user", public'
        async with provider.admin_pool.connection() as conn:
            assert await conn.fetchval("SHOW search_path") == '"$user", public'
    assert await fingerprint(server) == before


async def test_a_hanging_seed_fails_its_task_once_quickly_and_leaves_nothing_running(
    server: Server, tmp_path: Path
) -> None:
    task, folder = write_task(
        tmp_path / "slow", "CREATE TABLE t (a integer);\nSELECT pg_sleep(600);\n", "slow"
    )
    before = await fingerprint(server)
    async with provider_on(server, seed_timeout=1.5) as provider:
        started = time.monotonic()
        outcomes = await asyncio.gather(
            *(provider.create(task, folder) for _ in range(5)), return_exceptions=True
        )
        elapsed = time.monotonic() - started
        assert {type(outcome) for outcome in outcomes} == {SandboxError}
        assert {str(outcome) for outcome in outcomes} == {
            f"task slow: seed {folder / 'seed.sql'} did not finish within 1.5 s"
            " (at the statement of line 2)"
        }
        assert elapsed < 15, elapsed
        started = time.monotonic()
        with pytest.raises(SandboxError, match=r"did not finish within 1\.5 s"):
            await provider.create(task, folder)
        assert time.monotonic() - started < 0.5  # said again, not run again
        sleeping = await _fetch(
            server.superuser,
            "SELECT pid FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600)%'"
            " AND pid <> pg_backend_pid()",
        )
        assert sleeping == []
    assert await fingerprint(server) == before


REPLAYED_ATTACKS: list[Any] = [
    pytest.param("COPY (SELECT 1) TO PROGRAM 'touch {marker}'", "external program", id="program"),
    pytest.param("ALTER SYSTEM SET work_mem = '1GB'", "permission denied|superuser", id="system"),
    pytest.param("SELECT pg_read_file('/etc/passwd')", "permission denied", id="read-file"),
    pytest.param('DROP DATABASE "{unrelated}"', "must be owner", id="drop-database"),
    pytest.param(
        "ALTER ROLE \"{dsn_role}\" PASSWORD 'pwned'", "permission denied|superuser", id="alter"
    ),
    pytest.param("CREATE ROLE evil_{token} SUPERUSER", "permission denied|superuser", id="super"),
    pytest.param(
        "GRANT pg_execute_server_program TO CURRENT_USER",
        "permission denied|must have admin option",
        id="grant",
    ),
    pytest.param('SET ROLE "{dsn_role}"', "permission denied", id="set-role"),
    pytest.param("CREATE DATABASE evil_{token}", "permission denied", id="create-database"),
    pytest.param("ALTER ROLE CURRENT_USER BYPASSRLS", "permission denied|superuser", id="bypass"),
]


@pytest.mark.parametrize(("statement", "cause"), REPLAYED_ATTACKS)
async def test_replayed_sql_runs_as_the_sandbox_role_and_is_refused_too(
    server: Server, tmp_path: Path, statement: str, cause: str
) -> None:
    marker = watched_folder(tmp_path) / "y"
    sql = statement.format(
        marker=marker,
        unrelated=server.unrelated,
        dsn_role=server.cluster.admin.user,
        token=secrets.token_hex(4),
    )
    before = await fingerprint(server, [marker])
    async with provider_on(server) as provider:
        sandbox = await provider.create(*write_task(tmp_path / "shop", SHOP, "shop"))
        result = await KIND.execute_call(sandbox, "execute_sql", {"sql": sql})
        assert result.is_error, result.text
        # The tool runs its SQL in a transaction, where some statements stop earlier; on its own,
        # on the connection replayed calls use, each meets the role's wall.
        async with sandbox.connect(sql) as conn:
            with pytest.raises(asyncpg.PostgresError, match=cause):
                await conn.execute(sql)
        info = await sandbox.owner_connection()
        assert info.user != server.cluster.admin.user
        assert info.password not in (server.cluster.admin.password, server.superuser.password)
    assert await fingerprint(server, [marker]) == before
    assert not marker.exists()


async def test_ordinary_mcpmark_actions_replay_as_the_sandbox_role(
    server: Server, tmp_path: Path
) -> None:
    analyst = f"analyst_{secrets.token_hex(4)}"
    actions = [
        f"CREATE ROLE {analyst} LOGIN PASSWORD 'analyst-pw'",
        "CREATE TABLE reports (id serial PRIMARY KEY, body text NOT NULL)",
        "INSERT INTO reports (body) VALUES ('q1'), ('q2')",
        f"GRANT SELECT ON reports, customers TO {analyst}",
        # Sandbox databases are closed to PUBLIC; their role may open them to roles it made.
        "DO $$ BEGIN EXECUTE format('GRANT CONNECT ON DATABASE %I TO "
        + analyst
        + "', current_database()); END $$",
        "ALTER TABLE customers ENABLE ROW LEVEL SECURITY",
        f"CREATE POLICY only_ada ON customers FOR SELECT TO {analyst} USING (name = 'Ada')",
        f"SET ROLE {analyst}; SELECT count(*) AS n FROM customers",
        "CREATE SCHEMA audit; CREATE TABLE audit.log (at timestamptz DEFAULT now())",
        "SELECT schema_owner FROM information_schema.schemata WHERE schema_name = 'audit'",
        "SELECT current_user AS me",
    ]
    before = await fingerprint(server)
    async with provider_on(server) as provider:
        sandbox = await provider.create(*write_task(tmp_path / "shop", SHOP, "shop"))
        assert isinstance(sandbox, ClusterPostgresSandbox)
        results = [await KIND.execute_call(sandbox, "execute_sql", {"sql": sql}) for sql in actions]
        if provider.version < 160000:
            # No CREATEROLE before 16: the refusal says why; the rest still replays.
            assert results[0].is_error
            assert CREATEROLE_WITHHELD in results[0].text
            assert [result.is_error for result in results[1:5]] == [False, False, True, True]
            return
        assert [result.is_error for result in results] == [False] * len(actions), [
            result.text for result in results
        ]
        assert "'n': 1" in results[7].text  # the policy holds for the role the agent made
        # The sandbox role stands in for the administrator the agent was recorded as.
        administrator = server.cluster.admin.user
        assert f"'schema_owner': '{administrator}'" in results[9].text
        assert f"'me': '{administrator}'" in results[10].text
        async with sandbox.connect() as conn:
            assert await conn.fetchval("SELECT current_user") == sandbox.role.user
        # A verifier, given the sandbox role, reads the result; the analyst logs in too.
        info = await sandbox.owner_connection()
        assert await _fetch(info, "SELECT count(*) AS n FROM reports") == [(2,)]
        as_analyst = info.model_copy(update={"user": analyst, "password": "analyst-pw"})
        assert await _fetch(as_analyst, "SELECT count(*) AS n FROM customers") == [(1,)]
        # The sandbox role reaches no other database of the runtime's.
        other = await provider.create(*write_task(tmp_path / "other", SHOP, "other"))
        with pytest.raises(asyncpg.PostgresError):
            await _fetch(info.with_database(other.name), "SELECT 1")
        # On a user's server, it gets into a database open to PUBLIC as PUBLIC would, and can
        # change nothing there.
        if server.name.startswith("external"):
            with pytest.raises(asyncpg.PostgresError, match="permission denied"):
                await _execute(
                    info.with_database(server.unrelated), "CREATE TABLE public.intruder (a int)"
                )
            with pytest.raises(asyncpg.PostgresError, match="permission denied"):
                await _fetch(info.with_database(server.unrelated), "SELECT * FROM ledger")
    assert await fingerprint(server) == before


@pytest.mark.docker
async def test_the_docker_cluster_needs_its_password_and_listens_on_loopback_only(
    docker_server: tuple[PostgresCluster, str],
) -> None:
    cluster, _ = docker_server
    info = cluster.admin
    assert info.host == "127.0.0.1"
    container = cluster.container  # type: ignore[attr-defined]
    container.reload()
    bindings = container.attrs["NetworkSettings"]["Ports"]["5432/tcp"]
    assert {binding["HostIp"] for binding in bindings} == {"127.0.0.1"}
    for wrong in ("", "wrong"):
        with pytest.raises(asyncpg.InvalidPasswordError):
            await _fetch(info.model_copy(update={"password": wrong}), "SELECT 1")


def test_the_cli_seed_timeout_fails_every_trajectory_of_the_task_at_once(tmp_path: Path) -> None:
    """``agentjudge replay --seed-timeout`` reaches the provider: one message for the task."""
    from tests.replay.builders import PG_TASK, build_dataset, steps, trajectory

    runs = [
        trajectory(
            f"slow-{number}",
            PG_TASK,
            steps(("execute_sql", {"sql": "SELECT 1 AS one"}, "[{'one': 1}]")),
        )
        for number in range(3)
    ]
    dataset = build_dataset(tmp_path / "slow", runs, (PG_TASK,))
    (dataset / "tasks" / PG_TASK / "seed.sql").write_text("SELECT pg_sleep(600);\n")
    output = tmp_path / "out"
    started = time.monotonic()
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentjudge",
            "replay",
            str(dataset),
            "--seed-timeout",
            "1",
            "--output",
            str(output),
        ],
        cwd=REPOSITORY,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    elapsed = time.monotonic() - started
    assert completed.returncode == 1, completed.stdout + completed.stderr
    reports = [json.loads(line) for line in (output / "fidelity.jsonl").read_text().splitlines()]
    assert len(reports) == 3
    assert {report["verdict"] for report in reports} == {"failed"}
    problems = {tuple(report["problems"]) for report in reports}
    assert len(problems) == 1, problems  # one message for the task
    (only,) = problems
    assert len(only) == 1
    assert "seed.sql did not finish within 1 s" in only[0]
    assert elapsed < 120, elapsed
