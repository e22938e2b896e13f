"""Sandboxes made ahead of need: a bounded pool of sandboxes prepared in the background.

Some sandboxes take seconds to make (a desktop starts its applications; a judge's desktop then
replays the run's actions). A caller that knows what it will ask for next (a judge grid knows the
order of its runs) hands this pool a *ticket* and a way to make each upcoming sandbox; the pool
makes them in the background while the caller works on the current ones, and ``take`` hands
each over when its turn comes: at once when it is ready, after the rest of its making when it is
still being made.

The pool holds at most ``size`` sandboxes, ready or being made; a ticket beyond that is simply
not prepared (its taker makes its own). A sandbox taken is the taker's to destroy. ``aclose``
cancels what is being made and destroys everything not taken, whether the caller's work ended
well, failed or was cancelled. Every sandbox is made by its provider as usual, named after the
run (``sandboxes.runs``), so the pre-made sandboxes of a killed process are collected like any
other leftover of a dead run.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from pydantic import BaseModel, ConfigDict

from sandboxes.base import Releasable, Sandbox, SandboxError

logger = logging.getLogger(__name__)

Maker = Callable[[], Coroutine[Any, Any, Sandbox | None]]
"""Makes one sandbox; None when there is nothing to make ahead after all."""


class AheadCounts(BaseModel):
    """What the pool did, for figures and tests."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    prepared: int = 0
    """Sandboxes whose making was started."""
    ready: int = 0
    """Takes answered with a sandbox that was already made."""
    waited: int = 0
    """Takes answered with a sandbox that was still being made (the taker waited for the rest)."""
    waited_seconds: float = 0.0
    """Seconds those takers waited, together."""
    failed: int = 0
    """Makings that raised (the taker then made its own, meeting the error itself)."""
    destroyed: int = 0
    """Sandboxes made but never taken, destroyed by ``aclose``."""


class AheadPool(Releasable):
    """Up to ``size`` sandboxes made ahead of need, each for one ticket."""

    def __init__(self, size: int) -> None:
        if size < 0:
            raise ValueError(f"an ahead pool's size must be at least 0, not {size}")
        self.size = size
        self.counts = AheadCounts()
        self.peak = 0
        """The most sandboxes the pool held at once (ready or being made)."""
        self._entries: dict[str, asyncio.Task[Sandbox | None]] = {}
        self._orphans: set[asyncio.Task[Sandbox | None]] = set()
        self._closed = False

    def __len__(self) -> int:
        """Sandboxes held: ready, or being made."""
        return len(self._entries)

    def __contains__(self, ticket: object) -> bool:
        return ticket in self._entries

    @property
    def full(self) -> bool:
        """Whether another ticket would exceed ``size``."""
        return len(self._entries) >= self.size

    def prepare(self, ticket: str, make: Maker) -> bool:
        """Start making ``ticket``'s sandbox with ``make`` in the background, unless the pool
        holds one for it already or is full (or closed); whether it holds one now."""
        if ticket in self._entries:
            return True
        if self._closed or self.full:
            return False
        task: asyncio.Task[Sandbox | None] = asyncio.create_task(make(), name=f"ahead {ticket}")
        self._entries[ticket] = task
        self.counts.prepared += 1
        self.peak = max(self.peak, len(self._entries))
        task.add_done_callback(lambda done: self._made(ticket, done))
        return True

    def _made(self, ticket: str, task: asyncio.Task[Sandbox | None]) -> None:
        """A making ended: one that made nothing or failed gives its place back."""
        if task.cancelled() or self._entries.get(ticket) is not task:
            return
        error = task.exception()
        if error is not None:
            self.counts.failed += 1
            logger.warning("making a sandbox ahead for %s failed: %s", ticket, error)
            del self._entries[ticket]
        elif task.result() is None:
            del self._entries[ticket]

    async def take(self, ticket: str, *, freed: Callable[[], None] | None = None) -> Sandbox | None:
        """The sandbox made for ``ticket`` (after the rest of its making, if it is still being
        made), or None when none was prepared or its making failed: the taker then makes its
        own. ``freed`` is called as soon as the ticket's place in the pool is free, before the
        wait (the caller may prepare the next ticket in it). Cancelled while waiting, the
        making is cancelled too and its sandbox destroyed."""
        task = self._entries.pop(ticket, None)
        if freed is not None:
            freed()
        if task is None:
            return None
        ready = task.done()
        started = time.monotonic()
        try:
            sandbox = await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done() and not task.cancelled():  # made, but the taker is gone
                self._orphans.add(task)
            elif not task.done():
                task.cancel()
                self._orphans.add(task)
            raise
        except Exception:
            return None  # counted and logged by ``_made``
        if sandbox is not None:
            if ready:
                self.counts.ready += 1
            else:
                self.counts.waited += 1
                self.counts.waited_seconds += time.monotonic() - started
        return sandbox

    async def aclose(self) -> None:
        """Cancel every making still going and destroy every sandbox not taken. Safe to call
        twice; the pool prepares nothing afterwards."""
        self._closed = True
        tasks = [*self._entries.values(), *self._orphans]
        self._entries.clear()
        self._orphans.clear()
        for task in tasks:
            task.cancel()
        errors: list[BaseException] = []
        for task in tasks:
            try:
                sandbox = await task
            except asyncio.CancelledError:
                if not task.cancelled():  # this coroutine itself is being cancelled
                    raise
                continue
            except Exception:
                continue  # the making failed: it removed what it had made
            if sandbox is None:
                continue
            try:
                await sandbox.destroy()
                self.counts.destroyed += 1
            except Exception as error:  # the others matter more than the first error
                errors.append(error)
        if errors:
            raise SandboxError("; ".join(str(error) for error in errors))

    async def release(self) -> None:
        await self.aclose()
