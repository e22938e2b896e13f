"""Replay once, judge many: one frozen final state per trajectory, handed out as clones.

A judge grid runs many judges on the same trajectory (modes x turn budgets x models x runs). The
first request replays the trajectory and freezes its final state; later and concurrent requests
wait for that one replay. Read-only judges then share the snapshot's single read-only view;
judges that may write get a private clone each, which never reaches the snapshot or other judges.

Trajectories whose replay manages cluster-global roles (``EnvironmentKind.replays_exclusively``)
cannot all stay frozen at once: a frozen state keeps the roles it created, so the next trajectory
of the task that creates the same role would collide with it. Judges reach them through
``lease``, which holds the task's group for the block and keeps one of its trajectories frozen at
a time (the others are destroyed first and replayed again when needed).

Environments that are slow to make (their provider ``prepares_ahead``: seconds to start) are
made ahead of need when the caller says which runs come next (``expect``): up to ``ahead`` of
them, replay and clone included, in an ``AheadPool`` (``sandboxes.ahead``), while the current
judges work; ``lease`` with the run's ticket then hands over the one made for it. Whatever was
made ahead and not taken is destroyed by ``aclose``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field

from dataset.store import Dataset
from environments.backends import ProviderSet
from environments.registry import kind_for_task
from replay.engine import replay_trajectory
from replay.report import FidelityReport
from sandboxes.ahead import AheadPool
from sandboxes.base import Releasable, Sandbox, SandboxNotReadyError, Snapshot

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class UpcomingRun:
    """A judge run still to start, whose environment may be made ahead (``expect``)."""

    ticket: str
    """Names the run (its key); ``lease`` is given the same ticket."""
    trajectory_id: str
    """The trajectory whose replayed state it inspects."""
    writable: bool
    """Whether it gets a private writable clone (else the read-only view)."""


@dataclass
class FrozenReplay:
    """A trajectory's fidelity report and, unless replay failed, its frozen final state."""

    report: FidelityReport
    snapshot: Snapshot | None
    clones: list[Sandbox] = field(default_factory=list)


class FrozenReplays(Releasable):
    """Frozen replays of one dataset, made on demand and destroyed together."""

    def __init__(
        self, dataset: Dataset, providers: ProviderSet, *, verify: bool = True, ahead: int = 0
    ) -> None:
        """``ahead``: environments made ahead of need at most at once (0: none)."""
        self.dataset = dataset
        self.providers = providers
        self.verify = verify
        self.ahead = AheadPool(ahead)
        """The environments made ahead of need, by ticket (see ``expect``)."""
        self._replays: dict[str, FrozenReplay] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._group_locks: dict[str, asyncio.Lock] = {}
        self._groups: dict[str, str | None] = {}
        self._upcoming: list[UpcomingRun] = []
        self._started: set[str] = set()
        self._not_ahead: set[str] = set()
        """Kinds whose providers do not prepare ahead."""

    async def get(self, trajectory_id: str) -> FrozenReplay:
        """The frozen replay of a trajectory, replaying it on first request only."""
        lock = self._locks.setdefault(trajectory_id, asyncio.Lock())
        async with lock:
            if trajectory_id not in self._replays:
                trajectory = self.dataset.trajectories[trajectory_id]
                task = self.dataset.tasks[trajectory.task_id]
                result = await replay_trajectory(
                    trajectory,
                    task,
                    self.dataset.task_dir(task.id),
                    self.providers,
                    keep=True,
                    verify=self.verify,
                )
                made = FrozenReplay(result.report, result.snapshot)
                if result.report.not_ready:  # not kept: the next request replays again
                    return made
                self._replays[trajectory_id] = made
            return self._replays[trajectory_id]

    async def environment(self, trajectory_id: str, *, writable: bool) -> Sandbox | None:
        """A sandbox for one judge: the shared read-only view, or a private writable clone.

        None when the trajectory has no replayable environment (unsupported domain, failed
        replay); ``SandboxNotReadyError`` when its sandbox never got ready (the judge cannot be
        given the environment it should have). Writable clones are destroyed by
        ``release_clone`` or ``aclose``.
        """
        frozen = await self.get(trajectory_id)
        if frozen.snapshot is None:
            if frozen.report.not_ready:
                raise SandboxNotReadyError(
                    f"trajectory {trajectory_id}: " + "; ".join(frozen.report.problems)
                )
            return None
        sandbox = await frozen.snapshot.clone(writable=writable)
        if writable:
            frozen.clones.append(sandbox)
        return sandbox

    def expect(self, runs: Iterable[UpcomingRun]) -> None:
        """The runs to come, in the order they will start: their environments are made ahead
        (up to the pool's size at once, the next runs first) where the kind's provider
        ``prepares_ahead``, and each further one as a made one is taken. Runs of an exclusive
        group are never made ahead (their states cannot all be frozen at once)."""
        self._upcoming = list(runs)
        self._top_up()

    def _top_up(self) -> None:
        """Start making the next upcoming runs' environments while the pool has room."""
        if self.ahead.size == 0:
            return
        for run in self._upcoming:
            if self.ahead.full:
                return
            if run.ticket in self._started or run.ticket in self.ahead:
                continue
            trajectory = self.dataset.trajectories.get(run.trajectory_id)
            if trajectory is None or self.exclusive_group(run.trajectory_id) is not None:
                continue
            kind = kind_for_task(self.dataset.tasks[trajectory.task_id])
            if kind is None or kind.name in self._not_ahead:
                continue
            self.ahead.prepare(run.ticket, functools.partial(self._made_ahead, run))

    async def _made_ahead(self, run: UpcomingRun) -> Sandbox | None:
        """One upcoming run's environment, replayed and cloned ahead of need (None when its
        kind does not prepare ahead, or it has no environment)."""
        trajectory = self.dataset.trajectories[run.trajectory_id]
        kind = kind_for_task(self.dataset.tasks[trajectory.task_id])
        if kind is None:
            return None
        provider = await self.providers.get(kind.name)
        if not provider.prepares_ahead:
            self._not_ahead.add(kind.name)
            return None
        return await self.environment(run.trajectory_id, writable=run.writable)

    def exclusive_group(self, trajectory_id: str) -> str | None:
        """The task id when the trajectory's replay manages cluster-global roles, else None
        (asked once per trajectory: it reads every recorded step)."""
        if trajectory_id not in self._groups:
            trajectory = self.dataset.trajectories[trajectory_id]
            task = self.dataset.tasks[trajectory.task_id]
            kind = kind_for_task(task)
            exclusive = kind is not None and kind.replays_exclusively(trajectory)
            self._groups[trajectory_id] = task.id if exclusive else None
        return self._groups[trajectory_id]

    @contextlib.asynccontextmanager
    async def lease(
        self, trajectory_id: str, *, writable: bool, ticket: str | None = None
    ) -> AsyncIterator[Sandbox | None]:
        """``environment`` for the block (a writable clone is destroyed when it ends): the one
        made ahead for ``ticket`` when there is one (see ``expect``). A trajectory of an
        exclusive group holds the group for the block, and the group's other frozen
        trajectories are destroyed first, so their roles are gone."""
        made: Sandbox | None = None
        if ticket is not None:
            self._started.add(ticket)
            # Its place in the pool is free at once: the next run's environment is made in it,
            # while this run waits for the rest of its own, if need be.
            made = await self.ahead.take(ticket, freed=self._top_up)
        if made is not None:
            try:
                yield made
            finally:
                if writable:
                    await self.release_clone(trajectory_id, made)
            return
        group = self.exclusive_group(trajectory_id)
        guard: contextlib.AbstractAsyncContextManager[object] = (
            self._group_locks.setdefault(group, asyncio.Lock())
            if group is not None
            else contextlib.nullcontext()
        )
        async with guard:
            if group is not None:
                await self._evict(group, keep=trajectory_id)
            sandbox = await self.environment(trajectory_id, writable=writable)
            try:
                yield sandbox
            finally:
                if sandbox is not None and writable:
                    await self.release_clone(trajectory_id, sandbox)

    async def _evict(self, group: str, *, keep: str) -> None:
        for trajectory_id in [
            other
            for other in self._replays
            if other != keep and self.exclusive_group(other) == group
        ]:
            await self._destroy(self._replays.pop(trajectory_id))

    @staticmethod
    async def _destroy(frozen: FrozenReplay) -> None:
        for sandbox in frozen.clones:
            await sandbox.destroy()
        frozen.clones.clear()
        if frozen.snapshot is not None:
            await frozen.snapshot.destroy()

    async def release_clone(self, trajectory_id: str, sandbox: Sandbox) -> None:
        """Destroy a judge's writable clone as soon as the judge is done."""
        frozen = self._replays.get(trajectory_id)
        if frozen is not None and sandbox in frozen.clones:
            frozen.clones.remove(sandbox)
            await sandbox.destroy()

    async def aclose(self) -> None:
        """Stop making environments ahead and destroy those not taken, then every clone, then
        every snapshot."""
        try:
            await self.ahead.aclose()
        except Exception as error:  # the clones and snapshots must go all the same
            logger.warning("destroying the environments made ahead: %s", error)
        for frozen in self._replays.values():
            await self._destroy(frozen)
        self._replays.clear()

    async def release(self) -> None:
        await self.aclose()
