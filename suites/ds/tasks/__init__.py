"""The suite's tasks: ``filesystem`` and ``postgres`` packages, one module per task, each package
exporting ``TASKS``; ``checks`` holds what every verifier prints."""

from __future__ import annotations

from suites.ds.spec import SuiteTask


def all_tasks() -> list[SuiteTask]:
    """Every task of the suite, filesystem first, in a stable order."""
    from suites.ds.tasks.filesystem import TASKS as FILESYSTEM
    from suites.ds.tasks.postgres import TASKS as POSTGRES

    return [*FILESYSTEM, *POSTGRES]
