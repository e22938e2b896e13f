"""The shared retry policy: what is retried, how long it waits, what it raises when it gives up."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from judge_agent.model import GenerateConfig, ModelError
from judge_agent.retry import (
    MAX_BACKOFF_SECONDS,
    RetryDecision,
    backoff_seconds,
    call_with_retries,
    is_retryable_status,
    retry_after_seconds,
    status_decision,
)


class FlakyError(Exception):
    """A failure the test classifier maps to a scripted decision."""

    def __init__(self, decision: RetryDecision) -> None:
        super().__init__(decision.reason)
        self.decision = decision


def classify(error: BaseException) -> RetryDecision:
    if isinstance(error, FlakyError):
        return error.decision
    return RetryDecision(retryable=False, reason=f"unexpected {error!r}")


class Script:
    """An attempt function failing with the given errors, then answering "ok"."""

    def __init__(self, *failures: BaseException) -> None:
        self.failures = list(failures)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "ok"


class Sleeps:
    """A fake ``sleep`` that records the delays asked for."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


SERVER_ERROR = RetryDecision(retryable=True, reason="HTTP 500: boom", status=500)


async def test_success_needs_no_retry_and_no_sleep() -> None:
    attempt, sleeps = Script(), Sleeps()
    result = await call_with_retries(
        attempt, config=GenerateConfig(), classify=classify, describe="t", sleep=sleeps
    )
    assert result == ("ok", 0)
    assert attempt.calls == 1
    assert sleeps.delays == []


async def test_backoff_doubles_from_the_base_with_full_jitter() -> None:
    attempt, sleeps = (
        Script(FlakyError(SERVER_ERROR), FlakyError(SERVER_ERROR), FlakyError(SERVER_ERROR)),
        Sleeps(),
    )
    config = GenerateConfig(max_retries=5, retry_base_seconds=0.5)
    result = await call_with_retries(
        attempt, config=config, classify=classify, describe="t", sleep=sleeps, rng=lambda: 1.0
    )
    assert result == ("ok", 3)
    assert attempt.calls == 4
    assert sleeps.delays == [0.5, 1.0, 2.0]


def test_jitter_draws_below_the_bound_and_the_bound_is_capped() -> None:
    assert backoff_seconds(2, 1.0, rng=lambda: 0.25) == pytest.approx(1.0)
    assert backoff_seconds(0, 1.0, rng=lambda: 0.0) == 0.0
    assert backoff_seconds(20, 1.0, rng=lambda: 1.0) == MAX_BACKOFF_SECONDS
    assert backoff_seconds(0, 1.0, retry_after=7.0, rng=lambda: 0.0) == 7.0
    assert backoff_seconds(0, 1.0, retry_after=3600.0) == MAX_BACKOFF_SECONDS


async def test_a_servers_retry_after_replaces_the_backoff() -> None:
    limited = RetryDecision(retryable=True, reason="HTTP 429", status=429, retry_after=3.0)
    attempt, sleeps = Script(FlakyError(limited)), Sleeps()
    result = await call_with_retries(
        attempt,
        config=GenerateConfig(retry_base_seconds=0.01),
        classify=classify,
        describe="t",
        sleep=sleeps,
        rng=lambda: 1.0,
    )
    assert result == ("ok", 1)
    assert sleeps.delays == [3.0]


async def test_giving_up_after_the_retries_raises_a_model_error_that_says_so() -> None:
    attempt, sleeps = Script(*[FlakyError(SERVER_ERROR) for _ in range(10)]), Sleeps()
    with pytest.raises(ModelError) as raised:
        await call_with_retries(
            attempt,
            config=GenerateConfig(max_retries=3),
            classify=classify,
            describe="openai/x call",
            sleep=sleeps,
        )
    assert attempt.calls == 4
    assert len(sleeps.delays) == 3
    error = raised.value
    assert error.retryable is True
    assert error.status == 500
    assert "openai/x call" in str(error)
    assert "HTTP 500: boom" in str(error)
    assert "gave up after 4 attempts" in str(error)
    assert isinstance(error.__cause__, FlakyError)


async def test_a_non_retryable_failure_is_raised_at_once() -> None:
    bad_request = status_decision(400, "bad schema")
    attempt, sleeps = Script(FlakyError(bad_request)), Sleeps()
    with pytest.raises(ModelError) as raised:
        await call_with_retries(
            attempt, config=GenerateConfig(), classify=classify, describe="t", sleep=sleeps
        )
    assert attempt.calls == 1
    assert sleeps.delays == []
    assert raised.value.retryable is False
    assert raised.value.status == 400
    assert "not retried" in str(raised.value)
    assert "bad schema" in str(raised.value)


async def test_zero_retries_means_one_attempt() -> None:
    attempt = Script(FlakyError(SERVER_ERROR))
    with pytest.raises(ModelError, match="gave up after 1 attempt\\)"):
        await call_with_retries(
            attempt,
            config=GenerateConfig(max_retries=0),
            classify=classify,
            describe="t",
            sleep=Sleeps(),
        )
    assert attempt.calls == 1


async def test_a_hung_attempt_times_out_and_is_retried() -> None:
    calls = 0

    async def attempt() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            await asyncio.sleep(30)
        return "late but fine"

    sleeps = Sleeps()
    config = GenerateConfig(timeout_seconds=0.05)
    result = await call_with_retries(
        attempt, config=config, classify=classify, describe="t", sleep=sleeps
    )
    assert result == ("late but fine", 1)
    assert calls == 2


async def test_attempts_that_always_hang_end_in_a_timeout_error() -> None:
    async def attempt() -> str:
        await asyncio.sleep(30)
        return "never"

    config = GenerateConfig(timeout_seconds=0.02, max_retries=2)
    with pytest.raises(ModelError, match=r"timed out after 0\.02 s") as raised:
        await call_with_retries(
            attempt, config=config, classify=classify, describe="t", sleep=Sleeps()
        )
    assert raised.value.retryable is True
    assert "gave up after 3 attempts" in str(raised.value)


async def test_a_model_error_from_the_attempt_keeps_its_own_retryability() -> None:
    attempt = Script(
        ModelError("flaky", retryable=True, status=503),
        ModelError("refused", retryable=False, status=422),
    )
    with pytest.raises(ModelError) as raised:
        await call_with_retries(
            attempt, config=GenerateConfig(), classify=classify, describe="t", sleep=Sleeps()
        )
    assert attempt.calls == 2
    assert raised.value.status == 422
    assert "refused" in str(raised.value)


async def test_cancellation_is_not_swallowed() -> None:
    started = asyncio.Event()

    async def attempt() -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    task = asyncio.create_task(
        call_with_retries(attempt, config=GenerateConfig(), classify=classify, describe="t")
    )
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        (400, False),
        (401, False),
        (403, False),
        (404, False),
        (409, False),
        (422, False),
        (408, True),
        (429, True),
        (500, True),
        (502, True),
        (503, True),
        (529, True),
    ],
)
def test_which_statuses_are_retried(status: int, retryable: bool) -> None:
    assert is_retryable_status(status) is retryable
    assert status_decision(status, "m").retryable is retryable


def test_retry_after_headers_are_read_in_every_form() -> None:
    assert retry_after_seconds({"retry-after-ms": "250"}) == pytest.approx(0.25)
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "1.5"}) == 1.5
    in_ten = format_datetime(datetime.now(UTC) + timedelta(seconds=10), usegmt=True)
    from_date = retry_after_seconds({"retry-after": in_ten})
    assert from_date is not None
    assert 5.0 < from_date <= 10.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None
    assert retry_after_seconds(None) is None
    assert status_decision(429, "slow down", {"retry-after": "2"}).retry_after == 2.0
