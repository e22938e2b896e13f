"""``bench.model_watch``: each distinct model failure reported once; a grid whose model cannot be
used stops after a few failures in a row, and not on failures that say nothing about the model."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from bench.model_watch import (
    ATTEMPTS_BEFORE_ANY_ANSWER,
    RUNS_IN_A_ROW,
    ModelProblem,
    ModelWatch,
)
from judge_agent.model import GenerateConfig, ModelError, ModelFailureKind
from judge_agent.retry import CALL_WATCHER, RetryDecision, call_with_retries
from judge_agent.verdict import Verdict

REFUSED = RetryDecision(
    True, "connection failed: [Errno 111] Connection refused", kind="connection"
)


def _failed_run(kind: ModelFailureKind | None, error: str = "x") -> Verdict:
    return Verdict(
        trajectory_id="t",
        verdict="INVALID" if kind else "PASS",
        error=f"model call failed: {error} (gave up after 6 attempts)" if kind else None,
        model_failure=kind,
        stop_reason="error" if kind else "verdict",
        model="openai/x",
        mode="llm",
        finished_at=datetime.now(UTC),
    )


def test_a_model_that_never_answered_trips_after_a_few_refused_attempts() -> None:
    problems: list[ModelProblem] = []
    watch = ModelWatch(problems.append)
    for _ in range(ATTEMPTS_BEFORE_ANY_ANSWER - 1):
        watch.attempt_failed("openai/x call", REFUSED, final=False)
    assert watch.stop is None
    watch.attempt_failed("openai/x call", REFUSED, final=False)
    assert watch.stop is not None
    assert watch.stop.kind == "connection"
    assert "Connection refused" in str(watch.stop)
    # One line for the cause, however many attempts met it.
    assert [str(p) for p in problems] == [
        "model error (connection; retrying): openai/x call: connection failed: [Errno 111] "
        "Connection refused"
    ]


def test_once_the_model_answered_only_whole_runs_in_a_row_trip() -> None:
    watch = ModelWatch()
    watch.attempt_succeeded("openai/x call")
    for _ in range(3 * ATTEMPTS_BEFORE_ANY_ANSWER):  # a brief outage gets its retries
        watch.attempt_failed("openai/x call", REFUSED, final=False)
    assert watch.stop is None
    for _ in range(RUNS_IN_A_ROW - 1):
        watch.run_finished(_failed_run("connection"))
    watch.run_finished(_failed_run(None))  # a run that got through resets the count
    for _ in range(RUNS_IN_A_ROW - 1):
        watch.run_finished(_failed_run("connection"))
    assert watch.stop is None
    watch.run_finished(_failed_run("authentication", "openai/x call: HTTP 401: bad key"))
    assert watch.stop is not None
    assert watch.stop.kind == "authentication"
    assert watch.stop.cause == "openai/x call: HTTP 401: bad key"


def test_failures_that_say_nothing_about_the_model_never_trip() -> None:
    problems: list[ModelProblem] = []
    watch = ModelWatch(problems.append)
    for seconds in range(20):
        limited = RetryDecision(
            True, f"HTTP 429: retry in {seconds}.5 s", status=429, kind="rate-limit"
        )
        watch.attempt_failed("openai/x call", limited, final=False)
        watch.run_finished(_failed_run("rate-limit", f"openai/x call: HTTP 429: in {seconds} s"))
    assert watch.stop is None
    # Numbers differ from call to call; the cause does not: one line each for attempts and runs.
    assert len(problems) == 2
    assert [p.retrying for p in problems] == [True, False]


def test_the_retry_loop_tells_the_watcher_every_attempt_and_the_kind() -> None:
    attempts = 0

    async def refused() -> str:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise ModelError("connection failed: refused", retryable=True, kind="connection")
        raise ModelError("HTTP 401: no", status=401, kind="authentication")

    async def call() -> None:
        async def instant(_: float) -> None:
            return None

        config = GenerateConfig(max_retries=5)
        with pytest.raises(ModelError) as failure:
            await call_with_retries(
                refused,
                config=config,
                classify=lambda error: REFUSED,
                describe="m call",
                sleep=instant,
            )
        assert failure.value.kind == "authentication"
        assert failure.value.status == 401

    watch = ModelWatch()
    token = CALL_WATCHER.set(watch)
    try:
        asyncio.run(call())
    finally:
        CALL_WATCHER.reset(token)
    assert watch.attempts_in_a_row == 3  # two refused connections, then refused credentials
    assert watch.stop is None  # below the threshold
