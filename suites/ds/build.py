"""Building the DS suite: task folders, recorded runs, labels from the verifiers.

For every task: write its folder (``task.json``, the initial state from its deterministic
builder, ``verify.py``). For every scripted agent of the task: create a fresh sandbox, run the
agent through the real MCP server of that sandbox (``filesystem_server``, or the agents' SQL
server), and record each call. Then replay the recording into another fresh sandbox, require
every step to match, run the task's verifier on the replayed state, and take its exit code as the
label (``source: verifier``, with its output). A run whose label differs from what its script
intended, or whose replay is not faithful, stops the build with the reason: the suite only ships
runs that do what they claim to exercise.

Runs of one task are recorded one after another (tasks that manage roles would otherwise race for
role names); tasks run concurrently.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mcp import Client

from dataset.models import Trajectory
from dataset.store import (
    TRAJECTORIES_DIR,
    Manifest,
    load_dataset,
    write_manifest,
    write_task,
    write_trajectory,
)
from environments.backends import BackendChoice, ProviderSet
from environments.registry import kind_for_task
from suites.ds.recorder import RecordingSession, run_start
from suites.ds.spec import AgentPolicy, SuiteTask
from suites.labels import BuildError, verifier_label

SUITE_NAME = "ds-suite"


@dataclass
class BuiltRun:
    """One recorded run and its verifier label."""

    trajectory: Trajectory
    policy: AgentPolicy


@dataclass
class BuildReport:
    """What the build made."""

    runs: list[BuiltRun] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def write_task_folder(output: Path, suite_task: SuiteTask) -> Path:
    """The task's folder: record, initial state, verifier."""
    task = suite_task.task
    folder = write_task(output, task)
    suite_task.build_initial(folder)
    (folder / "verify.py").write_text(suite_task.verifier, encoding="utf-8")
    empty = sorted(
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_dir() and not any(path.iterdir())
    )
    if empty:
        # git keeps no empty directory: a clone would start from another state than the runs.
        raise BuildError(f"tasks/{task.id}: empty directories cannot ship: {', '.join(empty)}")
    return folder


async def record_run(
    suite_task: SuiteTask,
    policy: AgentPolicy,
    folder: Path,
    providers: ProviderSet,
    sequence: int,
) -> Trajectory:
    """Run one scripted agent against a fresh sandbox and return its unlabelled trajectory."""
    task = suite_task.task
    kind = kind_for_task(task)
    if kind is None:
        raise BuildError(f"{task.id}: not a filesystem or Postgres task")
    provider = await providers.get(kind.name)
    sandbox = await provider.create(task, folder)
    async with sandbox:
        server, root = kind.agent_server(sandbox), kind.sandbox_root(sandbox)
        if server is None:
            raise BuildError(f"{task.id}: the {kind.name} kind has no agent tools to record")
        started = run_start(sequence)
        async with Client(server.server()) as client:
            session = RecordingSession(client, root, started)
            final = await policy.run(session)
    return Trajectory(
        id=f"{task.id}--{policy.name}",
        task_id=task.id,
        agent=policy.agent,
        model=None,
        steps=session.steps,
        final_response=final,
        stop_reason="completed",
        turn_count=len(session.steps),
        started_at=started,
        ended_at=session.ended_at,
        metadata={
            "scripted_policy": policy.name,
            "intended": policy.intent,
            "failure_kind": policy.failure,
            "note": policy.note,
        },
    )


async def label_run(
    trajectory: Trajectory, suite_task: SuiteTask, folder: Path, providers: ProviderSet
) -> Trajectory:
    """Replay the run, require it faithful, and label it with the verifier's verdict."""
    return await verifier_label(trajectory, suite_task.task, folder, providers)


async def _build_task(
    suite_task: SuiteTask, output: Path, providers: ProviderSet, first_sequence: int
) -> list[BuiltRun]:
    folder = output / "tasks" / suite_task.task.id
    built: list[BuiltRun] = []
    for offset, policy in enumerate(suite_task.policies):
        trajectory = await record_run(
            suite_task, policy, folder, providers, first_sequence + offset
        )
        labelled = await label_run(trajectory, suite_task, folder, providers)
        assert labelled.label is not None
        if labelled.label.value != policy.intent:
            raise BuildError(
                f"{TRAJECTORIES_DIR}/{labelled.id}.json: written to {policy.intent}"
                f" ({policy.note}) but the verifier says {labelled.label.value}:"
                f" {labelled.label.verifier_output}"
            )
        write_trajectory(output, labelled)
        built.append(BuiltRun(labelled, policy))
    return built


async def build_suite(
    output: Path, tasks: list[SuiteTask], *, jobs: int = 4, description: str = ""
) -> BuildReport:
    """Write the whole suite to ``output`` (replacing it) and return what was made."""
    if output.exists():
        shutil.rmtree(output)
    write_manifest(output, Manifest(name=SUITE_NAME, description=description))
    (output / TRAJECTORIES_DIR).mkdir()
    for suite_task in tasks:
        write_task_folder(output, suite_task)
    report = BuildReport()
    slots = asyncio.Semaphore(max(1, jobs))
    sequences = []
    count = 0
    for suite_task in tasks:
        sequences.append(count)
        count += len(suite_task.policies)

    async def one(suite_task: SuiteTask, first: int) -> list[BuiltRun]:
        async with slots:
            return await _build_task(suite_task, output, providers, first)

    async with ProviderSet(BackendChoice()) as providers:
        outcomes = await asyncio.gather(
            *(one(task, first) for task, first in zip(tasks, sequences, strict=True)),
            return_exceptions=True,
        )
    for suite_task, outcome in zip(tasks, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, Exception):
                raise outcome
            report.problems.append(f"tasks/{suite_task.task.id}: {outcome}")
        else:
            report.runs.extend(outcome)
    loaded = load_dataset(output)
    report.problems.extend(str(problem) for problem in loaded.errors)
    write_readme(output, tasks, loaded.trajectories.values())
    return report


README_HEADER = """# DS judging suite

Built by `python -m suites.ds --output datasets/ds` (see `suites/ds/`): every initial state is
generated deterministically; every run is a scripted agent recorded through the real MCP server
of a fresh sandbox; every label is the task verifier's verdict on the replayed state. Do not
edit by hand, not even a `verify.py` (each is written from the `check` function of its task's
module in `suites/ds/tasks/`): change the task modules and rebuild.

| task | subdomain | kind | what the verifier checks | runs | PASS | FAIL |
| --- | --- | --- | --- | --- | --- | --- |
"""


def readme_text(tasks: list[SuiteTask], trajectories: Iterable[Trajectory]) -> str:
    """The suite's README: one table row per task, then the totals."""
    counts: dict[str, list[int]] = {task.task.id: [0, 0] for task in tasks}
    for trajectory in trajectories:
        if trajectory.label is not None and trajectory.task_id in counts:
            counts[trajectory.task_id][0 if trajectory.label.value == "PASS" else 1] += 1
    rows = []
    for suite_task in tasks:
        passed, failed = counts[suite_task.task.id]
        task = suite_task.task
        rows.append(
            f"| `{task.id}` | {task.subdomain} | {suite_task.kind} | {suite_task.checks} |"
            f" {passed + failed} | {passed} | {failed} |"
        )
    total_pass = sum(value[0] for value in counts.values())
    total_fail = sum(value[1] for value in counts.values())
    rows.append(f"| **all** | | | | {total_pass + total_fail} | {total_pass} | {total_fail} |")
    return README_HEADER + "\n".join(rows) + "\n"


def write_readme(output: Path, tasks: list[SuiteTask], trajectories: Iterable[Trajectory]) -> None:
    """Write the suite's README.md."""
    (output / "README.md").write_text(readme_text(tasks, trajectories), encoding="utf-8")
