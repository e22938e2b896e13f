"""Postgres tasks of the DS suite (one module per schema or task family)."""

from __future__ import annotations

from dataset.suites.ds.spec import SuiteTask

TASKS: list[SuiteTask] = []
