"""One resumable runner for results files made of one JSON record per job.

A *job* makes one record (a replay's fidelity report, a judge run's verdict) under a key. The
runner locks the results file's folder for its process (``storage.locks``: a second process on
the same folder stops, or waits), repairs a last line torn by a kill (``storage.jsonl``), reads
the records an earlier invocation left in the results file (the last one per key), sets aside
the jobs whose earlier record is still current, runs the others concurrently, and appends each
record the moment its job finishes, so an interrupted invocation loses only the jobs in flight.
Jobs of one *exclusive group* run one at a time (e.g. replays that manage the same
cluster-global database roles). A job that crashes becomes a ``JobCrash`` naming it; the other
jobs carry on.

Must not know what the items or records are: deciding which records are current, what a worker
does and how the results are summarised belongs to the callers (``replay.runner``,
``bench.grid_runner``).
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel

from storage.jsonl import JsonlAppender, read_jsonl, repair_torn_tail
from storage.locks import lock_folder

__all__ = ["Job", "JobCrash", "JobPlan", "JobResults", "ResumableJobs"]

ItemT = TypeVar("ItemT")
RecordT = TypeVar("RecordT", bound=BaseModel)


@dataclass(frozen=True)
class Job(Generic[ItemT]):
    """One record to make: its key, what the worker is given, and how it may run."""

    key: str
    """The key of the record the job makes; unique within one results file."""
    item: ItemT
    """What the worker receives."""
    name: str = ""
    """How a crash report names the job (e.g. the trajectory file); the key when empty."""
    exclusive: str | None = None
    """Jobs sharing this group run one at a time. The group's turn is awaited before a
    concurrency slot is taken, so a job waiting for its group holds no slot."""

    @property
    def label(self) -> str:
        """The job's name, or its key when it has none."""
        return self.name or self.key


@dataclass(frozen=True)
class JobCrash(Generic[ItemT]):
    """A job whose worker raised instead of returning a record."""

    job: Job[ItemT]
    """The job."""
    error: Exception
    """What it raised."""

    @property
    def problem(self) -> str:
        """One line naming the job and the error, e.g. ``x.json: replay crashed: OSError: ...``."""
        return f"{self.job.label} crashed: {type(self.error).__name__}: {self.error}"


@dataclass
class JobPlan(Generic[ItemT, RecordT]):
    """The jobs of one invocation split into those already done and those to run."""

    reused: dict[str, RecordT]
    """Earlier records still current, by key, in job order."""
    pending: list[Job[ItemT]]
    """The jobs to run, in the order given."""


@dataclass
class JobResults(Generic[ItemT, RecordT]):
    """What running the pending jobs produced."""

    made: dict[str, RecordT] = field(default_factory=dict)
    """The records made now, by key, in completion order (each is also in the file)."""
    crashes: list[JobCrash[ItemT]] = field(default_factory=list)
    """The jobs that crashed, in job order; they have no record and run again next time."""

    @property
    def problems(self) -> list[str]:
        """One line per crashed job."""
        return [crash.problem for crash in self.crashes]


class ResumableJobs(Generic[RecordT]):
    """A results file (one ``RecordT`` per line) and the jobs that fill it.

    Opening it locks its folder for this process (``storage.locks.lock_folder``): when another
    process holds the folder, ``FolderBusyError`` is raised before anything is read or written,
    or with ``wait=True`` the opening blocks until the folder is free. ``close()`` (or leaving a
    ``with`` block) releases the folder; so does the process's end. Then a torn last line is
    repaired. ``key`` tells a record's key; ``fresh=True`` deletes the file, so every job runs.
    ``earlier`` holds the records found at opening, the last one per key.
    """

    def __init__(
        self,
        path: Path,
        model: type[RecordT],
        key: Callable[[RecordT], str],
        *,
        fresh: bool = False,
        wait: bool = False,
    ) -> None:
        self.path = path
        self._lock = lock_folder(path.parent, wait=wait)
        self._release = weakref.finalize(self, self._lock.release)
        try:
            if fresh:
                path.unlink(missing_ok=True)
            self.repaired = repair_torn_tail(path)
            """What the tail repair did at opening (None when the file was whole)."""
            self.earlier: dict[str, RecordT] = {
                key(record): record for record in read_jsonl(path, model)
            }
        except BaseException:
            self._release()
            raise
        self._appender = JsonlAppender(path)

    def close(self) -> None:
        """Release the results folder (idempotent); the records already appended stay."""
        self._release()

    def __enter__(self) -> ResumableJobs[RecordT]:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def plan(
        self,
        jobs: Iterable[Job[ItemT]],
        *,
        is_current: Callable[[Job[ItemT], RecordT], bool] | None = None,
    ) -> JobPlan[ItemT, RecordT]:
        """Split ``jobs`` into those with a current earlier record and those to run.

        An earlier record under a job's key is current unless ``is_current(job, record)`` says
        otherwise (e.g. it was made from a file that has changed since). Raises ``ValueError``
        when two jobs share a key.
        """
        reused: dict[str, RecordT] = {}
        pending: list[Job[ItemT]] = []
        seen: set[str] = set()
        for job in jobs:
            if job.key in seen:
                raise ValueError(f"two jobs share the key {job.key!r}")
            seen.add(job.key)
            previous = self.earlier.get(job.key)
            if previous is not None and (is_current is None or is_current(job, previous)):
                reused[job.key] = previous
            else:
                pending.append(job)
        return JobPlan(reused, pending)

    async def run(
        self,
        jobs: Sequence[Job[ItemT]],
        work: Callable[[ItemT], Awaitable[RecordT]],
        *,
        concurrency: int = 4,
        on_result: Callable[[RecordT], None] | None = None,
    ) -> JobResults[ItemT, RecordT]:
        """Run ``work`` on every job's item, at most ``concurrency`` at once; append each record
        to the file as it is made, then call ``on_result`` with it.

        A job whose worker (or ``on_result``) raises an ``Exception`` is reported in
        ``JobResults.crashes``; the others carry on. Anything else (cancellation, a keyboard
        interrupt) is raised once every job has ended.
        """
        results: JobResults[ItemT, RecordT] = JobResults()
        slots = asyncio.Semaphore(max(1, concurrency))
        groups: dict[str, asyncio.Lock] = {}

        async def run_one(job: Job[ItemT]) -> None:
            exclusive: contextlib.AbstractAsyncContextManager[object] = (
                groups.setdefault(job.exclusive, asyncio.Lock())
                if job.exclusive is not None
                else contextlib.nullcontext()
            )
            async with exclusive, slots:
                record = await work(job.item)
            await self._appender.append(record.model_dump_json())
            results.made[job.key] = record
            if on_result is not None:
                on_result(record)

        outcomes = await asyncio.gather(*(run_one(job) for job in jobs), return_exceptions=True)
        for job, outcome in zip(jobs, outcomes, strict=True):
            if isinstance(outcome, Exception):
                results.crashes.append(JobCrash(job, outcome))
            elif isinstance(outcome, BaseException):
                raise outcome
        return results
