"""What the six tasks on the ``retail`` schema share: the generated shop (``retail_data``), their
task records and seeds, and the fingerprints the verifiers compare the shop's tables with.

Each task has its own ``retail_<name>`` module; the package's ``TASKS`` lists them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dataset.assets import ASSETS_DIR, DATASET_PREFIX, state_file
from dataset.models import SqlSeedState, Task, VerifierRef
from suites.ds.tasks.postgres.common import Value, fingerprint
from suites.ds.tasks.postgres.retail_data import COLUMNS, Retail, generate, seed_sql, table_rows

SHOP = generate()
ROWS = table_rows(SHOP)
ALL_TABLES = ["customers", "products", "orders", "order_items", "payments"]

Snapshot = dict[str, tuple[tuple[str, ...], tuple[int, str]]]


def snapshot(rows: dict[str, list[tuple[Value, ...]]], tables: list[str]) -> Snapshot:
    """Fingerprints of ``tables`` as the verifiers' ``unchanged`` helper expects them."""
    return {table: (COLUMNS[table], fingerprint(rows[table])) for table in tables}


UNCHANGED = snapshot(ROWS, ALL_TABLES)
"""Every table of the generated shop, for the tasks that must not change a row."""


SHARED_SEED = f"{DATASET_PREFIX}{ASSETS_DIR}/retail-seed.sql"
"""The seed of the tasks on ``SHOP``: one file of the dataset's shared assets."""


def seeder(
    shop: Retail, seed: str = SHARED_SEED, title: str = "the tasks on the generated shop"
) -> Callable[[Path], None]:
    """The ``build_initial`` of a task on ``shop`` whose state names ``seed``."""

    def build(folder: Path) -> None:
        target = state_file(folder, seed)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(seed_sql(shop, title), encoding="utf-8")

    return build


def make_task(task_id: str, instruction: str, tags: list[str], seed: str = SHARED_SEED) -> Task:
    """The task record of a retail task."""
    return Task(
        id=task_id,
        domain="ds",
        subdomain="postgres",
        instruction=instruction,
        initial_state=SqlSeedState(path=seed),
        verifier=VerifierRef(timeout_seconds=120.0),
        metadata={"category": "retail", "tags": tags},
    )
