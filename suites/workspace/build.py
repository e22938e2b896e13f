"""Building the workspace suite: project folders, recorded coding-agent runs, verifier labels.

The DS suite's machinery does the recording and labelling (``suites.ds.build``): each scripted
agent runs against a fresh project sandbox through the kind's agent server (a real MCP client
session; every command runs in the box), the run is replayed into another fresh sandbox and must
be faithful, and the task's verifier (the author's tests) on the replayed state gives the label.
A label that differs from what the script was written to do stops the build. This module adds
the workspace tasks' folders (``initial/``, ``verify.py``, ``author_tests.py``), the manifest
and the README.
"""

from __future__ import annotations

import asyncio
import inspect
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from dataset.models import DirectoryTreeState, Task, Trajectory, VerifierRef
from dataset.store import TRAJECTORIES_DIR, Manifest, load_dataset, write_manifest, write_trajectory
from environments.backends import BackendChoice, ProviderSet
from suites.ds.build import label_run, record_run, write_task_folder
from suites.ds.spec import SuiteTask
from suites.labels import BuildError
from suites.workspace import verifier
from suites.workspace.policies import RUNS_PER_TASK, policies
from suites.workspace.spec import TEST_COMMAND, CodingTask
from suites.workspace.tasks import all_tasks

SUITE_NAME = "workspace-suite"
SUBDOMAIN = "workspace"
AUTHOR_TESTS_FILE = verifier.AUTHOR_TESTS
VERIFIER_TIMEOUT = 60.0


@dataclass
class BuildReport:
    """What the build made."""

    runs: list[Trajectory] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def suite_task(task: CodingTask, index: int) -> SuiteTask:
    """``task`` as a suite task: its record, initial project, verifier and four scripted runs."""
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


async def _build_task(
    suite: SuiteTask, output: Path, providers: ProviderSet, first_sequence: int
) -> list[Trajectory]:
    folder = output / "tasks" / suite.task.id
    built: list[Trajectory] = []
    for offset, policy in enumerate(suite.policies):
        recorded = await record_run(suite, policy, folder, providers, first_sequence + offset)
        labelled = await label_run(recorded, suite, folder, providers)
        assert labelled.label is not None
        if labelled.label.value != policy.intent:
            raise BuildError(
                f"{TRAJECTORIES_DIR}/{labelled.id}.json: written to {policy.intent}"
                f" ({policy.note}) but the verifier says {labelled.label.value}:"
                f" {labelled.label.verifier_output}"
            )
        write_trajectory(output, labelled)
        built.append(labelled)
    return built


async def build_suite(
    output: Path, tasks: list[CodingTask], *, jobs: int = 2, description: str = ""
) -> BuildReport:
    """Write the whole suite to ``output`` (replacing it) and return what was made."""
    # Positions in the whole suite, so that building some tasks (``--only``) makes the same
    # runs, with the same synthetic times, as building all of them.
    positions = {task.id: index for index, task in enumerate(all_tasks())}
    indices = [positions.get(task.id, len(positions) + n) for n, task in enumerate(tasks)]
    suites = [suite_task(task, index) for task, index in zip(tasks, indices, strict=True)]
    if output.exists():
        shutil.rmtree(output)
    write_manifest(output, Manifest(name=SUITE_NAME, description=description))
    (output / TRAJECTORIES_DIR).mkdir()
    for suite in suites:
        write_task_folder(output, suite)
    report = BuildReport()
    slots = asyncio.Semaphore(max(1, jobs))
    firsts = [RUNS_PER_TASK * index for index in indices]

    async def one(suite: SuiteTask, first: int) -> list[Trajectory]:
        async with slots:
            return await _build_task(suite, output, providers, first)

    async with ProviderSet(BackendChoice()) as providers:
        outcomes = await asyncio.gather(
            *(one(suite, first) for suite, first in zip(suites, firsts, strict=True)),
            return_exceptions=True,
        )
    for suite, outcome in zip(suites, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, Exception):
                raise outcome
            report.problems.append(f"tasks/{suite.task.id}: {outcome}")
        else:
            report.runs.extend(outcome)
    loaded = load_dataset(output)
    report.problems.extend(str(problem) for problem in loaded.errors)
    (output / "README.md").write_text(
        readme_text(suites, loaded.trajectories.values()), encoding="utf-8"
    )
    return report


README_HEADER = """# Workspace judging suite

Built by `python -m suites.workspace --output datasets/workspace` (see `suites/workspace/`). Each
task is a small Python project (`initial/`) and an instruction; its verifier (`verify.py`, the
same for every task) runs the task author's tests (`author_tests.py`) against the project the
run left. Every run is a scripted coding agent recorded through the workspace kind's agent
server (shell commands ran in the dataset-code box); every label is the verifier's verdict on
the replayed state. Do not edit by hand: change the task modules in `suites/workspace/tasks/`
and rebuild.

| task | kind | what the author's tests check | runs | PASS | FAIL |
| --- | --- | --- | --- | --- | --- |
"""


def readme_text(suites: list[SuiteTask], trajectories: Iterable[Trajectory]) -> str:
    """The suite's README: one row per task, then the totals."""
    counts: dict[str, list[int]] = {suite.task.id: [0, 0] for suite in suites}
    for trajectory in trajectories:
        if trajectory.label is not None and trajectory.task_id in counts:
            counts[trajectory.task_id][0 if trajectory.label.value == "PASS" else 1] += 1
    rows = []
    for suite in suites:
        passed, failed = counts[suite.task.id]
        rows.append(
            f"| `{suite.task.id}` | {suite.kind} | {suite.checks} | {passed + failed} |"
            f" {passed} | {failed} |"
        )
    total_pass = sum(value[0] for value in counts.values())
    total_fail = sum(value[1] for value in counts.values())
    rows.append(f"| **all** | | | {total_pass + total_fail} | {total_pass} | {total_fail} |")
    return README_HEADER + "\n".join(rows) + "\n"
