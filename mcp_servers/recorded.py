"""The recorded call a tool is re-executing, for tools whose answer depends on more than state.

Replay re-executes recorded calls through the same tool implementations agents are served by.
Two things about a call are not in the sandbox and not in its arguments: which implementation
of a server the agent talked to (``execute_sql`` is postgres-mcp's and Supabase's, with
different semantics), and readings the server took from outside the database (Supabase names a
migration after the wall-clock second it was applied in, so two migrations sent in one turn
collide). Replay states the recording it is re-executing with ``replaying``; a tool asks
``recorded_call()`` and gets None outside replay (a live agent's call).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from dataset.models import Step, Trajectory


@dataclass(frozen=True)
class RecordedCall:
    """One recorded step being re-executed, with the trajectory it belongs to."""

    trajectory: Trajectory
    """The recorded trajectory (its provenance names the server implementation, its other
    steps show which tools and argument names the agent had)."""
    step: Step
    """The step being re-executed (its observation is what the server answered then)."""

    @property
    def recorded_text(self) -> str | None:
        """The recorded answer's text, if the step has one."""
        return self.step.observation.text if self.step.observation else None


_CURRENT: ContextVar[RecordedCall | None] = ContextVar("recorded_call", default=None)


def recorded_call() -> RecordedCall | None:
    """The recorded call being re-executed in this context; None for a live call."""
    return _CURRENT.get()


@contextmanager
def replaying(call: RecordedCall) -> Iterator[None]:
    """Run the block as the re-execution of ``call`` (nested blocks restore the outer one)."""
    token = _CURRENT.set(call)
    try:
        yield
    finally:
        _CURRENT.reset(token)
