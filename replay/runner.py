"""Replaying a whole dataset: concurrency, incremental and resumable reports, the summary table.

Each trajectory's fidelity report is appended to ``fidelity.jsonl`` in the output folder (flushed
and synced) the moment it is done, so an interrupted run loses at most the replays in flight.
Running again skips trajectories that already have a report made from the same trajectory file
on the same backend (``fresh=True`` starts over). A bad trajectory or task becomes a report (or a
dataset problem) naming its file and step; it never stops the other replays.

Postgres roles are cluster-global, so trajectories of one task whose SQL manages roles are
replayed one at a time: two of them creating the same role at once would fail each other.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from dataset.actions import ToolCallAction
from dataset.models import Trajectory
from dataset.store import (
    TRAJECTORIES_DIR,
    Dataset,
    JsonlAppender,
    load_dataset,
    read_jsonl,
    write_json_atomic,
)
from replay.engine import replay_trajectory
from replay.normalise import sql_text
from replay.report import FidelityReport
from sandboxes.leftovers import collect_all_leftovers
from sandboxes.postgres.provider import may_touch_roles
from sandboxes.providers import BackendChoice, ProviderSet, sandbox_kind

REPORT_FILE = "fidelity.jsonl"
"""One ``FidelityReport`` per line, in completion order."""

SUMMARY_FILE = "summary.json"
"""The ``ReplaySummary`` of the last run."""


class SubdomainRow(BaseModel):
    """One row of the replay table."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    domain: str
    """The domain."""
    subdomain: str
    """The subdomain."""
    trajectories: int = 0
    """Trajectories with a report."""
    faithful: int = 0
    """Replays whose every step matched."""
    diverged: int = 0
    """Replays with at least one diverging step."""
    failed: int = 0
    """Replays that could not run a step or build the sandbox."""
    unsupported: int = 0
    """Trajectories of a domain that has no replay yet."""
    verifier_checked: int = 0
    """Replays whose task verifier ran and had a recorded label to compare with."""
    verifier_agrees: int = 0
    """Of those, how many agreed with the recorded label."""


class ReplaySummary(BaseModel):
    """What ``agentjudge replay`` prints and writes to ``summary.json``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    dataset: str
    """The dataset folder."""
    backends: BackendChoice
    """The sandbox backends used."""
    rows: list[SubdomainRow] = Field(default_factory=list)
    """Per subdomain."""
    total: SubdomainRow
    """All subdomains together."""
    problems: list[str] = Field(default_factory=list)
    """Dataset problems and per-trajectory problems, each naming its file."""
    resumed: int = 0
    """Reports taken from an earlier run instead of replaying again."""
    seconds: float = 0.0
    """Wall time of this run."""


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_reports(path: Path) -> dict[str, FidelityReport]:
    """Reports already in ``fidelity.jsonl`` (the last one per trajectory); a line torn by a
    kill is skipped, so that trajectory is replayed again."""
    return {report.trajectory_id: report for report in read_jsonl(path, FidelityReport)}


def summarise(
    dataset: str, choice: BackendChoice, reports: list[FidelityReport], problems: list[str]
) -> ReplaySummary:
    """Count reports per subdomain."""
    rows: dict[tuple[str, str], SubdomainRow] = {}
    total = SubdomainRow(domain="all", subdomain="all")
    for report in sorted(reports, key=lambda item: (item.domain, item.subdomain)):
        key = (report.domain, report.subdomain)
        row = rows.setdefault(key, SubdomainRow(domain=report.domain, subdomain=report.subdomain))
        for target in (row, total):
            target.trajectories += 1
            setattr(target, report.verdict, getattr(target, report.verdict) + 1)
            if report.verifier is not None and report.verifier.agrees is not None:
                target.verifier_checked += 1
                target.verifier_agrees += int(report.verifier.agrees)
    return ReplaySummary(
        dataset=dataset, backends=choice, rows=list(rows.values()), total=total, problems=problems
    )


def _manages_roles(trajectory: Trajectory) -> bool:
    return any(
        isinstance(step.action, ToolCallAction) and may_touch_roles(sql_text(step.action.arguments))
        for step in trajectory.steps
    )


def _plan(
    dataset: Dataset,
    root: Path,
    choice: BackendChoice,
    earlier: dict[str, FidelityReport],
    only: set[str] | None,
) -> tuple[dict[str, FidelityReport], list[tuple[Trajectory, str]]]:
    """Split the trajectories into those with a current earlier report and those to replay."""
    reports: dict[str, FidelityReport] = {}
    pending: list[tuple[Trajectory, str]] = []
    for trajectory_id, trajectory in sorted(dataset.trajectories.items()):
        if only is not None and trajectory_id not in only:
            continue
        digest = file_digest(root / TRAJECTORIES_DIR / f"{trajectory_id}.json")
        kind = sandbox_kind(dataset.tasks[trajectory.task_id])
        backend = choice.label(kind) if kind else "none"
        previous = earlier.get(trajectory_id)
        if previous and previous.trajectory_sha256 == digest and previous.backend == backend:
            reports[trajectory_id] = previous
        else:
            pending.append((trajectory, digest))
    return reports, pending


async def replay_dataset(
    root: Path,
    output: Path,
    *,
    choice: BackendChoice | None = None,
    jobs: int = 4,
    fresh: bool = False,
    only: set[str] | None = None,
    on_report: Callable[[FidelityReport], None] | None = None,
) -> ReplaySummary:
    """Replay every trajectory of the dataset at ``root``; write and return the summary.

    Raises ``SandboxError`` before replaying anything when a backend the replays need cannot
    start."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    choice = choice or BackendChoice()
    dataset: Dataset = load_dataset(root, partial=True)
    problems = [str(problem) for problem in dataset.problems if problem.severity == "error"]
    output.mkdir(parents=True, exist_ok=True)
    report_path = output / REPORT_FILE
    if fresh and report_path.exists():
        report_path.unlink()
    earlier = read_reports(report_path)
    await collect_all_leftovers(choice.postgres_dsn if choice.postgres == "external" else None)

    reports, pending = _plan(dataset, root, choice, earlier, only)
    resumed = len(reports)
    writer = JsonlAppender(report_path)
    semaphore = asyncio.Semaphore(max(1, jobs))
    task_locks: dict[str, asyncio.Lock] = {}

    async def replay_one(trajectory: Trajectory, digest: str) -> None:
        task = dataset.tasks[trajectory.task_id]
        # Taken before a job slot, so a replay waiting for its task's turn holds no slot.
        exclusive: contextlib.AbstractAsyncContextManager[object] = (
            task_locks.setdefault(task.id, asyncio.Lock())
            if sandbox_kind(task) == "postgres" and _manages_roles(trajectory)
            else contextlib.nullcontext()
        )
        async with exclusive, semaphore:
            result = await replay_trajectory(
                trajectory,
                task,
                dataset.task_dir(task.id),
                providers,
                file=f"{TRAJECTORIES_DIR}/{trajectory.id}.json",
            )
        result.report.trajectory_sha256 = digest
        reports[trajectory.id] = result.report
        await writer.append(result.report.model_dump_json())
        if on_report is not None:
            on_report(result.report)

    async with ProviderSet(choice) as providers:
        # Every backend the replays need starts first: one that cannot (no Docker engine, no
        # debootstrap to build the image) stops the run with its reason, raised as SandboxError,
        # instead of failing each trajectory on its own.
        for kind in sorted(
            {
                kind
                for trajectory, _ in pending
                if (kind := sandbox_kind(dataset.tasks[trajectory.task_id])) is not None
            }
        ):
            await providers.get(kind)
        outcomes = await asyncio.gather(
            *(replay_one(trajectory, digest) for trajectory, digest in pending),
            return_exceptions=True,
        )
    for (trajectory, _), outcome in zip(pending, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, Exception):
                raise outcome
            problems.append(
                f"{TRAJECTORIES_DIR}/{trajectory.id}.json: replay crashed: "
                f"{type(outcome).__name__}: {outcome}"
            )
    for report in reports.values():
        problems.extend(report.problems)
    summary = summarise(str(root), choice, list(reports.values()), problems)
    summary.resumed = resumed
    summary.seconds = loop.time() - started
    write_json_atomic(output / SUMMARY_FILE, json.loads(summary.model_dump_json()))
    return summary
