"""What the six tasks on the ``clinic`` schema share: the generated clinic (``clinic_data``),
their task records and seed (one file the dataset's tasks share), and the fingerprints the
verifiers compare its tables with.

Each task has its own ``clinic_<name>`` module; the package's ``TASKS`` lists them. Role names
carry the ``cl_`` prefix and are used by one task each (roles are cluster-global).
"""

from __future__ import annotations

from pathlib import Path

from dataset.assets import ASSETS_DIR, DATASET_PREFIX, state_file
from dataset.models import SqlSeedState, Task, VerifierRef
from suites.ds.tasks.postgres.clinic_data import COLUMNS, generate, seed_sql, table_rows
from suites.ds.tasks.postgres.common import Value, fingerprint

CLINIC = generate()
ROWS = table_rows(CLINIC)
ALL_TABLES = list(COLUMNS)

Snapshot = dict[str, tuple[tuple[str, ...], tuple[int, str]]]


def snapshot(rows: dict[str, list[tuple[Value, ...]]], tables: list[str]) -> Snapshot:
    """Fingerprints of ``tables`` as the verifiers' ``unchanged`` helper expects them."""
    return {table: (COLUMNS[table], fingerprint(rows[table])) for table in tables}


UNCHANGED = snapshot(ROWS, ALL_TABLES)
"""Every table of the generated clinic, for the tasks that must not change a row."""


SEED = f"{DATASET_PREFIX}{ASSETS_DIR}/clinic-seed.sql"
"""The seed every clinic task starts from: one file of the dataset's shared assets."""


def write_seed(folder: Path) -> None:
    """The ``build_initial`` of a clinic task (``folder``: the task's): writes the shared seed."""
    target = state_file(folder, SEED)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(seed_sql(CLINIC, "every clinic task"), encoding="utf-8")


def make_task(task_id: str, instruction: str, tags: list[str]) -> Task:
    """The task record of a clinic task."""
    return Task(
        id=task_id,
        domain="ds",
        subdomain="postgres",
        instruction=instruction,
        initial_state=SqlSeedState(path=SEED),
        verifier=VerifierRef(timeout_seconds=120.0),
        metadata={"category": "clinic", "tags": tags},
    )
