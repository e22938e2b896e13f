"""``python -m suites.workspace --output datasets/workspace``: build the workspace suite."""

from __future__ import annotations

import sys
from pathlib import Path

from suites.command import build_suite_command
from suites.workspace.build import build_suite
from suites.workspace.tasks import all_tasks

DESCRIPTION = (
    "Coding tasks on small Python projects: scripted coding agents recorded against the "
    "workspace kind's tools (commands in the dataset-code box); labels from each task author's "
    "tests on the replayed project."
)


def main(argv: list[str] | None = None) -> int:
    return build_suite_command(
        argv,
        prog="python -m suites.workspace",
        doc=__doc__,
        output=Path("datasets/workspace"),
        jobs=2,
        description=DESCRIPTION,
        tasks=all_tasks,
        task_id=lambda task: task.id,
        build=build_suite,
    )


if __name__ == "__main__":
    sys.exit(main())
