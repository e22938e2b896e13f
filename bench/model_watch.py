"""Watching a judge grid's model calls: each distinct failure reported once, and a stop when the
model cannot be used at all.

A wrong key or an unreachable endpoint fails every call the same way; without a watch, a grid
would record each of its runs ``INVALID`` after the retries, silently. ``ModelWatch`` hears of
every attempt (``judge_agent.retry.CALL_WATCHER``) and of every finished run, tells its caller
about each *distinct* failure the moment it first happens (one line per cause, never one per
call), and trips when failures that mean "this model cannot be used" (``STOPPING_FAILURES``:
connection, authentication) come in a row:

* before any call of the grid has had an answer, after ``ATTEMPTS_BEFORE_ANY_ANSWER`` failed
  attempts in a row (an endpoint that never answered is not coming back mid-grid);
* after that, once ``RUNS_IN_A_ROW`` runs in a row ended on such a failure, each after all of
  its retries (the endpoint answered earlier, so a brief outage is given its retries' time).

Any answer, or any run ending otherwise, resets the count. Only failures are classified, by the
provider-neutral ``ModelFailureKind``; nothing here knows a provider.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass

from judge_agent.model import STOPPING_FAILURES, ModelFailureKind
from judge_agent.retry import RetryDecision
from judge_agent.verdict import Verdict

__all__ = [
    "ATTEMPTS_BEFORE_ANY_ANSWER",
    "RUNS_IN_A_ROW",
    "ModelProblem",
    "ModelUnusableError",
    "ModelWatch",
]

ATTEMPTS_BEFORE_ANY_ANSWER = 5
"""Connection or authentication failures in a row, with no answer yet, that stop a grid."""

RUNS_IN_A_ROW = 3
"""Runs in a row ended by a connection or authentication failure that stop a grid."""

_RUN_PREFIX = "model call failed: "
_ATTEMPTS_SUFFIX = re.compile(r"\s*\((?:attempt \d+, not retried|gave up after \d+ attempts?)\)$")


@dataclass(frozen=True)
class ModelProblem:
    """A model failure with a cause not seen before in this grid."""

    kind: ModelFailureKind
    """What kind of failure it is."""
    cause: str
    """The call and the reason, e.g. ``openai/x call: connection failed: [Errno 111] ...``."""
    retrying: bool
    """True when the failed attempt is retried; False when a run ended on it."""

    def __str__(self) -> str:
        then = "retrying" if self.retrying else "the run is INVALID"
        return f"model error ({self.kind}; {then}): {self.cause}"


class ModelUnusableError(Exception):
    """The grid stopped because its model cannot be used (unreachable, credentials refused);
    the runs recorded before the stop stay in the results file."""

    def __init__(self, kind: ModelFailureKind, cause: str, failures: int, saved: int = 0) -> None:
        super().__init__(f"{cause} ({failures} {kind} failures in a row)")
        self.kind: ModelFailureKind = kind
        """The kind of the failures."""
        self.cause = cause
        """The last failure's call and reason."""
        self.failures = failures
        """How many came in a row."""
        self.saved = saved
        """Records in the results file when the grid stopped (earlier invocations' included)."""


def _fingerprint(cause: str) -> str:
    """What tells causes apart: the text with its numbers blanked (a rate limit's "retry in
    1.2 s" or a request id differ from call to call; the cause does not)."""
    return re.sub(r"\d+", "#", cause)


class ModelWatch:
    """One grid's watch over its model calls (a ``judge_agent.retry.CallWatcher``)."""

    def __init__(self, on_problem: Callable[[ModelProblem], None] | None = None) -> None:
        self.on_problem = on_problem
        self.answered = False
        """Whether any call of the grid has had an answer."""
        self.attempts_in_a_row = 0
        self.runs_in_a_row = 0
        self.counts: dict[str, int] = {}
        """Failures by cause fingerprint (attempts and runs)."""
        self.stop: ModelUnusableError | None = None
        """Why the grid must stop, once it must."""
        self._tripped = asyncio.Event()

    def _seen(self, kind: ModelFailureKind, cause: str, *, retrying: bool) -> None:
        key = _fingerprint(cause)
        self.counts[key] = self.counts.get(key, 0) + 1
        if self.counts[key] == 1 and self.on_problem is not None:
            self.on_problem(ModelProblem(kind, cause, retrying))

    def _trip(self, kind: ModelFailureKind, cause: str, failures: int) -> None:
        if self.stop is None:
            self.stop = ModelUnusableError(kind, cause, failures)
            self._tripped.set()

    def attempt_failed(self, describe: str, decision: RetryDecision, *, final: bool) -> None:
        """Count a failed attempt; trip when the model never answered and the failures that
        mean it cannot be used come ``ATTEMPTS_BEFORE_ANY_ANSWER`` times in a row."""
        cause = f"{describe}: {decision.reason}"
        # A final failure is reported by its run (``run_finished``), with the same cause.
        if not final:
            self._seen(decision.kind, cause, retrying=True)
        if decision.kind not in STOPPING_FAILURES:
            self.attempts_in_a_row = 0
            return
        self.attempts_in_a_row += 1
        if not self.answered and self.attempts_in_a_row >= ATTEMPTS_BEFORE_ANY_ANSWER:
            self._trip(decision.kind, cause, self.attempts_in_a_row)

    def attempt_succeeded(self, describe: str) -> None:
        """An answer: the model can be reached."""
        self.answered = True
        self.attempts_in_a_row = 0

    def run_finished(self, verdict: Verdict) -> None:
        """Count a finished run; trip when ``RUNS_IN_A_ROW`` runs in a row ended on a failure
        that means the model cannot be used."""
        kind = verdict.model_failure
        if kind is None:
            self.runs_in_a_row = 0
            return
        cause = _ATTEMPTS_SUFFIX.sub("", (verdict.error or "").removeprefix(_RUN_PREFIX))
        self._seen(kind, cause, retrying=False)
        if kind not in STOPPING_FAILURES:
            self.runs_in_a_row = 0
            return
        self.runs_in_a_row += 1
        if self.runs_in_a_row >= RUNS_IN_A_ROW:
            self._trip(kind, cause, self.runs_in_a_row)

    async def tripped(self) -> ModelUnusableError:
        """Wait until the grid must stop; return why."""
        await self._tripped.wait()
        assert self.stop is not None
        return self.stop
