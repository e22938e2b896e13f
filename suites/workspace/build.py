"""Building the workspace suite: project folders, recorded coding-agent runs, verifier labels.

The DS suite's builder does the work (``suites.ds.build.build_suite``): it writes each task's
folder, runs each scripted agent against a fresh project sandbox through the kind's agent server
(a real MCP client session; every command runs in the box), replays the run into another fresh
sandbox and requires it faithful, and labels it with the task's verifier (the author's tests) on
the replayed state; a label that differs from what the script was written to do stops the build.
This module turns the coding tasks into its suite tasks (``initial/``, ``verify.py``,
``author_tests.py``, four scripted agents) and writes the suite's own manifest and README.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from pathlib import Path

from dataset.models import DirectoryTreeState, Task, Trajectory, VerifierRef
from dataset.store import Manifest, load_dataset, write_manifest
from suites.ds import build as ds_build
from suites.ds.spec import SuiteTask
from suites.workspace import verifier
from suites.workspace.policies import policies
from suites.workspace.spec import TEST_COMMAND, CodingTask
from suites.workspace.tasks import all_tasks

SUITE_NAME = "workspace-suite"
SUBDOMAIN = "workspace"
AUTHOR_TESTS_FILE = verifier.AUTHOR_TESTS
VERIFIER_TIMEOUT = 60.0


def suite_task(task: CodingTask, index: int) -> SuiteTask:
    """``task``, the ``index``-th of the suite, as a suite task: its record, initial project,
    verifier and four scripted runs."""
    record = Task(
        id=task.id,
        domain="ds",
        subdomain=SUBDOMAIN,
        instruction=f"{task.instruction} The project's tests run with `{TEST_COMMAND}`.",
        initial_state=DirectoryTreeState(path="initial"),
        verifier=VerifierRef(path="verify.py", timeout_seconds=VERIFIER_TIMEOUT),
        metadata={"family": task.family, "author_tests": AUTHOR_TESTS_FILE},
    )
    return SuiteTask(
        task=record,
        kind=task.family,
        build_initial=lambda folder: _write_initial(task, folder),
        verifier=inspect.getsource(verifier),
        checks=task.checks,
        policies=policies(task, index),
    )


def _write_initial(task: CodingTask, folder: Path) -> None:
    task.write_project(folder / "initial")
    (folder / AUTHOR_TESTS_FILE).write_text(task.author_tests, encoding="utf-8")


async def build_suite(
    output: Path, tasks: list[CodingTask], *, jobs: int = 2, description: str = ""
) -> ds_build.BuildReport:
    """Write the whole suite to ``output`` (replacing it) and return what was made."""
    # A task keeps its place in the whole suite (its fourth agent's style) when built alone.
    positions = {task.id: index for index, task in enumerate(all_tasks())}
    suites = [
        suite_task(task, positions.get(task.id, len(positions) + n)) for n, task in enumerate(tasks)
    ]
    report = await ds_build.build_suite(output, suites, jobs=jobs, description=description)
    write_manifest(output, Manifest(name=SUITE_NAME, description=description))
    (output / "README.md").write_text(
        readme_text(suites, load_dataset(output).trajectories.values()), encoding="utf-8"
    )
    return report


README_INTRO = """# Workspace judging suite

Built by `python -m suites.workspace --output datasets/workspace` (see `suites/workspace/`). Each
task is a small Python project (`initial/`) and an instruction; its verifier (`verify.py`, the
same for every task) runs the task author's tests (`author_tests.py`) against the project the
run left. Every run is a scripted coding agent recorded through the workspace kind's agent
server (shell commands ran in the dataset-code box); every label is the verifier's verdict on
the replayed state. Do not edit by hand: change the task modules in `suites/workspace/tasks/`
and rebuild.
"""


def readme_text(suites: list[SuiteTask], trajectories: Iterable[Trajectory]) -> str:
    """The suite's README: the DS suite's table of tasks under this suite's introduction."""
    table = ds_build.readme_text(suites, trajectories).split("\n| task |", 1)[1]
    return f"{README_INTRO}\n| task |{table}"
