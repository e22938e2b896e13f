"""The workspace suite's tasks, one module each (named after the task id)."""

from __future__ import annotations

import importlib

from suites.workspace.spec import CodingTask

_MODULES = (
    "slugify",
    "deep_merge",
    "roman",
    "invoice_total",
    "report_limit",
    "lru_cache",
    "days_between",
    "rename_mean",
)


def all_tasks() -> list[CodingTask]:
    """Every task, in a fixed order."""
    return [importlib.import_module(f"{__name__}.{name}").TASK for name in _MODULES]
