"""The lifecycle every sandbox kind implements: create, use, freeze, clone, destroy.

A *provider* creates sandboxes of one kind from a task's initial state. A live *sandbox* is used
(by replay, then by judges) and can be *frozen* into a *snapshot*: an immutable copy of its final
state. A snapshot hands out clones: private writable ones, or one shared read-only view. Every
object here is destroyed explicitly (``destroy``/``aclose``, or ``async with``), and everything a
provider creates is named after the run that created it (see ``sandboxes.runs``) so that a later
run can garbage-collect what a killed run left behind.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Self

from dataset.models import Task


class SandboxError(Exception):
    """A sandbox could not be created, frozen, cloned or destroyed."""


class SandboxNotReadyError(SandboxError):
    """A sandbox was made but did not get ready in time, for reasons a later try may not meet
    again (a loaded machine, an application that now and then fails to show its window). Its
    provider has already tried again as often as it is configured to."""


class Releasable(ABC):
    """Something ``async with`` releases on the way out, whether the block succeeded or not."""

    @abstractmethod
    async def release(self) -> None:
        """Free everything held (``destroy`` or ``aclose`` in the subclasses)."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.release()


class Sandbox(Releasable):
    """A live environment that one user (a replay or a judge) works in."""

    kind: ClassVar[str]
    """The sandbox kind: ``filesystem``, ``postgres``, later ``desktop``, ``android``, ``web``."""

    name: str
    """A unique name that starts with the creating run's prefix (see ``sandboxes.runs``)."""

    read_only: bool
    """True for a shared view of a snapshot: every write is refused."""

    @abstractmethod
    async def freeze(self) -> Snapshot:
        """Turn this sandbox's current state into an immutable snapshot.

        The sandbox is consumed: its resources move into the snapshot (a frozen tree, a template
        database, an image) and it must not be used afterwards. Read-only views cannot be frozen.
        """

    async def freeze_for_clones(self) -> Snapshot:
        """``freeze``, for a caller that will ask the snapshot for clones soon (replay once,
        judge many). A kind whose clones are slow to make and whose live sandbox cannot be
        copied (a desktop) keeps this very sandbox in the snapshot and hands it out as the first
        clone: it already holds the frozen state. The default is ``freeze``."""
        return await self.freeze()

    @abstractmethod
    async def destroy(self) -> None:
        """Remove everything this sandbox holds. Safe to call twice."""

    async def release(self) -> None:
        await self.destroy()


class Snapshot(Releasable):
    """An immutable state from which judges get clones. Nothing can write to it."""

    kind: ClassVar[str]
    """The kind of the sandboxes this snapshot hands out."""

    name: str
    """A unique name that starts with the creating run's prefix."""

    @abstractmethod
    async def clone(self, *, writable: bool = True) -> Sandbox:
        """Return a sandbox holding the snapshot's state.

        ``writable=True`` gives a private copy that nobody else sees; its writes never reach the
        snapshot or other clones. ``writable=False`` gives a read-only view that may be shared with
        other read-only users (it is cheap: no copy when the kind allows it). Destroying a view
        does not affect the snapshot.
        """

    @abstractmethod
    async def destroy(self) -> None:
        """Remove the snapshot and its shared view. Clones must be destroyed first."""

    async def release(self) -> None:
        await self.destroy()


class SandboxProvider(Releasable):
    """Creates sandboxes of one kind on one backend, and removes all of them on ``aclose``."""

    kind: ClassVar[str]
    """The kind of sandbox this provider creates."""

    backend: ClassVar[str]
    """The backend name as the command line spells it (``local``, ``docker``, ``embedded``...)."""

    prepares_ahead: ClassVar[bool] = False
    """Its sandboxes take long enough to make (seconds of starting applications, then a replay)
    that a caller who knows what it will need next should make them ahead, while it works on the
    current ones (``sandboxes.ahead.AheadPool``; a judge grid's next runs). False for kinds whose
    sandboxes are made in well under a second: making them ahead would only hold resources."""

    @abstractmethod
    async def create(self, task: Task, task_dir: Path) -> Sandbox:
        """Create a sandbox holding the task's initial state (files are read from ``task_dir``)."""

    @abstractmethod
    async def aclose(self) -> None:
        """Destroy every sandbox and snapshot this provider made that is still alive."""

    async def release(self) -> None:
        await self.aclose()
