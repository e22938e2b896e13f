"""Hostile judge calls on the SQL server: each stopped with an error naming the cause, and
nothing else changed.

The calls go through real MCP client sessions, to the in-memory server on an embedded Postgres
sandbox and to ``python -m mcp_servers.sql`` over stdio. Around each attack, fingerprints of the
cluster (roles, databases, settings, configuration files) and of the database (data, routines,
large objects), read through an administrative connection, must not change; no file may appear
where the attack aimed one; no secret (``/etc/passwd``'s first line) may show in an answer; no
statement of the judge's role may still be running on the server a second or two after its
call ended; no server process may outlive its client.

Covered: read-only statement checks on PostgreSQL's parse (file, large-object, dblink, COPY,
settings and dynamic-SQL calls, however spelled or nested); superuser DSNs refused unless
``--allow-superuser``, and the checks holding even then; time limits lifted from inside a
function and cancelled on the server by the watchdog; answers capped in bytes while they are
read (measured as bytes this process read from its sockets); the size quota of writable clones.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp
import psutil
import pytest
import pytest_asyncio

from mcp_servers.serving import ToolServer
from mcp_servers.sql.judge_server import sql_server
from sandboxes.postgres import admin
from sandboxes.postgres.embedded import EmbeddedPostgresCluster
from sandboxes.postgres.provider import ClusterPostgresProvider, ClusterPostgresSnapshot
from sandboxes.postgres.roles import TEMP_FILE_LIMIT
from sandboxes.postgres.sandbox import PostgresCluster, PostgresConnectionInfo, PostgresSandbox
from sandboxes.runs import SHARED_MEMORY, current_run
from tests.sandboxes.postgres.helpers import fetch, write_task

pytestmark = pytest.mark.asyncio(loop_scope="module")

REPOSITORY = Path(__file__).resolve().parents[2]

SEED = """
CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL);
INSERT INTO customers VALUES (1, 'Ada'), (2, 'Bilal'), (3, 'Chen');
-- shipped with the dataset: lifts the time limit of the statements that follow it
CREATE FUNCTION relax_limits() RETURNS void LANGUAGE plpgsql
    AS $$ BEGIN PERFORM set_config('statement_timeout', '0', true); END $$;
"""

TIMEOUT = 1.0
SETTLED = 2.0
"""Seconds the server gets to show a stopped call's statement gone."""

PASSWD_LINE = Path("/etc/passwd").read_text().splitlines()[0]


# --- fixtures -------------------------------------------------------------------------------


@pytest_asyncio.fixture(
    scope="module",
    loop_scope="module",
    params=["embedded", pytest.param("docker", marks=pytest.mark.docker)],
)
async def cluster(request: pytest.FixtureRequest) -> AsyncIterator[PostgresCluster]:
    """The runtime's embedded cluster, then the Docker one (the judges' walls are Postgres's)."""
    made: PostgresCluster
    if request.param == "docker":
        from sandboxes.docker.images import ensure_sandbox_image_async
        from sandboxes.postgres.docker_cluster import DockerPostgresCluster

        made = DockerPostgresCluster(await ensure_sandbox_image_async())
    else:
        made = EmbeddedPostgresCluster(in_memory=SHARED_MEMORY.is_dir())
    await made.start()
    yield made
    await made.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def snapshot(
    cluster: PostgresCluster, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[ClusterPostgresSnapshot]:
    provider = ClusterPostgresProvider(cluster)
    task = write_task(tmp_path_factory.mktemp("sql-judges") / "shop", SEED)
    sandbox = await provider.create(*task)
    yield await sandbox.freeze()
    await provider.aclose()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def view(snapshot: ClusterPostgresSnapshot) -> PostgresSandbox:
    return await snapshot.clone(writable=False)


@pytest_asyncio.fixture(loop_scope="module")
async def clone(snapshot: ClusterPostgresSnapshot) -> AsyncIterator[PostgresSandbox]:
    made = await snapshot.clone()
    yield made
    await made.destroy()


@pytest.fixture
def marker() -> Path:
    """A file that attacks try to create."""
    path = Path("/tmp") / f"aj_sql_judge_{secrets.token_hex(6)}"
    assert not path.exists()
    return path


# --- what must not change -------------------------------------------------------------------


async def cluster_state(cluster: PostgresCluster) -> dict[str, Any]:
    """Roles, databases, per-role settings and configuration files of the cluster."""
    queries = {
        "roles": "SELECT rolname, rolsuper, rolcreaterole, rolcreatedb, rolcanlogin, rolbypassrls,"
        " ARRAY(SELECT b.rolname FROM pg_auth_members m JOIN pg_roles b ON b.oid = m.roleid"
        " WHERE m.member = r.oid ORDER BY 1)::text FROM pg_roles r ORDER BY 1",
        "databases": "SELECT datname, pg_get_userbyid(datdba), datistemplate, datallowconn,"
        " datacl::text FROM pg_database ORDER BY 1",
        "role_settings": "SELECT setdatabase, setrole, setconfig::text FROM pg_db_role_setting"
        " ORDER BY 1, 2",
        "files": "SELECT sourcefile, name, setting FROM pg_file_settings ORDER BY 1, 2",
    }
    return {
        key: [tuple(row) for row in await fetch(cluster.admin, sql)] for key, sql in queries.items()
    }


async def database_state(cluster: PostgresCluster, sandbox: PostgresSandbox) -> Any:
    """The sandbox's data, routines and large objects."""
    rows = await fetch(
        cluster.admin.with_database(sandbox.name),
        "SELECT (SELECT string_agg(c::text, '|' ORDER BY c.id) FROM customers c),"
        " (SELECT string_agg(p.oid::regprocedure::text || md5(p.prosrc), '|' ORDER BY 1)"
        "  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        "  WHERE n.nspname = 'public'),"
        " (SELECT count(*) FROM pg_largeobject_metadata)",
    )
    return tuple(rows[0])


async def active_statements(cluster: PostgresCluster, role: str) -> list[str]:
    """The statements sessions of ``role`` are running now."""
    rows = await fetch(
        cluster.admin,
        "SELECT query FROM pg_stat_activity WHERE usename = $1 AND state = 'active'",
        role,
    )
    return [row["query"] for row in rows]


async def settled(cluster: PostgresCluster, role: str) -> list[str]:
    """The statements of ``role`` still running once the server had ``SETTLED`` seconds."""
    until = time.monotonic() + SETTLED
    while (running := await active_statements(cluster, role)) and time.monotonic() < until:
        await asyncio.sleep(0.05)
    return running


def bytes_read() -> int:
    """Bytes this process has read so far (files and sockets alike)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("/proc/self/io has no rchar line")


async def call(server: ToolServer[Any], tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    async with mcp.Client(server.server()) as client:
        result = await client.call_tool(tool, arguments)
    text = "\n".join(
        block.text for block in result.content if isinstance(block, mcp.types.TextContent)
    )
    return bool(result.is_error), text


# --- read-only: the statement checks --------------------------------------------------------

PARSE_REFUSALS: list[Any] = [
    pytest.param("SELECT pg_read_file('/etc/passwd')", "pg_read_file()", id="read-file"),
    pytest.param(
        "SELECT pg_catalog.\"pg_read_file\"('/etc/passwd')", "pg_read_file()", id="quoted"
    ),
    pytest.param("SELECT ('/etc/passwd'::text).pg_read_file", "pg_read_file()", id="attribute"),
    pytest.param(
        "WITH f AS (SELECT pg_read_binary_file('/etc/passwd') AS b) SELECT * FROM f",
        "pg_read_binary_file()",
        id="in-cte",
    ),
    pytest.param(
        "SELECT * FROM customers WHERE name IN (SELECT pg_ls_dir('/'))",
        "pg_ls_dir()",
        id="in-subquery",
    ),
    pytest.param("SELECT 1 UNION ALL SELECT length(lo_get(1))", "lo_get()", id="in-union"),
    pytest.param("SELECT lo_import('/etc/passwd')", "lo_import()", id="lo-import"),
    pytest.param("SELECT lo_export(lo_create(0), '{marker}')", "lo_export()", id="lo-export"),
    pytest.param(
        "SELECT * FROM dblink('dbname=postgres', 'SELECT rolpassword FROM pg_authid') AS t(p text)",
        "dblink()",
        id="dblink",
    ),
    pytest.param("COPY customers TO PROGRAM 'touch {marker}'", "COPY", id="copy-to-program"),
    pytest.param("COPY (SELECT 1) TO '{marker}'", "COPY", id="copy-to-file"),
    pytest.param(
        "SELECT set_config('statement_timeout', '0', false); SELECT pg_sleep(30)",
        "set_config()",
        id="set-config",
    ),
    pytest.param("SET statement_timeout = 0; SELECT pg_sleep(30)", "statement_timeout", id="set"),
    pytest.param(
        'SET LOCAL "Statement_Timeout" TO DEFAULT', "statement_timeout", id="set-quoted-default"
    ),
    pytest.param("RESET ALL; SELECT pg_sleep(30)", "RESET ALL", id="reset-all"),
    pytest.param("SET work_mem = '64GB'", "work_mem", id="memory"),
    pytest.param(
        "SELECT query_to_xml('SELECT pg_read_file(''/etc/passwd'')', true, true, '')",
        "query_to_xml()",
        id="dynamic-sql",
    ),
    pytest.param(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity",
        "pg_terminate_backend()",
        id="kill",
    ),
    pytest.param("SELECT pg_advisory_lock(42)", "pg_advisory_lock()", id="advisory-lock"),
    pytest.param("SELECT pg_reload_conf()", "pg_reload_conf()", id="reload-conf"),
    pytest.param("SELECT rolpassword FROM pg_authid", "pg_authid", id="password-hashes"),
    pytest.param("BEGIN; SET TRANSACTION READ WRITE", "BEGIN", id="transaction"),
    pytest.param("DECLARE c CURSOR WITH HOLD FOR SELECT 1", "DECLARE", id="held-cursor"),
    pytest.param("SELECT nope FORM customers", "syntax error", id="unparsable"),
]


@pytest.mark.parametrize(("sql", "named"), PARSE_REFUSALS)
async def test_read_only_calls_reaching_past_the_database_are_refused_by_the_parse(
    cluster: PostgresCluster, view: PostgresSandbox, marker: Path, sql: str, named: str
) -> None:
    server = sql_server(view, statement_timeout=TIMEOUT)
    before = (await cluster_state(cluster), await database_state(cluster, view))
    started = time.monotonic()
    is_error, text = await call(server, "execute_sql", {"sql": sql.format(marker=marker)})
    assert is_error, text
    assert named in text, text
    if named == "syntax error":
        assert "LINE 1: SELECT nope FORM customers" in text  # worded as the server would
    else:
        assert "not allowed in read-only mode" in text
        assert "Nothing was run" in text
    assert time.monotonic() - started < TIMEOUT  # refused, not timed out
    assert PASSWD_LINE not in text
    assert not marker.exists()
    assert (await cluster_state(cluster), await database_state(cluster, view)) == before
    assert await active_statements(cluster, view.connection.user) == []


async def test_explain_query_applies_the_same_checks(view: PostgresSandbox) -> None:
    server = sql_server(view, statement_timeout=TIMEOUT)
    is_error, text = await call(
        server, "explain_query", {"sql": "SELECT pg_read_file('/etc/passwd')", "analyze": True}
    )
    assert is_error
    assert "pg_read_file() is not allowed" in text
    is_error, text = await call(
        server, "explain_query", {"sql": "DELETE FROM customers", "analyze": True}
    )
    assert is_error
    assert "analyze of DELETE" in text
    is_error, text = await call(
        server, "explain_query", {"sql": "SELECT * FROM customers", "analyze": True}
    )
    assert not is_error, text
    assert "actual time=" in text


# --- the connection's role ------------------------------------------------------------------


def _server_command(dsn: str, *options: str) -> list[str]:
    return [sys.executable, "-m", "mcp_servers.sql", "--dsn", dsn, *options]


def _environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPOSITORY)}


async def test_a_superuser_dsn_is_refused_at_start(
    cluster: PostgresCluster, view: PostgresSandbox
) -> None:
    dsn = cluster.admin.with_database(view.name).dsn
    started = await asyncio.to_thread(
        subprocess.run,
        _server_command(dsn),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env=_environment(),
        cwd=REPOSITORY,
    )
    assert started.returncode == 2, started.stderr
    assert "a superuser" in started.stderr
    assert repr(cluster.admin.user) in started.stderr
    assert "--allow-superuser" in started.stderr
    assert "Traceback" not in started.stderr
    assert started.stdout == ""


async def test_a_role_that_runs_programs_is_refused(
    cluster: PostgresCluster, view: PostgresSandbox
) -> None:
    role, password = current_run().new_name("programs"), secrets.token_hex(8)
    conn = await admin.connect(cluster.admin)
    try:
        await conn.execute(
            f"CREATE ROLE {role} LOGIN PASSWORD '{password}' IN ROLE pg_execute_server_program"
        )
        await conn.execute(f"GRANT CONNECT ON DATABASE {cluster.admin.database} TO {role}")
        info = PostgresConnectionInfo(
            host=cluster.admin.host,
            port=cluster.admin.port,
            user=role,
            password=password,
            database=cluster.admin.database,
        )
        server = sql_server(info, statement_timeout=TIMEOUT)
        try:
            is_error, text = await call(server, "execute_sql", {"sql": "SELECT 1"})
        finally:
            await server.context.aclose()
        assert is_error
        assert f"role {role!r}, a member of pg_execute_server_program" in text
        assert "runs programs" in text
    finally:
        await conn.execute(f"DROP OWNED BY {role}")
        await conn.execute(f"DROP ROLE {role}")
        await conn.close()


SUPERUSER_ATTACKS = [
    ("SELECT pg_read_file('/etc/passwd')", "pg_read_file()"),
    ("SELECT lo_import('/etc/passwd')", "lo_import()"),
    ("SELECT dblink_exec('dbname=postgres', 'CREATE ROLE intruder SUPERUSER')", "dblink_exec()"),
    ("COPY customers TO PROGRAM 'touch {marker}'", "COPY"),
    ("SELECT set_config('statement_timeout', '0', false)", "set_config()"),
    ("ALTER SYSTEM SET work_mem = '1GB'", "ALTER SYSTEM"),
]


async def test_an_allowed_superuser_is_still_held_by_the_parse(
    cluster: PostgresCluster, view: PostgresSandbox, marker: Path
) -> None:
    dsn = cluster.admin.with_database(view.name).dsn
    parameters = mcp.StdioServerParameters(
        command=sys.executable,
        args=_server_command(dsn, "--allow-superuser")[1:],
        env=_environment(),
        cwd=str(REPOSITORY),
    )
    before = (await cluster_state(cluster), await database_state(cluster, view))
    children = {child.pid for child in psutil.Process().children(recursive=True)}
    async with mcp.Client(parameters) as client:
        server_pids = [
            child.pid
            for child in psutil.Process().children(recursive=True)
            if child.pid not in children and "mcp_servers.sql" in " ".join(child.cmdline())
        ]
        for sql, named in SUPERUSER_ATTACKS:
            result = await client.call_tool("execute_sql", {"sql": sql.format(marker=marker)})
            text = result.content[0].text  # type: ignore[union-attr]
            assert result.is_error, text
            assert named in text, text
            assert "not allowed in read-only mode" in text, text
            assert PASSWD_LINE not in text
        # It serves, as the superuser it was given.
        result = await client.call_tool("execute_sql", {"sql": "SELECT current_user AS who"})
        answer = json.loads(result.content[0].text)  # type: ignore[union-attr]
        assert answer["rows"] == [{"who": cluster.admin.user}]
    assert not marker.exists()
    assert (await cluster_state(cluster), await database_state(cluster, view)) == before
    assert server_pids
    for pid in server_pids:  # the server ended with its client
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


# --- time limits held on the server ---------------------------------------------------------


async def test_a_time_limit_lifted_inside_a_function_is_cancelled_on_the_server(
    cluster: PostgresCluster, view: PostgresSandbox
) -> None:
    """The parse cannot see into the dataset's function; the watchdog stops all three calls."""
    server = sql_server(view, statement_timeout=TIMEOUT)
    burn = "SELECT relax_limits(); SELECT count(*) FROM generate_series(1, 100000000000)"
    started = time.monotonic()
    outcomes = await asyncio.gather(*(call(server, "execute_sql", {"sql": burn}) for _ in range(3)))
    elapsed = time.monotonic() - started
    for is_error, text in outcomes:
        assert is_error, text
        assert f"did not finish within {TIMEOUT:g} s" in text
        assert "cancelled on the server" in text
    assert elapsed < TIMEOUT + 3.0
    assert await settled(cluster, view.connection.user) == []
    # The server keeps serving.
    is_error, text = await call(
        server, "execute_sql", {"sql": "SELECT count(*) AS n FROM customers"}
    )
    assert not is_error
    assert json.loads(text)["rows"] == [{"n": 3}]
    await server.context.aclose()


async def test_a_writable_judge_that_lifts_its_own_limit_is_cancelled_on_the_server(
    cluster: PostgresCluster, clone: PostgresSandbox
) -> None:
    server = sql_server(clone, access="unrestricted", statement_timeout=TIMEOUT)
    is_error, text = await call(
        server,
        "execute_sql",
        {
            "sql": "CREATE FUNCTION unbounded() RETURNS void LANGUAGE plpgsql AS "
            "$$ BEGIN PERFORM set_config('statement_timeout', '0', true); END $$; SELECT 1"
        },
    )
    assert not is_error, text
    started = time.monotonic()
    is_error, text = await call(
        server,
        "execute_sql",
        {"sql": "SELECT unbounded(); INSERT INTO customers SELECT 9, 'Zed' FROM pg_sleep(60)"},
    )
    assert is_error, text
    assert "cancelled on the server" in text
    assert time.monotonic() - started < TIMEOUT + 3.0
    owner = (await clone.owner_connection()).user
    assert await settled(cluster, owner) == []
    rows = await fetch(cluster.admin.with_database(clone.name), "SELECT count(*) FROM customers")
    assert rows[0][0] == 3  # nothing it did was kept
    await server.context.aclose()


# --- answers capped in bytes while read -----------------------------------------------------


async def test_a_huge_value_is_cut_before_it_is_sent(view: PostgresSandbox) -> None:
    server = sql_server(view, statement_timeout=30)
    await call(server, "execute_sql", {"sql": "SELECT 1"})  # connections and codecs ready
    read_before = bytes_read()
    is_error, text = await call(
        server, "execute_sql", {"sql": "SELECT repeat('x', 100000000) AS v, 7 AS n"}
    )
    read = bytes_read() - read_before
    assert not is_error, text[:300]
    answer = json.loads(text)
    assert answer["rows"] == [{"v": "x" * 65536, "n": 7}]
    assert answer["values_cut"] == 1
    assert answer["cut"] == [{"row": 0, "column": "v", "bytes": 100000000}]
    assert "cut to its first 65536 bytes" in answer["notice"]
    assert len(text) < 70_000
    assert read < 4 * 2**20, f"{read} bytes crossed the connection for a 100 MB value"


async def test_an_answer_is_capped_in_bytes_while_read(view: PostgresSandbox) -> None:
    server = sql_server(view, statement_timeout=30, max_answer_bytes=300_000)
    await call(server, "execute_sql", {"sql": "SELECT 1"})
    read_before = bytes_read()
    is_error, text = await call(
        server,
        "execute_sql",
        {"sql": "SELECT i, repeat('y', 60000) AS v FROM generate_series(1, 100) AS i"},
    )
    read = bytes_read() - read_before
    assert not is_error, text[:300]
    answer = json.loads(text)
    assert [row["i"] for row in answer["rows"]] == [1, 2, 3, 4]
    assert answer["row_count"] == 100
    assert answer["rows_omitted"] == 96
    assert "limit of 300000 bytes" in answer["notice"]
    assert len(text.encode()) < 300_000 + 1_000
    assert read < 2_500_000, f"{read} bytes read for an answer of 300000 (all rows: 6 MB)"


async def test_rows_of_explain_and_returning_are_capped(clone: PostgresSandbox) -> None:
    server = sql_server(clone, access="unrestricted", statement_timeout=30)
    is_error, text = await call(
        server,
        "execute_sql",
        {
            "sql": "CREATE TABLE notes (id integer, body text); INSERT INTO notes "
            "SELECT g, repeat('z', 200000) FROM generate_series(1, 3) g RETURNING *"
        },
    )
    assert not is_error, text[:300]
    answer = json.loads(text)
    assert answer["row_count"] == 3
    assert [row["id"] for row in answer["rows"]] == [1, 2, 3]
    assert answer["cut"] == [{"row": i, "column": "body", "bytes": 200000} for i in range(3)]
    assert len(text) < 3 * 65536 + 2000
    is_error, text = await call(
        server,
        "execute_sql",
        {"sql": "EXPLAIN VERBOSE SELECT length(body || '" + "w" * 70000 + "') FROM notes"},
    )
    assert not is_error, text[:300]
    answer = json.loads(text)
    assert answer["values_cut"] >= 1
    assert len(text) < 70000 + 4000
    await server.context.aclose()


# --- the size quota of writable clones ------------------------------------------------------

QUOTA = 32 * 2**20


async def _size(cluster: PostgresCluster, sandbox: PostgresSandbox) -> int:
    rows = await fetch(cluster.admin, "SELECT pg_database_size($1)", sandbox.name)
    return int(rows[0][0])


async def test_a_writable_judge_stops_at_its_quota(
    cluster: PostgresCluster, clone: PostgresSandbox
) -> None:
    server = sql_server(clone, access="unrestricted", statement_timeout=30, size_quota=QUOTA)
    baseline = await _size(cluster, clone)
    # Stored as is (no compression): every row really takes its megabyte.
    is_error, text = await call(
        server,
        "execute_sql",
        {"sql": "CREATE TABLE blob (v text); ALTER TABLE blob ALTER COLUMN v SET STORAGE EXTERNAL"},
    )
    assert not is_error, text
    started = time.monotonic()
    is_error, text = await call(
        server,
        "execute_sql",
        {"sql": "INSERT INTO blob SELECT repeat('x', 1000000) FROM generate_series(1, 5000)"},
    )
    assert is_error, text
    assert text.startswith("Error: quota reached")
    assert "32 MiB it may grow by" in text
    assert time.monotonic() - started < 15  # stopped near the quota, not after 5 GB
    owner = (await clone.owner_connection()).user
    assert await settled(cluster, owner) == []
    assert await _size(cluster, clone) < baseline + QUOTA + 16 * 2**20
    rows = await fetch(cluster.admin.with_database(clone.name), "SELECT count(*) FROM blob")
    assert rows[0][0] == 0
    await server.context.aclose()


async def test_short_writing_calls_add_up_to_the_quota(
    cluster: PostgresCluster, clone: PostgresSandbox
) -> None:
    """Calls too short for the watchdog to sample are checked before they commit."""
    server = sql_server(clone, access="unrestricted", statement_timeout=30, size_quota=QUOTA)
    baseline = await _size(cluster, clone)
    is_error, text = await call(
        server,
        "execute_sql",
        {"sql": "CREATE TABLE blob (v text); ALTER TABLE blob ALTER COLUMN v SET STORAGE EXTERNAL"},
    )
    assert not is_error, text
    refusals = []
    for _ in range(40):  # 40 x 4 MB: five times the quota
        is_error, text = await call(
            server,
            "execute_sql",
            {"sql": "INSERT INTO blob SELECT repeat('x', 1000000) FROM generate_series(1, 4)"},
        )
        if is_error:
            refusals.append(text)
    assert refusals
    assert all(text.startswith("Error: quota reached") for text in refusals)
    # Calls commit between two checks: at most QUOTA_CHECK_EVERY seconds of writing.
    assert await _size(cluster, clone) < baseline + QUOTA + 32 * 2**20
    # Past the quota, a judge can still free space, then write again.
    is_error, text = await call(server, "execute_sql", {"sql": "TRUNCATE blob"})
    assert not is_error, text
    assert await _size(cluster, clone) < baseline + 8 * 2**20
    is_error, text = await call(
        server, "execute_sql", {"sql": "INSERT INTO blob SELECT repeat('x', 1000000)"}
    )
    assert not is_error, text
    await server.context.aclose()


async def test_judge_roles_carry_a_temp_file_limit(
    view: PostgresSandbox, clone: PostgresSandbox
) -> None:
    # Sorts and hashes spill to temporary files in the (possibly RAM-backed) scratch space; the
    # runtime's roles carry a limit a judge's session cannot lift (SET of it is superuser-only).
    for sandbox in (view, clone):
        server = sql_server(sandbox, access="read-only" if sandbox.read_only else "unrestricted")
        try:
            failed, text = await call(server, "execute_sql", {"sql": "SHOW temp_file_limit"})
            assert not failed, text
            assert TEMP_FILE_LIMIT in text, text
            failed, text = await call(
                server, "execute_sql", {"sql": "SET temp_file_limit = '-1'; SELECT 1"}
            )
            assert failed, text
        finally:
            await server.context.aclose()
