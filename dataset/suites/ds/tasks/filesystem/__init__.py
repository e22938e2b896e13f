"""Filesystem tasks of the DS suite (one module per task family)."""

from __future__ import annotations

from dataset.suites.ds.spec import SuiteTask
from dataset.suites.ds.tasks.filesystem import invoices

TASKS: list[SuiteTask] = [*invoices.TASKS]
