"""The isolated Docker Postgres server a superuser replay runs in: what its superuser can reach.

Every test here needs the Docker engine and the sandbox image. The server's superuser is the
attacker: it runs programs (``COPY ... TO PROGRAM``), reads files and loads ``dblink``. The tests
check that all of it stays in the container, that its socket needs a password, and that the
container and its socket folder go when the server stops.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import docker
import pytest
import pytest_asyncio

from sandboxes.docker.images import ensure_sandbox_image
from sandboxes.postgres import admin
from sandboxes.postgres.docker_cluster import DockerPostgresCluster
from sandboxes.postgres.sandbox import PostgresCluster

pytestmark = [pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def isolated() -> AsyncIterator[DockerPostgresCluster]:
    cluster = DockerPostgresCluster(ensure_sandbox_image(), isolated=True)
    await cluster.start()
    yield cluster
    await cluster.stop()


async def _superuser(cluster: DockerPostgresCluster) -> asyncpg.Connection:
    return await admin.connect(cluster.admin)


async def test_the_container_has_no_network_and_no_capabilities(
    isolated: DockerPostgresCluster,
) -> None:
    assert isolated.container is not None
    isolated.container.reload()
    host_config = isolated.container.attrs["HostConfig"]
    assert host_config["NetworkMode"] == "none"
    assert host_config["CapDrop"] == ["ALL"]
    assert "no-new-privileges" in host_config["SecurityOpt"]
    assert not host_config["PortBindings"]
    # The runtime reaches it through a socket in a folder of the run's scratch space.
    assert isolated.admin.host.startswith("/")
    assert (Path(isolated.admin.host) / ".s.PGSQL.5432").is_socket()
    conn = await _superuser(isolated)
    try:
        # Inside, only the loopback interface exists: nothing to route a packet out through.
        interfaces = await conn.fetchval("SELECT pg_read_file('/proc/net/dev')")
        names = {line.split(":")[0].strip() for line in interfaces.splitlines()[2:] if ":" in line}
        assert names == {"lo"}
        assert await conn.fetchval("SELECT current_setting('listen_addresses')") == ""
    finally:
        await conn.close()


async def test_the_socket_needs_the_password(isolated: DockerPostgresCluster) -> None:
    """The image trusts local connections; an isolated server's socket is shared with the host,
    so there every role, the superuser included, must give its password."""
    wrong = isolated.admin.model_copy(update={"password": secrets.token_hex(8)})
    with pytest.raises(asyncpg.InvalidPasswordError):
        await admin.connect(wrong)
    nothing = isolated.admin.model_copy(update={"password": ""})
    with pytest.raises(
        (asyncpg.InvalidPasswordError, asyncpg.InvalidAuthorizationSpecificationError)
    ):
        await admin.connect(nothing)


async def test_copy_to_program_runs_inside_the_container_only(
    isolated: DockerPostgresCluster, tmp_path: Path
) -> None:
    marker = f"aj-escape-{secrets.token_hex(6)}"
    host_target = tmp_path / marker
    conn = await _superuser(isolated)
    try:
        # The program runs, but in the container: the file appears there, not on the host.
        await conn.execute(f"COPY (SELECT 1) TO PROGRAM 'touch /tmp/{marker}'")
        assert await conn.fetchval(f"SELECT (pg_stat_file('/tmp/{marker}')).size") == 0
        assert not Path(f"/tmp/{marker}").exists()
        # A host path named in a program does not exist in there, so nothing is written to it.
        with pytest.raises(asyncpg.PostgresError):
            await conn.execute(f"COPY (SELECT 1) TO PROGRAM 'touch {host_target}'")
        assert not host_target.exists()
        # Reading a host file sees the container's file system instead.
        host_name = Path("/etc/hostname").read_text().strip()
        assert await conn.fetchval("SELECT trim(pg_read_file('/etc/hostname'))") != host_name
    finally:
        await conn.close()


async def test_dblink_reaches_no_other_server(
    isolated: DockerPostgresCluster, docker_cluster: PostgresCluster
) -> None:
    """The shared Docker server listens on the host's loopback; from the isolated container,
    the same address and port is the container's own loopback, where nothing listens; the
    host's address on Docker's bridge has no route (the container has no interface but ``lo``,
    so no packet leaves it)."""
    shared = docker_cluster.admin
    conn = await _superuser(isolated)
    try:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS dblink")
        for host in (shared.host, "172.17.0.1"):
            target = f"host={host} port={shared.port} user={shared.user} connect_timeout=3"
            with pytest.raises(asyncpg.PostgresError, match=r"could not|connection to server"):
                await conn.fetchval("SELECT dblink_connect_u('escape', $1)", target)
        # dblink itself works: the server's own socket inside the container answers.
        own = await conn.fetchval(
            "SELECT dblink_connect_u('self', $1)",
            f"host=/run/agentjudge-socket user=postgres password={isolated.admin.password}"
            " dbname=postgres",
        )
        assert own == "OK"
        await conn.execute("SELECT dblink_disconnect('self')")
    finally:
        await conn.close()


async def test_stopping_removes_the_container_and_its_socket_folder() -> None:
    cluster = DockerPostgresCluster(ensure_sandbox_image(), isolated=True)
    await cluster.start()
    assert cluster.container is not None
    assert cluster.socket_folder is not None
    name, folder = str(cluster.container.name), cluster.socket_folder
    conn = await admin.connect(cluster.admin)
    # The socket folder, the one host path it shares, is closed to it once the server answered.
    with pytest.raises(asyncpg.InsufficientPrivilegeError, match="Permission denied"):
        await conn.execute(
            f"COPY (SELECT 1) TO '/run/agentjudge-socket/left-{secrets.token_hex(4)}'"
        )
    await conn.close()
    await cluster.stop()
    assert not folder.exists()
    client = docker.from_env()
    try:
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(name)
    finally:
        client.close()
