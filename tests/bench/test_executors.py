"""Grid executors: the registry, a registered executor making a grid, and evaluate's options."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from bench.evaluate import EvaluationError, EvaluationOptions, evaluate
from bench.executors import executor_names, make_executor, register_executor
from bench.grid_runner import (
    LOGS_DIR,
    VERDICTS_FILE,
    GridSpec,
    GridWork,
    JudgeRecord,
    LocalExecutor,
    PlannedRun,
    judge_dataset,
    read_records,
)
from judge_agent.model import ModelAPI
from judge_agent.providers.mock import ScriptedModel
from storage.jobs import Job, JobResults, ResumableJobs

DS = Path(__file__).resolve().parents[2] / "datasets" / "ds"


class CountingExecutor:
    """Makes the runs locally and remembers which it was given."""

    name = "counting"

    def __init__(self) -> None:
        self.given: list[str] = []

    async def run(
        self,
        work: GridWork,
        models: Sequence[ModelAPI],
        jobs: Sequence[Job[PlannedRun]],
        results_file: ResumableJobs[JudgeRecord],
        *,
        on_result: Callable[[JudgeRecord], None] | None = None,
    ) -> JobResults[PlannedRun, JudgeRecord]:
        self.given.extend(job.key for job in jobs)
        return await LocalExecutor().run(work, models, jobs, results_file, on_result=on_result)


def test_the_built_in_executors_are_registered_and_local_is_plain() -> None:
    assert {"local", "ray"} <= set(executor_names())
    assert isinstance(make_executor("local"), LocalExecutor)
    with pytest.raises(ValueError, match=r"unknown executor 'cloud'.*local.*ray"):
        make_executor("cloud")
    with pytest.raises(ValueError, match="already registered"):
        register_executor("local", LocalExecutor)
    with pytest.raises(ValueError, match="module:attr"):
        register_executor("broken", "no_colon_here")


async def test_a_registered_executor_makes_the_runs_and_the_driver_records_them(
    tmp_path: Path,
) -> None:
    counting = CountingExecutor()
    register_executor("counting-test", lambda: counting, replace=True)
    executor = make_executor("counting-test")
    assert executor is counting
    only = {"fs-api-usage--dashed"}
    grid = GridSpec(modes=("llm",), runs=2)
    summary = await judge_dataset(
        DS,
        tmp_path,
        model_factory=lambda: ScriptedModel("pass"),
        grid=grid,
        only=only,
        executor=executor,
    )
    records = read_records(tmp_path / VERDICTS_FILE)
    assert sorted(counting.given) == sorted(records)
    assert len(records) == 2
    assert summary.runs == 2
    assert summary.by_verdict == {"PASS": 2}
    assert all((tmp_path / LOGS_DIR / f"{key}.jsonl").is_file() for key in records)

    # Resume is the driver's: nothing is handed to the executor the second time.
    counting.given.clear()
    again = await judge_dataset(
        DS,
        tmp_path,
        model_factory=lambda: ScriptedModel("pass"),
        grid=grid,
        only=only,
        executor=executor,
    )
    assert counting.given == []
    assert again.resumed == 2


def test_evaluate_refuses_an_unknown_executor_and_an_address_without_one(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match="executor: unknown executor 'cloud'"):
        evaluate(DS, EvaluationOptions(executor="cloud", output=tmp_path))
    with pytest.raises(EvaluationError, match="address: only a remote executor"):
        evaluate(DS, EvaluationOptions(address="127.0.0.1:6379", output=tmp_path))
    assert not (tmp_path / VERDICTS_FILE).exists()
