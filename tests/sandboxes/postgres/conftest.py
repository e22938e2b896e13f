"""Clusters, providers and tasks shared by the Postgres sandbox tests.

Clusters are session-scoped (starting one costs about a second) and started with ``asyncio.run``
so that they do not belong to any test's event loop. ``external`` points an
``ExternalPostgresCluster`` at the embedded server as a non-superuser role with CREATEDB and
CREATEROLE, the weakest role the runtime supports. Every provider fixture checks on teardown that
nothing named after this run is left on the server.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from dataset.models import Task
from sandboxes.postgres import admin
from sandboxes.postgres.embedded import EmbeddedPostgresCluster
from sandboxes.postgres.external import ExternalPostgresCluster
from sandboxes.postgres.provider import ClusterPostgresProvider
from sandboxes.postgres.sandbox import PostgresCluster
from sandboxes.runs import SHARED_MEMORY, current_run
from tests.sandboxes.postgres.helpers import SHOP_SEED, fetch, run_owned, write_task


@pytest.fixture(scope="session")
def embedded_cluster() -> Iterator[EmbeddedPostgresCluster]:
    """One embedded server for the whole session, in RAM when it can be (a faster suite)."""
    cluster = EmbeddedPostgresCluster(in_memory=SHARED_MEMORY.is_dir())
    asyncio.run(cluster.start())
    yield cluster
    asyncio.run(cluster.stop())


@pytest.fixture(scope="session")
def external_cluster(embedded_cluster: EmbeddedPostgresCluster) -> Iterator[PostgresCluster]:
    """The embedded server seen as an external one, through a CREATEDB CREATEROLE role."""
    role, password = current_run().new_name("extadmin"), secrets.token_hex(8)
    quoted = admin.quote_ident(role)
    # The runtime's first connection to a cluster of its own takes the maintenance databases
    # from PUBLIC; do it here too, so that these tests do not depend on an embedded test first.
    asyncio.run(
        fetch(
            embedded_cluster.admin,
            "REVOKE CONNECT, TEMPORARY ON DATABASE postgres, template1 FROM PUBLIC",
        )
    )
    asyncio.run(
        fetch(
            embedded_cluster.admin,
            f"CREATE ROLE {quoted} LOGIN CREATEDB CREATEROLE"
            f" PASSWORD {admin.quote_literal(password)}",
        )
    )
    # As an external server's operator would: the admin may use the maintenance database (the
    # runtime revokes it from PUBLIC on clusters it runs itself, and this one is such a cluster).
    asyncio.run(
        fetch(embedded_cluster.admin, f"GRANT CONNECT, TEMPORARY ON DATABASE postgres TO {quoted}")
    )
    cluster = ExternalPostgresCluster(
        embedded_cluster.admin.model_copy(update={"user": role, "password": password})
    )
    asyncio.run(cluster.start())
    yield cluster
    asyncio.run(cluster.stop())
    asyncio.run(
        fetch(
            embedded_cluster.admin,
            f"REVOKE CONNECT, TEMPORARY ON DATABASE postgres FROM {quoted}",
        )
    )
    asyncio.run(fetch(embedded_cluster.admin, f"DROP ROLE {quoted}"))


@pytest.fixture(scope="session")
def docker_cluster() -> Iterator[PostgresCluster]:
    """A Postgres container (needs the Docker engine and the sandbox image)."""
    from sandboxes.docker.images import ensure_sandbox_image
    from sandboxes.postgres.docker_cluster import DockerPostgresCluster

    cluster = DockerPostgresCluster(ensure_sandbox_image())
    asyncio.run(cluster.start())
    yield cluster
    asyncio.run(cluster.stop())


@pytest.fixture(
    scope="session",
    params=["embedded", "external", pytest.param("docker", marks=pytest.mark.docker)],
)
def cluster(request: pytest.FixtureRequest) -> PostgresCluster:
    """Each backend in turn."""
    found: PostgresCluster = request.getfixturevalue(f"{request.param}_cluster")
    return found


@pytest.fixture
async def provider(cluster: PostgresCluster) -> AsyncIterator[ClusterPostgresProvider]:
    """A provider on ``cluster``; closed after the test, which must leave nothing behind."""
    provider = ClusterPostgresProvider(cluster)
    yield provider
    await provider.aclose()
    assert await run_owned(cluster.admin) == ([], [])


@pytest.fixture
def shop(tmp_path: Path) -> tuple[Task, Path]:
    """The seeded shop task."""
    return write_task(tmp_path / "shop", SHOP_SEED)
