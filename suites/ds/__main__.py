"""``python -m suites.ds --output datasets/ds``: build the DS suite from scratch."""

from __future__ import annotations

import sys
from pathlib import Path

from suites.command import build_suite_command
from suites.ds.build import build_suite
from suites.ds.tasks import all_tasks

DESCRIPTION = (
    "Filesystem and Postgres tasks authored for judging: scripted agents of several styles "
    "recorded against the real MCP servers; labels from each task's verifier on the replayed "
    "state."
)


def main(argv: list[str] | None = None) -> int:
    return build_suite_command(
        argv,
        prog="python -m suites.ds",
        doc=__doc__,
        output=Path("datasets/ds"),
        jobs=4,
        description=DESCRIPTION,
        tasks=all_tasks,
        task_id=lambda task: task.task.id,
        build=build_suite,
    )


if __name__ == "__main__":
    sys.exit(main())
