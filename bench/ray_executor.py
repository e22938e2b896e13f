"""The ``ray`` grid executor: a judge grid's runs made on the workers of a Ray cluster.

The driver (the process that runs ``agentjudge judge --executor ray``) connects to a cluster
(``address``; without one, ``$RAY_ADDRESS`` or a one-machine cluster started on 127.0.0.1 with
no dashboard), starts a pool of judge workers (Ray actors, spread over the nodes) and sends each
pending run to one of them. A worker collects the leftovers of dead runs on its machine when it
starts (``agentjudge sandboxes gc``), loads the dataset from the same path as the driver, builds
the arms' models from their factories and makes runs with a ``GridWorker``: replay, freezing and
sandboxes all happen on the worker. A run's record and its log come back to the driver, which
alone writes the results folder, through the same ``ResumableJobs`` as the local executor: one
append per run, the same keys and files, the same resume.

Limits: ``work.jobs`` runs in flight across the cluster (the driver bounds them), and
``work.max_connections`` model calls across the cluster. When the connections split evenly over
the workers give each at least as many as it has runs at once, each worker holds its share
itself (no round trip per call, and the shares add up to at most the limit); otherwise every call
takes a slot from one named actor (``ConnectionSlots``). Each worker asks Ray for its slots'
worth of the heaviest ``EnvironmentKind.worker_resources`` among the kinds its grid needs, so a
desktop grid lands on nodes with the memory for it.

A worker that dies (its node lost, its process killed) fails its runs in flight: the driver
gives its connection slots back, starts a replacement (Ray places it on a live node; its start
collects what dead runs left on that machine) and sends those runs again, up to ``attempts``
tries per run. Nothing is recorded twice: a run's record is appended only when its one
successful call returns. A run out of tries becomes a crash (not recorded; made again by the
next invocation).

Ray is an optional extra (``pip install 'agentjudge[ray]'``), imported only when this executor
is chosen.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import secrets
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.executors import ExecutorError
from bench.grid_runner import LOGS_DIR, GridWork, GridWorker, JudgeRecord, PlannedRun
from dataset.store import load_dataset
from environments.kind import WorkerResources
from judge_agent.model import ModelAPI
from judge_agent.modes import judge_mode
from storage.files import write_text_atomic
from storage.jobs import Job, JobResults, ResumableJobs

if TYPE_CHECKING:
    from dataset.models import Task

__all__ = [
    "ConnectionSlots",
    "JudgeWorker",
    "RayExecutor",
    "RayGridStats",
    "WorkerInfo",
    "WorkerLostError",
    "grid_resources",
    "import_ray",
]

INSTALL_HINT = "the ray executor needs Ray: pip install 'agentjudge[ray]'"
NAMESPACE = "agentjudge"
"""The Ray namespace of the executor's actors."""

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost"})

NO_ENVIRONMENT = WorkerResources()
"""What a run without an environment (``llm`` modes, trajectory-only domains) asks for."""


def import_ray() -> Any:
    """The ``ray`` module, or ``ImportError`` saying how to install it."""
    try:
        import ray
    except ImportError as error:
        raise ImportError(INSTALL_HINT) from error
    return ray


LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch that, set to 0, makes every node and driver use 127.0.0.1 as its own address.
Without it Ray on Linux swaps a loopback address for the machine's outward one."""


def keep_to_loopback() -> None:
    """Make this process, and the Ray processes it starts, use 127.0.0.1 (the switch is read
    when Ray is imported, so the constant is set too when it already was)."""
    import sys

    os.environ[LOOPBACK_SWITCH] = "0"
    constants: Any = sys.modules.get("ray._private.ray_constants")
    if constants is not None:
        constants.ENABLE_RAY_CLUSTER = False


class WorkerLostError(ExecutorError):
    """A run's worker died on every try, or a worker could not start."""


@dataclass(frozen=True)
class WorkerInfo:
    """What a judge worker reports when it has started."""

    name: str
    """The actor's name."""
    node_id: str
    """The Ray node it runs on."""
    pid: int
    """Its process."""
    run_id: str
    """Its sandbox run id (``sandboxes.runs``): every sandbox it makes is named after it."""
    collected: int
    """Leftovers of dead runs its start collected on its machine."""


@dataclass
class RayGridStats:
    """What the last grid on the cluster did (for tests and the benchmark)."""

    workers: list[WorkerInfo] = field(default_factory=list)
    """Every worker started, replacements included, in start order."""
    lost: list[str] = field(default_factory=list)
    """The names of the workers that died."""
    retries: int = 0
    """Run calls sent again after their worker died."""
    overheads: list[float] = field(default_factory=list)
    """Per run, seconds the driver waited beyond the worker's own time for the run."""
    start_seconds: float = 0.0
    """Seconds until the first workers were ready (process start, imports, collection)."""
    close_seconds: float = 0.0
    """Seconds closing the workers took (sandboxes, models, the collection at the end)."""
    connection_limit: str = ""
    """How ``max_connections`` was held: ``per-worker`` shares, or the ``cluster`` slots."""


def grid_resources(runs: Sequence[PlannedRun]) -> WorkerResources:
    """The heaviest per-run hint among the environment kinds ``runs`` replay into."""
    from environments.registry import kind_for_task

    needs = [NO_ENVIRONMENT]
    tasks: dict[str, Task] = {}
    for run in runs:
        if judge_mode(run.mode).uses_tools:
            tasks.setdefault(run.task.id, run.task)
    for task in tasks.values():
        kind = kind_for_task(task)
        if kind is not None:
            needs.append(kind.worker_resources)
    return WorkerResources(
        cpus=max(need.cpus for need in needs), memory_mb=max(need.memory_mb for need in needs)
    )


class ConnectionSlots:
    """The cluster-wide ``--max-connections``: a Ray actor holding the model-call slots.

    A holder (a worker) takes a slot per call under a fresh ticket and gives it back with the
    ticket. ``forget`` gives back every slot a dead worker held and refuses it slots it was
    still waiting for, so a lost worker never shrinks the limit.
    """

    def __init__(self, limit: int) -> None:
        self._free = asyncio.Semaphore(max(1, limit))
        self._held: dict[str, str] = {}
        self._released_early: set[str] = set()
        self._dead: set[str] = set()

    async def acquire(self, holder: str, ticket: str) -> bool:
        """Wait for a slot; False when the holder was forgotten (or gave the ticket up)."""
        await self._free.acquire()
        if holder in self._dead or ticket in self._released_early:
            self._released_early.discard(ticket)
            self._free.release()
            return False
        self._held[ticket] = holder
        return True

    def release(self, ticket: str) -> None:
        """Give a ticket's slot back (or, still waiting, give the ticket up)."""
        if self._held.pop(ticket, None) is not None:
            self._free.release()
        else:
            self._released_early.add(ticket)

    def forget(self, holder: str) -> int:
        """Give back every slot ``holder`` holds; return how many."""
        self._dead.add(holder)
        tickets = [ticket for ticket, owner in self._held.items() if owner == holder]
        for ticket in tickets:
            del self._held[ticket]
            self._free.release()
        return len(tickets)

    def in_use(self) -> int:
        """Slots held now."""
        return len(self._held)


class _ClusterConnection:
    """``async with``: one of the cluster's model-call slots, for one call of one worker."""

    def __init__(self, slots: Any, holder: str) -> None:
        self.slots = slots
        self.holder = holder
        self._tickets: list[str] = []

    async def __aenter__(self) -> None:
        ticket = secrets.token_hex(8)
        try:
            granted = await self.slots.acquire.remote(self.holder, ticket)
        except BaseException:
            self.slots.release.remote(ticket)  # cancelled while waiting: give the ticket up
            raise
        if not granted:
            raise RuntimeError(f"{self.holder}: the connection slots no longer serve this worker")
        self._tickets.append(ticket)

    async def __aexit__(self, *_: object) -> None:
        # Calls of one worker overlap, so any ticket this worker holds will do.
        self.slots.release.remote(self._tickets.pop())


class JudgeWorker:
    """One judge worker (a Ray actor): makes runs of one grid and returns record and log."""

    def __init__(self, work: GridWork, slots: Any, name: str, share: int = 0) -> None:
        """``slots``: the cluster's ``ConnectionSlots`` actor, or None when this worker holds
        ``share`` of the model connections itself."""
        self.work = work
        self.slots = slots
        self.name = name
        self.share = share
        self._worker: GridWorker | None = None
        self._models: list[ModelAPI] = []
        self._logs: Path | None = None

    async def start(self) -> WorkerInfo:
        """Collect dead runs' leftovers on this machine, then get ready to judge."""
        ray = import_ray()
        from environments.leftovers import collect_all_leftovers
        from sandboxes.runs import current_run

        choice = self.work.backend_choice
        collected = await collect_all_leftovers(choice.endpoints if choice is not None else None)
        run = current_run()
        self._logs = run.directory() / f"ray-logs-{secrets.token_hex(4)}"
        dataset = load_dataset(self.work.root, partial=True)
        self._models = [arm.model_factory() for arm in self.work.arms]
        connection: contextlib.AbstractAsyncContextManager[Any] = (
            asyncio.Semaphore(self.share)
            if self.slots is None
            else _ClusterConnection(self.slots, self.name)
        )
        self._worker = GridWorker(
            self.work, dataset, self._models, connection, logs_root=self._logs, collected=True
        )
        await self._worker.prepare()
        return WorkerInfo(
            name=self.name,
            node_id=ray.get_runtime_context().get_node_id(),
            pid=os.getpid(),
            run_id=run.run_id,
            collected=len(collected),
        )

    async def judge(self, planned: PlannedRun) -> tuple[JudgeRecord, str, float]:
        """The run's record, its log's text and the seconds it took here."""
        if self._worker is None or self._logs is None:
            raise RuntimeError(f"{self.name}: judge before start")
        started = time.perf_counter()
        record = await self._worker.judge(planned)
        log = self._logs / LOGS_DIR / f"{planned.key}.jsonl"
        text = log.read_text(encoding="utf-8") if log.is_file() else ""
        log.unlink(missing_ok=True)
        return record, text, time.perf_counter() - started

    async def close(self) -> int:
        """Close the sandboxes, servers and models, then collect what dead runs (a lost worker
        on this machine) left; return how many leftovers that was."""
        from environments.leftovers import collect_all_leftovers

        if self._worker is not None:
            await self._worker.aclose()
        for model in self._models:
            await model.aclose()
        if self._logs is not None:
            shutil.rmtree(self._logs, ignore_errors=True)
        choice = self.work.backend_choice
        return len(await collect_all_leftovers(choice.endpoints if choice is not None else None))


@dataclass
class _Worker:
    handle: Any
    name: str
    load: int = 0
    seen: set[str] = field(default_factory=set)


class _Pool:
    """The driver's side: the workers, which run goes where, and replacing the dead."""

    def __init__(
        self,
        ray: Any,
        work: GridWork,
        slots: Any,
        share: int,
        options: dict[str, Any],
        stats: RayGridStats,
    ) -> None:
        self.ray = ray
        self.work = work
        self.slots = slots
        self.share = share
        self.options = options
        self.stats = stats
        self.workers: list[_Worker] = []
        self._token = secrets.token_hex(4)
        self._started = 0
        self._replacing = asyncio.Lock()

    async def add(self, start_timeout: float) -> _Worker:
        self._started += 1
        name = f"agentjudge-judge-{self._token}-{self._started}"
        actor = self.ray.remote(JudgeWorker).options(name=name, **self.options)
        handle = actor.remote(self.work, self.slots, name, self.share)
        worker = _Worker(handle, name)
        try:
            info = await asyncio.wait_for(handle.start.remote(), start_timeout)
        except (TimeoutError, self.ray.exceptions.RayError) as error:
            with contextlib.suppress(Exception):
                self.ray.kill(handle)
            # A task error carries what the worker raised (e.g. no dataset at that path there).
            cause: BaseException = getattr(error, "cause", None) or error
            reason = f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
            raise WorkerLostError(f"judge worker {name} did not start: {reason}") from error
        self.stats.workers.append(info)
        self.workers.append(worker)
        return worker

    def pick(self, planned: PlannedRun) -> _Worker:
        """The least loaded worker, preferring one that has already frozen the trajectory."""
        if not self.workers:
            raise WorkerLostError("no judge worker is left")
        warm = [w for w in self.workers if planned.trajectory.id in w.seen]
        least = min(self.workers, key=lambda w: w.load)
        best = min(warm, key=lambda w: w.load) if warm else least
        return best if best.load <= least.load else least

    async def lost(self, worker: _Worker, start_timeout: float) -> None:
        """``worker`` died: give its slots back and start a replacement (once)."""
        async with self._replacing:
            if worker not in self.workers:
                return
            self.workers.remove(worker)
            self.stats.lost.append(worker.name)
            if self.slots is not None:
                with contextlib.suppress(Exception):
                    await self.slots.forget.remote(worker.name)
            await self.add(start_timeout)

    async def close(self) -> None:
        async def close_one(worker: _Worker) -> None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(worker.handle.close.remote(), 60)
            with contextlib.suppress(Exception):
                self.ray.kill(worker.handle)

        await asyncio.gather(*(close_one(worker) for worker in self.workers))
        self.workers.clear()


class RayExecutor:
    """Makes a grid's runs on a Ray cluster (see the module docstring)."""

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        slots_per_worker: int = 4,
        workers: int | None = None,
        attempts: int = 3,
        start_timeout: float = 180.0,
        scheduling: str = "SPREAD",
    ) -> None:
        """``address``: the head (``HOST:PORT`` or ``auto``); None: ``$RAY_ADDRESS``, else a
        cluster started here on 127.0.0.1. ``slots_per_worker`` runs go to one worker at once;
        ``workers`` (default: enough for ``jobs``) workers start; a run is tried at most
        ``attempts`` times; a worker that takes longer than ``start_timeout`` seconds to start
        counts as lost."""
        self.ray = import_ray()
        if slots_per_worker < 1 or attempts < 1 or (workers is not None and workers < 1):
            raise ValueError("slots_per_worker, workers and attempts must be at least 1")
        self.address = address
        self.slots_per_worker = slots_per_worker
        self.workers = workers
        self.attempts = attempts
        self.start_timeout = start_timeout
        self.scheduling = scheduling
        self.stats = RayGridStats()
        """What the last ``run`` did."""

    def _connect(self) -> bool:
        """Connect this process to the cluster; True when this call did (and must shut down)."""
        ray = self.ray
        if ray.is_initialized():
            return False
        options: dict[str, Any] = {
            "namespace": NAMESPACE,
            "include_dashboard": False,
            "log_to_driver": False,
            "configure_logging": False,
        }
        address = self.address or os.environ.get("RAY_ADDRESS")
        if address:
            options["address"] = address
        if not address or address.split(":")[0] in LOOPBACK_HOSTS:
            # A cluster of our own, or one on this machine: loopback only (Ray would otherwise
            # listen on, or look for it at, the machine's outward address).
            keep_to_loopback()
            options["_node_ip_address"] = "127.0.0.1"
        try:
            ray.init(**options)
        except (ConnectionError, RuntimeError, ValueError) as error:
            where = options.get("address", "a cluster started here")
            raise ExecutorError(f"cannot connect to the Ray cluster at {where}: {error}") from error
        return True

    async def run(
        self,
        work: GridWork,
        models: Sequence[ModelAPI],
        jobs: Sequence[Job[PlannedRun]],
        results_file: ResumableJobs[JudgeRecord],
        *,
        on_result: Callable[[JudgeRecord], None] | None = None,
    ) -> JobResults[PlannedRun, JudgeRecord]:
        self.stats = RayGridStats()
        if not jobs:
            return JobResults()
        work = _absolute(work)
        ray = self.ray
        connected_here = await asyncio.to_thread(self._connect)
        try:
            return await self._run(ray, work, jobs, results_file, on_result)
        finally:
            if connected_here:
                await asyncio.to_thread(ray.shutdown)

    async def _run(
        self,
        ray: Any,
        work: GridWork,
        jobs: Sequence[Job[PlannedRun]],
        results_file: ResumableJobs[JudgeRecord],
        on_result: Callable[[JudgeRecord], None] | None,
    ) -> JobResults[PlannedRun, JudgeRecord]:
        per_run = grid_resources([job.item for job in jobs])
        slots_per_worker = min(self.slots_per_worker, work.jobs)
        options = {
            "num_cpus": per_run.cpus * slots_per_worker,
            "memory": per_run.memory_mb * 2**20 * slots_per_worker,
            "max_concurrency": slots_per_worker,
            "max_restarts": 0,
            "scheduling_strategy": self.scheduling,
        }
        count = self.workers or -(-min(work.jobs, len(jobs)) // slots_per_worker)
        # When every worker's even share of the connections covers all its runs at once, each
        # holds its share itself (no round trip per model call); otherwise the cluster's slots.
        share = work.max_connections // count
        slots = None
        if share < slots_per_worker:
            share = 0
            slots = (
                ray.remote(ConnectionSlots)
                .options(
                    name=f"agentjudge-connections-{secrets.token_hex(4)}",
                    num_cpus=0,
                    max_concurrency=10_000,
                )
                .remote(work.max_connections)
            )
        self.stats.connection_limit = "cluster" if slots is not None else "per-worker"
        pool = _Pool(ray, work, slots, share, options, self.stats)
        try:
            starting = time.perf_counter()
            await asyncio.gather(*(pool.add(self.start_timeout) for _ in range(count)))
            self.stats.start_seconds = time.perf_counter() - starting

            async def judge(planned: PlannedRun) -> JudgeRecord:
                return await self._judge(ray, pool, work, planned)

            return await results_file.run(jobs, judge, concurrency=work.jobs, on_result=on_result)
        finally:
            closing = time.perf_counter()
            await pool.close()
            self.stats.close_seconds = time.perf_counter() - closing
            if slots is not None:
                with contextlib.suppress(Exception):
                    ray.kill(slots)

    async def _judge(
        self, ray: Any, pool: _Pool, work: GridWork, planned: PlannedRun
    ) -> JudgeRecord:
        """One run on some worker, tried again on another when its worker dies."""
        lost_worker = (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError)
        for attempt in range(1, self.attempts + 1):
            worker = pool.pick(planned)
            worker.load += 1
            worker.seen.add(planned.trajectory.id)
            sent = time.perf_counter()
            try:
                made: tuple[JudgeRecord, str, float] = await worker.handle.judge.remote(planned)
            except lost_worker as error:
                if attempt == self.attempts:
                    raise WorkerLostError(
                        f"its worker died on each of {self.attempts} tries (last: {error})"
                    ) from error
                self.stats.retries += 1
                await pool.lost(worker, self.start_timeout)
                continue
            except ray.exceptions.RayTaskError as error:
                raise error.as_instanceof_cause() from None
            finally:
                worker.load -= 1
            record, log, inside = made
            self.stats.overheads.append(time.perf_counter() - sent - inside)
            path = work.output / LOGS_DIR / f"{record.key}.jsonl"
            await asyncio.to_thread(_write_log, path, log)
            return record
        raise AssertionError("unreachable")  # the loop returns or raises


def _absolute(work: GridWork) -> GridWork:
    """``work`` with its paths absolute: workers do not share the driver's working directory."""
    choice = work.backend_choice
    if choice is not None and choice.environments:
        supplied = {task: path.resolve() for task, path in choice.environments.items()}
        choice = choice.model_copy(update={"environments": supplied})
    return dataclasses.replace(
        work, root=work.root.resolve(), output=work.output.resolve(), backend_choice=choice
    )


def _write_log(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, text)
