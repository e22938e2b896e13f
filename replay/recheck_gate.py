"""Re-checks have the machine to themselves.

A replay that diverged is replayed once more on a fresh sandbox before the divergence is
reported. A difference that came from the machine being busy (a desktop starved of CPU that
paints later than replay keeps looking) would come back if the re-check ran as busy as the
first replay, beside the other jobs' replays. So the replays of a process share one
``RecheckGate``: their steps run side by side, but a re-check first waits for the steps in
flight to end, then holds the other replays before their next step until it is done. Re-checks
are rare, so this costs little; it does not reach other processes (other executors' workers) or
programs outside the runtime, whose load a re-check meets as the first replay did.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["RecheckGate", "recheck_gate"]


class RecheckGate:
    """Steps of replays go through side by side; a re-check goes through alone."""

    def __init__(self) -> None:
        self._changed = asyncio.Condition()
        self._steps = 0
        """Steps in flight."""
        self._alone = False
        """Whether a re-check holds the gate or waits for the steps in flight to end."""

    @property
    def steps_in_flight(self) -> int:
        """How many steps are going through now."""
        return self._steps

    @asynccontextmanager
    async def step(self) -> AsyncIterator[None]:
        """One step of a replay: waits while a re-check holds the gate or waits for it."""
        async with self._changed:
            await self._changed.wait_for(lambda: not self._alone)
            self._steps += 1
        try:
            yield
        finally:
            async with self._changed:
                self._steps -= 1
                self._changed.notify_all()

    @asynccontextmanager
    async def alone(self) -> AsyncIterator[None]:
        """A whole re-check: waits for any other re-check, stops new steps, waits for the steps
        in flight to end, and holds the gate until it is done."""
        async with self._changed:
            await self._changed.wait_for(lambda: not self._alone)
            self._alone = True
            try:
                await self._changed.wait_for(lambda: self._steps == 0)
            except BaseException:
                self._alone = False
                self._changed.notify_all()
                raise
        try:
            yield
        finally:
            async with self._changed:
                self._alone = False
                self._changed.notify_all()


_GATES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, RecheckGate] = (
    weakref.WeakKeyDictionary()
)


def recheck_gate() -> RecheckGate:
    """The gate the replays of the running event loop share."""
    loop = asyncio.get_running_loop()
    gate = _GATES.get(loop)
    if gate is None:
        gate = _GATES[loop] = RecheckGate()
    return gate
