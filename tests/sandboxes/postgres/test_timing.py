"""Clone latency of a ~25 MB database: FILE_COPY from the template vs restoring its seed.

Figures are printed, not asserted (they depend on the machine); the test checks the clones hold
the data.
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path

import pytest

from dataset.models import Task
from sandboxes.postgres.embedded import SHARED_MEMORY, EmbeddedPostgresCluster
from sandboxes.postgres.provider import ClusterPostgresProvider
from tests.sandboxes.postgres.helpers import fetch, write_task

ROWS = 110_000
CLONES = 15


def big_seed() -> str:
    generator = random.Random(7)
    lines = [
        "CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL, body text, qty integer);"
    ]
    for start in range(1, ROWS + 1, 1000):
        values = ",".join(
            f"({i}, 'item {i}', '{'x' * generator.randint(60, 120)}', {i % 97})"
            for i in range(start, min(start + 1000, ROWS + 1))
        )
        lines.append(f"INSERT INTO items VALUES {values};")
    lines.append("CREATE INDEX items_qty ON items (qty);")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def seed() -> str:
    return big_seed()


@pytest.mark.slow
@pytest.mark.parametrize("in_memory", [False, True], ids=["disk", "memory"])
async def test_clone_latency_of_a_25_mb_database(
    seed: str, in_memory: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if in_memory and not SHARED_MEMORY.is_dir():
        pytest.skip(f"no {SHARED_MEMORY}")
    task, folder = write_task(tmp_path / "big", seed, "big")
    embedded_cluster = EmbeddedPostgresCluster(in_memory=in_memory)
    await embedded_cluster.start()
    try:
        await measure(embedded_cluster, task, folder, seed, capsys)
    finally:
        await embedded_cluster.stop()


async def measure(
    embedded_cluster: EmbeddedPostgresCluster,
    task: Task,
    folder: Path,
    seed: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    async with ClusterPostgresProvider(embedded_cluster) as provider:
        began = time.perf_counter()
        first = await provider.create(task, folder)  # builds the template: runs the seed
        template_seconds = time.perf_counter() - began
        size = await fetch(
            embedded_cluster.admin, "SELECT pg_database_size($1) AS bytes", first.name
        )
        clone_seconds: list[float] = []
        clones = []
        for _ in range(CLONES):
            began = time.perf_counter()
            clones.append(await provider.create(task, folder))
            clone_seconds.append(time.perf_counter() - began)
        async with clones[-1].connect() as conn:
            assert await conn.fetchval("SELECT count(*) FROM items") == ROWS
        destroy_seconds: list[float] = []
        for clone in clones:
            began = time.perf_counter()
            await clone.destroy()
            destroy_seconds.append(time.perf_counter() - began)
        snapshot = await first.freeze()
        began = time.perf_counter()
        copy = await snapshot.clone()
        snapshot_clone = time.perf_counter() - began
        assert await fetch(copy.connection, "SELECT count(*) AS n FROM items") == [(ROWS,)]
    storage = "memory" if embedded_cluster.in_memory else "disk"
    with capsys.disabled():
        print(
            f"\npostgres clone timing (embedded, {storage}):"
            f" seed {len(seed) / 1e6:.1f} MB of SQL, database {size[0]['bytes'] / 1e6:.1f} MB;"
            f" seed restore + first clone {template_seconds * 1000:.0f} ms;"
            f" FILE_COPY clone median {statistics.median(clone_seconds) * 1000:.0f} ms"
            f" (min {min(clone_seconds) * 1000:.0f}, max {max(clone_seconds) * 1000:.0f});"
            f" snapshot clone {snapshot_clone * 1000:.0f} ms;"
            f" destroy median {statistics.median(destroy_seconds) * 1000:.0f} ms"
        )
