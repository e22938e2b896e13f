"""Filesystem tasks of the DS suite (one module per task family)."""

from __future__ import annotations

from suites.ds.spec import SuiteTask
from suites.ds.tasks.filesystem import (
    invoices,
    metadata,
    restructuring,
    search,
    templates,
    transformation,
)

TASKS: list[SuiteTask] = [
    *invoices.TASKS,
    *transformation.TASKS,
    *restructuring.TASKS,
    *metadata.TASKS,
    *search.TASKS,
    *templates.TASKS,
]
