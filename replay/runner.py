"""Replaying a whole dataset: concurrency, incremental and resumable reports, the summary table.

Each trajectory's fidelity report is appended to ``fidelity.jsonl`` in the output folder (flushed
and synced) the moment it is done, so an interrupted run loses at most the replays in flight.
Running again skips trajectories that already have a report made from the same trajectory file
on the same backend, except those whose sandbox never got ready or could not be made, and those
that diverged only once (``FidelityReport.diverged_once``; ``fresh=True`` starts over);
the results file, resume and concurrency are ``storage.jobs``'s, and so is the output folder's
lock: a second process replaying into the same folder stops with
``storage.locks.FolderBusyError`` before any work (or waits, ``wait=True``).
A bad trajectory or task becomes a report (or a dataset problem) naming its file and step; it
never stops the other replays.

Trajectories that their environment kind says must replay exclusively
(``EnvironmentKind.replays_exclusively``: Postgres SQL that manages cluster-global roles) are
replayed one at a time per task: two of them creating the same role at once would fail each other.

Where a kind's provider is slow to make a sandbox (``SandboxProvider.prepares_ahead``: a desktop
starts its applications), the fresh sandboxes of the next trajectories, in the order the jobs
take them, are made while the current ones replay (``replay.engine.initial_sandbox`` in a
``sandboxes.ahead.AheadPool``, sized by ``environments.capacity.auto_ahead``); the pool destroys
what was not taken when the run ends, fails or is cancelled.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from dataset.models import Task, Trajectory
from dataset.store import TRAJECTORIES_DIR, Dataset, check_dataset_folder, load_dataset
from environments.backends import BackendChoice, ProviderSet
from environments.capacity import auto_ahead, auto_jobs
from environments.kind import EnvironmentKind
from environments.leftovers import collect_all_leftovers
from environments.registry import kind_for_task
from replay.diverged_screens import save_diverged_screens
from replay.engine import initial_sandbox, replay_trajectory
from replay.report import FidelityReport
from sandboxes.ahead import AheadCounts, AheadPool
from sandboxes.base import Releasable, Sandbox
from sandboxes.confinement import require_bubblewrap
from storage.files import write_json_atomic
from storage.jobs import Job, ResumableJobs
from storage.jsonl import read_jsonl

DEFAULT_OUTPUT = Path("runs/replay")
"""Reports go to ``runs/replay/<dataset folder name>-<backend>/`` unless the caller says."""

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
    diverged_presentation: int = 0
    """Of those, how many differ only in what the agent was shown: no diverging step could have
    left the end state differently (``FidelityReport.divergence``)."""
    failed: int = 0
    """Replays that could not run a step or build the sandbox."""
    unsupported: int = 0
    """Trajectories of a domain that has no replay yet."""
    verifier_checked: int = 0
    """Replays whose task verifier ran and had a recorded label to compare with."""
    verifier_agrees: int = 0
    """Of those, how many agreed with the recorded label."""
    verifier_errors: int = 0
    """Replays whose verifier crashed, was killed or timed out (no verdict, not compared)."""
    label_crashes: int = 0
    """Labelled replays whose recorded verification crashed (the label is not compared)."""


class AheadFigures(AheadCounts):
    """What the fresh sandboxes made ahead of need did: the pool's counts and its size."""

    size: int = 0
    """Sandboxes made ahead at most at once (0: none, e.g. no kind replayed prepares ahead)."""


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
    resumed_not_faithful: int = 0
    """Of those, how many diverged or failed (``--fresh`` replays them again)."""
    jobs: int = 0
    """Replays run at once."""
    ahead: AheadFigures = Field(default_factory=AheadFigures)
    """The fresh sandboxes made ahead of need."""
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
            if report.verdict == "diverged" and report.divergence == "presentation":
                target.diverged_presentation += 1
            check = report.verifier
            if check is None:
                continue
            target.verifier_errors += int(check.replayed.errored)
            target.label_crashes += int(check.recorded_crash is not None)
            if check.agrees is not None:
                target.verifier_checked += 1
                target.verifier_agrees += int(check.agrees)
    return ReplaySummary(
        dataset=dataset, backends=choice, rows=list(rows.values()), total=total, problems=problems
    )


@dataclasses.dataclass(frozen=True)
class _Replay:
    """One trajectory to replay, with what decides whether an earlier report is current."""

    trajectory: Trajectory
    task: Task
    kind: EnvironmentKind | None
    """The task's environment kind (None: no kind replays it yet)."""
    digest: str
    """SHA-256 of the trajectory file."""
    backend: str
    """The backend its environment kind uses (``none`` for a kind without a replay)."""


def _jobs(
    dataset: Dataset, root: Path, choice: BackendChoice, only: set[str] | None
) -> list[Job[_Replay]]:
    """One job per trajectory to consider, in id order. Trajectories of one task whose SQL
    manages roles (their kind says they replay exclusively) share an exclusive group."""
    jobs: list[Job[_Replay]] = []
    supplied = {  # each supplied state hashed once, however many trajectories its task has
        task_id: file_digest(path) if path.is_file() else str(path)
        for task_id, path in choice.environments.items()
    }
    for trajectory_id, trajectory in sorted(dataset.trajectories.items()):
        if only is not None and trajectory_id not in only:
            continue
        task = dataset.tasks[trajectory.task_id]
        file = f"{TRAJECTORIES_DIR}/{trajectory_id}.json"
        kind = kind_for_task(task)
        digest = file_digest(root / file)
        if task.id in supplied:  # a report made from another starting state does not count
            digest += "+" + supplied[task.id]
        replay = _Replay(
            trajectory,
            task,
            kind,
            digest,
            choice.label(kind.name) if kind else "none",
        )
        exclusive = task.id if kind is not None and kind.replays_exclusively(trajectory) else None
        jobs.append(Job(trajectory_id, replay, name=f"{file}: replay", exclusive=exclusive))
    return jobs


def _is_current(job: Job[_Replay], earlier: FidelityReport) -> bool:
    """An earlier report counts when made from the same trajectory file on the same backend, and
    not from a sandbox that never got ready or could not be made (that says nothing about the
    trajectory), nor from a replay that diverged only once (the first of two replays differed,
    the second did not: the next run looks again)."""
    return (
        earlier.trajectory_sha256 == job.item.digest
        and earlier.backend == job.item.backend
        and not earlier.not_ready
        and not earlier.infrastructure
        and not earlier.diverged_once
    )


class _FreshAhead(Releasable):
    """The fresh sandboxes of the next replays, made in an ``AheadPool`` while the current ones
    run: one per job of ``jobs`` (in the order they start), at most ``size`` at once."""

    def __init__(
        self,
        dataset: Dataset,
        providers: ProviderSet,
        jobs: list[Job[_Replay]],
        size: int,
    ) -> None:
        self.dataset = dataset
        self.providers = providers
        self.jobs = jobs
        self.pool = AheadPool(size if jobs else 0)
        self._started: set[str] = set()

    def top_up(self) -> None:
        """Start making the next jobs' sandboxes while the pool has room."""
        for job in self.jobs:
            if self.pool.full:
                return
            if job.key in self._started or job.key in self.pool:
                continue
            item = job.item
            make = functools.partial(
                initial_sandbox,
                item.trajectory,
                item.task,
                self.dataset.task_dir(item.task.id),
                self.providers,
            )
            self.pool.prepare(job.key, make)

    async def take(self, key: str) -> Sandbox | None:
        """The sandbox made ahead for the job ``key`` (None: none was, the replay makes its
        own). Its place in the pool is free at once: the next job's sandbox is made in it,
        while this one waits for the rest of its own, if need be."""
        self._started.add(key)
        return await self.pool.take(key, freed=self.top_up)

    async def release(self) -> None:
        """Stop the makings still going and destroy every sandbox not taken."""
        await self.pool.aclose()


async def _fresh_ahead(
    dataset: Dataset,
    providers: ProviderSet,
    pending: list[Job[_Replay]],
    *,
    jobs: int,
    ahead: int | None,
) -> _FreshAhead:
    """Fresh sandboxes to make ahead for ``pending`` (started providers): for the kinds whose
    providers are slow to make one (``prepares_ahead``), never for replays of an exclusive group
    (they wait for each other, so when they start is not known), in the order the jobs start
    (``ResumableJobs.run`` starts them in order); ``ahead`` at most at once (None: from the
    machine, ``auto_ahead``)."""
    kinds = {job.item.kind.name: job.item.kind for job in pending if job.item.kind is not None}
    slow = {
        name: kind for name, kind in kinds.items() if (await providers.get(name)).prepares_ahead
    }
    early = [
        job
        for job in pending
        if job.item.kind is not None and job.item.kind.name in slow and job.exclusive is None
    ]
    if ahead is None:
        ahead = auto_ahead((kind.worker_resources for kind in slow.values()), jobs=jobs)
    made = _FreshAhead(dataset, providers, early, ahead)
    made.top_up()
    return made


async def replay_dataset(
    root: Path,
    output: Path,
    *,
    choice: BackendChoice | None = None,
    jobs: int | None = None,
    fresh: bool = False,
    only: set[str] | None = None,
    on_report: Callable[[FidelityReport], None] | None = None,
    wait: bool = False,
    on_planned: Callable[[int, int], None] | None = None,
    on_note: Callable[[str], None] | None = None,
    ahead: int | None = None,
) -> ReplaySummary:
    """Replay every trajectory of the dataset at ``root``; write and return the summary.
    ``jobs``: replays at once (None: as many as the machine holds of the kinds replayed,
    ``environments.capacity.auto_jobs``). ``ahead``: fresh sandboxes made ahead of need at
    most at once, for kinds whose providers prepare ahead (None: as many as the machine holds
    beside the jobs, ``environments.capacity.auto_ahead``; 0: none).

    ``on_planned(new, reused)`` is called once the replays are planned, ``on_report`` with each
    report made, ``on_note`` with a line before a slow step that makes no report (starting a
    sandbox backend, which may first build its Docker image).

    Raises, before replaying anything: ``DatasetNotFoundError`` when ``root`` is missing or
    unreadable; ``FolderBusyError`` when another process writes ``output`` (with ``wait=True``,
    waits for it instead); ``SandboxError`` when a backend the replays need cannot start."""
    check_dataset_folder(root)
    with ResumableJobs(
        output / REPORT_FILE,
        FidelityReport,
        lambda report: report.trajectory_id,
        fresh=fresh,
        wait=wait,
    ) as results_file:
        return await _replay_into(
            results_file, root, output, choice, jobs, only, on_report, on_planned, on_note, ahead
        )


async def _replay_into(
    results_file: ResumableJobs[FidelityReport],
    root: Path,
    output: Path,
    choice: BackendChoice | None,
    jobs: int | None,
    only: set[str] | None,
    on_report: Callable[[FidelityReport], None] | None,
    on_planned: Callable[[int, int], None] | None = None,
    on_note: Callable[[str], None] | None = None,
    ahead: int | None = None,
) -> ReplaySummary:
    """``replay_dataset`` once its output folder is this process's."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    choice = choice or BackendChoice()
    dataset: Dataset = load_dataset(root, partial=True)
    problems = [str(problem) for problem in dataset.problems if problem.severity == "error"]
    await collect_all_leftovers(choice.endpoints)
    plan = results_file.plan(_jobs(dataset, root, choice, only), is_current=_is_current)
    if on_planned is not None:
        on_planned(len(plan.pending), len(plan.reused))

    async def replay_one(item: _Replay) -> FidelityReport:
        made = await fresh.take(item.trajectory.id)
        result = await replay_trajectory(
            item.trajectory,
            item.task,
            dataset.task_dir(item.task.id),
            providers,
            file=f"{TRAJECTORIES_DIR}/{item.trajectory.id}.json",
            made=made,
        )
        result.report.trajectory_sha256 = item.digest
        await asyncio.to_thread(save_diverged_screens, output, result.report)
        return result.report

    async with ProviderSet(choice) as providers:
        # Every backend the replays need starts first: one that cannot (no Docker engine, no
        # debootstrap to build the image) stops the run with its reason, raised as SandboxError,
        # instead of failing each trajectory on its own.
        needed = {job.item.kind.name for job in plan.pending if job.item.kind is not None}
        for name in sorted(needed):
            if on_note is not None:
                on_note(
                    f"starting the {choice.label(name)} backend of {name} "
                    "(the first Docker run builds its image: minutes)"
                    if choice.label(name) == "docker"
                    else f"starting the {choice.label(name)} backend of {name}"
                )
            await providers.get(name)
        # Verifiers run in a bubblewrap box: without bwrap, say so once, before any replay.
        if any(job.item.task.verifier is not None for job in plan.pending):
            await asyncio.to_thread(require_bubblewrap)  # may install it with apt (minutes)
        if jobs is None:
            jobs = auto_jobs(
                job.item.kind.worker_resources for job in plan.pending if job.item.kind is not None
            )
        fresh = await _fresh_ahead(dataset, providers, plan.pending, jobs=jobs, ahead=ahead)
        async with fresh:
            results = await results_file.run(
                plan.pending, replay_one, concurrency=jobs, on_result=on_report
            )
    problems.extend(results.problems)
    reports = {**plan.reused, **results.made}
    for report in reports.values():
        problems.extend(report.problems)
    summary = summarise(str(root), choice, list(reports.values()), problems)
    summary.resumed = len(plan.reused)
    summary.resumed_not_faithful = sum(
        report.verdict in ("diverged", "failed") for report in plan.reused.values()
    )
    summary.jobs = jobs or 0
    summary.ahead = AheadFigures(size=fresh.pool.size, **fresh.pool.counts.model_dump())
    summary.seconds = loop.time() - started
    write_json_atomic(output / SUMMARY_FILE, json.loads(summary.model_dump_json()))
    return summary
