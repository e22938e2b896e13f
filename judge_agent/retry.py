"""Retrying model calls, independently of any provider.

Owns the retry policy every real provider shares: which failures are worth another attempt (rate
limits, server errors including 529 "overloaded", timeouts, dropped connections), how long to wait
before the next one (exponential backoff with full jitter, or what the server asked for in
``Retry-After``), the per-attempt timeout, and the ``ModelError`` raised when a call fails for good.

A provider supplies ``classify``, which turns its SDK's exceptions into a ``RetryDecision``; the
helpers ``status_decision`` and ``retry_after_seconds`` cover the HTTP part of that. Each decision
carries a provider-neutral ``ModelFailureKind``, so the layers above can tell an unreachable
endpoint or refused credentials from one bad call without knowing any SDK.

Whoever runs many calls (a judge grid) can watch every attempt, failed or not, through
``CALL_WATCHER``: a context variable, so the watcher reaches the retry loops of all the tasks it
starts without any provider passing it along.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Protocol, TypeVar

from judge_agent.model import (
    GenerateConfig,
    ModelError,
    ModelFailureKind,
    failure_kind_of_status,
)

T = TypeVar("T")

MAX_BACKOFF_SECONDS = 60.0
"""No wait between attempts is longer than this, whatever the server asks for."""

RETRYABLE_STATUSES = frozenset({408, 429})
"""Client-error statuses that are retried; every 5xx (including 529, overloaded) is retried too."""


@dataclass(frozen=True)
class RetryDecision:
    """What one failed attempt means for the next one."""

    retryable: bool
    """Whether another attempt may succeed."""
    reason: str
    """A short description of the failure, for the final error message."""
    status: int | None = None
    """The HTTP status, when the failure was an HTTP answer."""
    retry_after: float | None = None
    """Seconds the server asked us to wait, when it said."""
    kind: ModelFailureKind = "other"
    """What kind of failure it was, whatever the provider."""


class CallWatcher(Protocol):
    """Told about every attempt of every model call made under it (see ``CALL_WATCHER``)."""

    def attempt_failed(self, describe: str, decision: RetryDecision, *, final: bool) -> None:
        """An attempt of the call ``describe`` failed; ``final``: no retry follows."""
        ...

    def attempt_succeeded(self, describe: str) -> None:
        """An attempt of the call ``describe`` got an answer."""
        ...


CALL_WATCHER: ContextVar[CallWatcher | None] = ContextVar("model_call_watcher", default=None)
"""The watcher of the model calls made in this context (None: nobody watches)."""


def is_retryable_status(status: int) -> bool:
    """True for rate limits, request timeouts and server errors; false for other client errors."""
    return status in RETRYABLE_STATUSES or status >= 500


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The wait a server asked for in ``retry-after-ms`` or ``Retry-After`` (seconds or a date)."""
    if not headers:
        return None
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return max(0.0, float(milliseconds) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def status_decision(
    status: int, message: str, headers: Mapping[str, str] | None = None
) -> RetryDecision:
    """The decision for an HTTP error answer with ``status`` (and its headers)."""
    return RetryDecision(
        retryable=is_retryable_status(status),
        reason=f"HTTP {status}: {shorten(message)}",
        status=status,
        retry_after=retry_after_seconds(headers),
        kind=failure_kind_of_status(status),
    )


def shorten(text: str, limit: int = 300) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def backoff_seconds(
    retry: int,
    base: float,
    retry_after: float | None = None,
    *,
    rng: Callable[[], float] = random.random,
) -> float:
    """How long to wait before retry number ``retry`` (0 for the first).

    Full jitter: a uniform draw in ``[0, base * 2**retry]``, the bound capped at
    ``MAX_BACKOFF_SECONDS``. A server's ``retry_after`` replaces the draw (capped the same way).
    """
    if retry_after is not None:
        return min(retry_after, MAX_BACKOFF_SECONDS)
    bound = min(MAX_BACKOFF_SECONDS, base * (2.0**retry))
    return rng() * bound


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    config: GenerateConfig,
    classify: Callable[[BaseException], RetryDecision],
    describe: str,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    rng: Callable[[], float] = random.random,
) -> tuple[T, int]:
    """Run ``attempt`` until it succeeds; return its result and how many retries it took.

    Each attempt is bounded by ``config.timeout_seconds``. A failure that ``classify`` calls
    retryable is retried up to ``config.max_retries`` times after a backoff; any other failure,
    or the last retryable one, raises ``ModelError`` naming ``describe``, the failure and the
    number of attempts. A ``ModelError`` raised by ``attempt`` itself is classified by its own
    ``retryable``, ``status`` and ``kind``. Cancellation is never swallowed. The context's
    ``CALL_WATCHER``, if any, hears of every attempt.
    """
    watcher = CALL_WATCHER.get()
    attempts_allowed = max(0, config.max_retries) + 1
    for number in range(1, attempts_allowed + 1):
        try:
            async with asyncio.timeout(config.timeout_seconds):
                result = await attempt()
        except TimeoutError as error:
            decision = RetryDecision(
                retryable=True,
                reason=f"timed out after {config.timeout_seconds:g} s",
                kind="timeout",
            )
            last_error: BaseException = error
        except ModelError as error:
            decision = RetryDecision(
                retryable=error.retryable, reason=str(error), status=error.status, kind=error.kind
            )
            last_error = error
        except Exception as error:
            decision = classify(error)
            last_error = error
        else:
            if watcher is not None:
                watcher.attempt_succeeded(describe)
            return result, number - 1
        final = not decision.retryable or number == attempts_allowed
        if watcher is not None:
            watcher.attempt_failed(describe, decision, final=final)
        if not decision.retryable:
            raise ModelError(
                f"{describe}: {decision.reason} (attempt {number}, not retried)",
                retryable=False,
                status=decision.status,
                kind=decision.kind,
            ) from last_error
        if number == attempts_allowed:
            raise ModelError(
                f"{describe}: {decision.reason} (gave up after {number} attempt"
                f"{'s' if number > 1 else ''})",
                retryable=True,
                status=decision.status,
                kind=decision.kind,
            ) from last_error
        await sleep(
            backoff_seconds(number - 1, config.retry_base_seconds, decision.retry_after, rng=rng)
        )
    raise AssertionError("unreachable")  # pragma: no cover


def classify_sdk_error(error: BaseException, sdk: Any) -> RetryDecision:
    """Whether a failure raised by the ``openai`` or ``anthropic`` SDK (passed as ``sdk``; both
    name their exceptions alike) is worth another attempt."""
    if isinstance(error, sdk.APIStatusError):
        return status_decision(error.status_code, error.message, error.response.headers)
    if isinstance(error, sdk.APITimeoutError):
        return RetryDecision(retryable=True, reason="the request timed out", kind="timeout")
    if isinstance(error, sdk.APIConnectionError):
        return RetryDecision(
            retryable=True,
            reason=f"connection failed: {shorten(_root_cause(error))}",
            kind="connection",
        )
    if isinstance(error, sdk.APIResponseValidationError):
        return RetryDecision(
            retryable=False, reason=f"unexpected answer: {shorten(str(error))}", kind="answer"
        )
    return RetryDecision(retryable=False, reason=f"{type(error).__name__}: {shorten(str(error))}")


def _root_cause(error: BaseException) -> str:
    """The innermost cause under the SDK's and the HTTP library's wrappers, with its type (e.g.
    ``ConnectionRefusedError: [Errno 111] Connect call failed``, ``gaierror: [Errno -2] Name or
    service not known``), or the error's own message."""
    cause: BaseException = error
    seen = {id(cause)}
    while (inner := cause.__cause__ or cause.__context__) is not None and id(inner) not in seen:
        cause = inner
        seen.add(id(cause))
    if cause is error:
        return str(error) or repr(error)
    return f"{type(cause).__name__}: {cause}"
