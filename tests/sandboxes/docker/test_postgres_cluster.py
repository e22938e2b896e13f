"""The Docker Postgres cluster: quick start, loopback-only port, password auth, clean stop."""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator

import asyncpg
import docker
import pytest
from docker.models.containers import Container

from sandboxes.base import SandboxError
from sandboxes.docker.images import PG_MAJOR
from sandboxes.postgres.docker_cluster import DockerPostgresCluster
from sandboxes.runs import RUN_LABEL, current_run

pytestmark = pytest.mark.docker


@pytest.fixture
async def cluster(sandbox_image: str) -> AsyncIterator[DockerPostgresCluster]:
    made = DockerPostgresCluster(sandbox_image)
    yield made
    await made.stop()


async def test_the_cluster_starts_quickly_and_accepts_the_admin(
    cluster: DockerPostgresCluster,
) -> None:
    started = time.monotonic()
    await cluster.start()
    elapsed = time.monotonic() - started
    assert elapsed < 5.0, f"ready after {elapsed:.2f} s"
    admin = cluster.admin
    assert (admin.host, admin.user, admin.database) == ("127.0.0.1", "postgres", "postgres")
    assert len(admin.password) == 32
    conn = await asyncpg.connect(admin.dsn)
    try:
        assert await conn.fetchval("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        assert (await conn.fetchval("SHOW server_version")).startswith(f"{PG_MAJOR}.")
        assert await conn.fetchval("SHOW fsync") == "off"
        await conn.execute("CREATE DATABASE scratch")
    finally:
        await conn.close()
    port = admin.port
    await cluster.start()  # idempotent: same server
    assert cluster.admin.port == port


async def test_only_loopback_with_a_password_reaches_it(
    cluster: DockerPostgresCluster, sandbox_image: str
) -> None:
    await cluster.start()
    assert cluster.container is not None
    container = cluster.container
    assert container.name == cluster.name
    assert container.name is not None
    assert container.name.startswith(current_run().prefix + "pg_")
    assert container.labels[RUN_LABEL] == current_run().run_id
    bindings = container.attrs["NetworkSettings"]["Ports"]
    assert list(bindings) == ["5432/tcp"]
    assert [(item["HostIp"], int(item["HostPort"])) for item in bindings["5432/tcp"]] == [
        ("127.0.0.1", cluster.admin.port)
    ]
    # The host's address on the bridge network is not loopback: the port is not published there.
    gateway = container.attrs["NetworkSettings"]["Gateway"]
    assert gateway
    assert not gateway.startswith("127.")
    with pytest.raises((ConnectionRefusedError, TimeoutError)):
        socket.create_connection((gateway, cluster.admin.port), 2).close()
    with pytest.raises(asyncpg.InvalidPasswordError):
        await asyncpg.connect(
            cluster.admin.with_database("postgres").dsn.replace(cluster.admin.password, "wrong")
        )
    # Each cluster gets its own password.
    other = DockerPostgresCluster(sandbox_image)
    try:
        await other.start()
        assert other.admin.password != cluster.admin.password
        assert other.admin.port != cluster.admin.port
    finally:
        await other.stop()


async def test_stop_removes_the_container(sandbox_image: str) -> None:
    cluster = DockerPostgresCluster(sandbox_image)
    await cluster.start()
    name = cluster.name
    assert name is not None
    await cluster.stop()
    client = docker.from_env()
    try:
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(name)
    finally:
        client.close()
    with pytest.raises(SandboxError, match="not started"):
        _ = cluster.admin
    await cluster.stop()  # idempotent


async def test_a_server_that_never_comes_up_is_a_clear_error(sandbox_image: str) -> None:
    cluster = DockerPostgresCluster(sandbox_image, ready_timeout=2.0)
    # Start the container with a broken data directory: the server exits at once.
    cluster_start = cluster._run_container
    names: list[str] = []

    def broken(password: str) -> tuple[Container, int]:
        container, port = cluster_start(password)
        names.append(str(container.name))
        container.exec_run(["rm", "-f", "/var/lib/agentjudge/pgdata/PG_VERSION"], user="root")
        container.restart(timeout=0)
        return container, port

    cluster._run_container = broken  # type: ignore[method-assign]
    with pytest.raises(SandboxError, match=r"Postgres container \S+ (exited|did not accept)"):
        await cluster.start()
    assert cluster.container is None
    client = docker.from_env()
    try:
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(names[0])
    finally:
        client.close()
