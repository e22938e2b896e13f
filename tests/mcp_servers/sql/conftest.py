"""One embedded Postgres cluster and provider per SQL server test module."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from sandboxes.postgres.embedded import EmbeddedPostgresCluster
from sandboxes.postgres.provider import ClusterPostgresProvider
from sandboxes.runs import SHARED_MEMORY


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster() -> AsyncIterator[EmbeddedPostgresCluster]:
    made = EmbeddedPostgresCluster(in_memory=SHARED_MEMORY.is_dir())
    await made.start()
    yield made
    await made.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def provider(
    cluster: EmbeddedPostgresCluster,
) -> AsyncIterator[ClusterPostgresProvider]:
    made = ClusterPostgresProvider(cluster)
    yield made
    await made.aclose()
