"""Postgres tasks of the DS suite: six on the ``retail`` schema, six on the ``clinic`` schema.

Each schema has a deterministic data generator (``retail_data``, ``clinic_data``) shared by its
tasks; ``common`` holds the scripted-run helpers and the verifier frame.
"""

from __future__ import annotations

from suites.ds.spec import SuiteTask
from suites.ds.tasks.postgres import clinic, retail

TASKS: list[SuiteTask] = [*retail.TASKS, *clinic.TASKS]
