"""A run to be killed: makes Postgres resources, prints their names as JSON, then waits.

``python killed_run.py embedded TASK_DIR ROLE`` starts its own embedded server;
``python killed_run.py shared TASK_DIR ROLE DSN`` uses the server at DSN. TASK_DIR holds a
``seed.sql``. The leftover tests SIGKILL this process and check that collection removes it all.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from dataset.models import SqlSeedState, Task
from sandboxes.postgres.embedded import EmbeddedPostgresCluster
from sandboxes.postgres.external import ExternalPostgresCluster
from sandboxes.postgres.provider import ClusterPostgresProvider
from sandboxes.postgres.sandbox import PostgresCluster
from sandboxes.runs import current_run


async def main(mode: str, task_dir: Path, role: str, dsn: str | None) -> None:
    cluster: PostgresCluster
    report: dict[str, object] = {"run_id": current_run().run_id}
    if mode == "embedded":
        embedded = EmbeddedPostgresCluster()
        await embedded.start()
        report |= {"data_directory": str(embedded.data_directory), "postmaster": embedded.pid}
        cluster = embedded
    else:
        assert dsn is not None
        cluster = ExternalPostgresCluster(dsn)
        await cluster.start()
    provider = ClusterPostgresProvider(cluster)
    task = Task(
        id="killed",
        domain="ds",
        subdomain="postgres",
        instruction="Be killed.",
        initial_state=SqlSeedState(),
    )
    sandbox = await provider.create(task, task_dir)
    statement = f'CREATE ROLE "{role}"; GRANT SELECT ON customers TO "{role}"'
    async with sandbox.connect(statement) as conn:
        await conn.execute(statement)
    snapshot = await sandbox.freeze()
    view = await snapshot.clone(writable=False)
    clone = await snapshot.clone()
    other = await provider.create(task, task_dir)
    report |= {
        "databases": [snapshot.name, view.name, clone.name, other.name],
        "roles": [role, view.connection.user],
    }
    print(json.dumps(report), flush=True)
    await asyncio.sleep(3600)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    asyncio.run(
        main(
            arguments[0],
            Path(arguments[1]),
            arguments[2],
            arguments[3] if len(arguments) > 3 else None,
        )
    )
