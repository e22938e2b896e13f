"""The ``ray`` executor on a real 3-node Ray cluster on 127.0.0.1, and its connection slots.

The cluster (a head and two worker nodes, each its own raylet process) is started once for the
module and always shut down by the fixture's finaliser. The grid is a scripted-model grid over
the DS suite's first filesystem tasks, in ``agent`` mode (replays and frozen states on the
workers) and ``llm`` mode.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import itertools
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from bench.evaluate import report_folder
from bench.executors import ExecutorError
from bench.grid_runner import (
    LOGS_DIR,
    VERDICTS_FILE,
    GridSpec,
    JudgeRecord,
    judge_dataset,
    read_records,
)
from bench.ray_executor import ConnectionSlots, RayExecutor, grid_resources
from dataset.store import load_dataset
from environments.kind import WorkerResources
from environments.registry import environment_kind
from judge_agent.model import ChatMessage, GenerateConfig, ModelOutput, ToolInfo
from judge_agent.providers.mock import ScriptedModel
from sandboxes.runs import scratch_roots

DS = Path(__file__).resolve().parents[2] / "datasets" / "ds"
FS_TASKS = ("fs-api-usage", "fs-archive-old", "fs-bad-config")
"""Three filesystem tasks of the DS suite: 12 trajectories."""


def _part_of_ds() -> set[str]:
    dataset = load_dataset(DS, partial=True)
    return {tid for tid, t in dataset.trajectories.items() if t.task_id in FS_TASKS}


@pytest.fixture(scope="module")
def started_cluster() -> Iterator[object]:
    pytest.importorskip("ray")
    from bench.ray_cluster import loopback_cluster

    with loopback_cluster(workers=2, cpus_per_worker=2) as running:
        yield running


@pytest.fixture
def cluster(started_cluster: object) -> object:
    """The module's cluster with both worker nodes up (a test before may have killed one)."""
    from bench.ray_cluster import LoopbackCluster

    assert isinstance(started_cluster, LoopbackCluster)
    started_cluster.ensure_workers(2)
    return started_cluster


class IntervalModel:
    """A scripted model that appends each call's start and end time to a file (any process)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.inner = ScriptedModel("pass", delay_seconds=0.15)
        self.name = self.inner.name

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        started = time.time()
        output = await self.inner.generate(messages, tools, config)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps([started, time.time()]) + "\n")
        return output

    async def aclose(self) -> None:
        return None


def _interval_model(path: Path) -> IntervalModel:
    return IntervalModel(path)


def _model_only_in(pid: int) -> ScriptedModel:
    if os.getpid() != pid:
        raise ValueError("no key for this model on the worker's node")
    return ScriptedModel("pass")


@pytest.mark.slow
async def test_a_grid_survives_a_lost_worker_node_and_matches_the_local_executor(
    cluster: object, tmp_path: Path
) -> None:
    from bench.ray_cluster import LoopbackCluster

    assert isinstance(cluster, LoopbackCluster)
    only = _part_of_ds()
    grid = GridSpec(modes=("agent", "llm"), turns=(2,))
    factory = functools.partial(ScriptedModel, "coin", delay_seconds=0.3)
    local = await judge_dataset(
        DS, tmp_path / "local", model_factory=factory, grid=grid, only=only, jobs=4
    )
    assert local.problems == []
    assert local.runs == 2 * len(only)

    # Resume: the first three runs are already in the cluster's results folder.
    folder = tmp_path / "ray"
    local_lines = (tmp_path / "local" / VERDICTS_FILE).read_text().splitlines()
    (folder / LOGS_DIR).mkdir(parents=True)
    (folder / VERDICTS_FILE).write_text("\n".join(local_lines[:3]) + "\n")
    for line in local_lines[:3]:
        key = JudgeRecord.model_validate_json(line).key
        (folder / LOGS_DIR / f"{key}.jsonl").write_bytes(
            (tmp_path / "local" / LOGS_DIR / f"{key}.jsonl").read_bytes()
        )

    executor = RayExecutor(slots_per_worker=2)
    landed: list[str] = []
    halfway = asyncio.Event()

    def on_record(record: JudgeRecord) -> None:
        landed.append(record.key)
        if len(landed) == 4:
            halfway.set()

    async def kill_a_worker_node() -> None:
        await halfway.wait()
        await asyncio.to_thread(cluster.kill_worker, 0)

    killer = asyncio.create_task(kill_a_worker_node())
    summary = await judge_dataset(
        DS,
        folder,
        model_factory=factory,
        grid=grid,
        only=only,
        jobs=4,
        executor=executor,
        on_record=on_record,
    )
    if not killer.done():  # the grid ended before four runs landed: there was nothing to kill
        killer.cancel()
    assert summary.problems == [], summary.problems
    await killer
    stats = executor.stats
    assert stats.connection_limit == "per-worker"  # 8 connections over 2 workers of 2 runs
    # The killed node's worker died with runs in flight; they were made again elsewhere.
    assert len(stats.lost) == 1
    assert stats.retries >= 1
    assert len({info.node_id for info in stats.workers}) >= 2
    assert summary.resumed == 3
    assert summary.runs == local.runs
    assert len(landed) == local.runs - 3

    # Every run is recorded exactly once, with its log, and the report is the local one.
    lines = (folder / VERDICTS_FILE).read_text().splitlines()
    keys = collections.Counter(JudgeRecord.model_validate_json(line).key for line in lines)
    local_keys = {JudgeRecord.model_validate_json(line).key for line in local_lines}
    assert set(keys) == local_keys
    assert set(keys.values()) == {1}
    assert all((folder / LOGS_DIR / f"{key}.jsonl").stat().st_size > 0 for key in keys)
    ray_report, _ = report_folder(folder, replicates=200)
    local_report, _ = report_folder(tmp_path / "local", replicates=200)
    assert ray_report.model_dump(exclude={"generated_at"}) == local_report.model_dump(
        exclude={"generated_at"}
    )
    assert ray_report.configs
    assert ray_report.configs[0].scripted

    # The dead worker's process is gone and its sandboxes were collected.
    dead = next(info for info in stats.workers if info.name == stats.lost[0])
    assert not psutil.pid_exists(dead.pid)
    leftovers = [path for root in scratch_roots() for path in root.glob(f"aj_{dead.run_id}*")]
    assert leftovers == []


@pytest.mark.slow
async def test_max_connections_holds_across_the_cluster(cluster: object, tmp_path: Path) -> None:
    import ray.cloudpickle

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # type: ignore[no-untyped-call]
    calls = tmp_path / "calls.jsonl"
    only = set(sorted(_part_of_ds())[:8])
    executor = RayExecutor(slots_per_worker=2)
    summary = await judge_dataset(
        DS,
        tmp_path / "out",
        model_factory=functools.partial(_interval_model, calls),
        grid=GridSpec(modes=("llm",)),
        only=only,
        jobs=4,
        max_connections=1,
        executor=executor,
    )
    assert summary.runs == 8
    assert summary.problems == []
    assert len({info.node_id for info in executor.stats.workers}) == 2
    assert executor.stats.connection_limit == "cluster"
    intervals = sorted(json.loads(line) for line in calls.read_text().splitlines())
    assert len(intervals) == 8
    # One connection for the whole cluster: no call starts before the previous one ended.
    for (_, ended), (started, _) in itertools.pairwise(intervals):
        assert started >= ended - 0.005


@pytest.mark.slow
async def test_workers_that_cannot_start_stop_the_grid_with_the_reason(
    cluster: object, tmp_path: Path
) -> None:
    import ray.cloudpickle

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # type: ignore[no-untyped-call]
    with pytest.raises(ExecutorError, match="did not start: ValueError: no key for this model"):
        await judge_dataset(
            DS,
            tmp_path,
            model_factory=functools.partial(_model_only_in, os.getpid()),
            grid=GridSpec(modes=("llm",)),
            only={"fs-api-usage--dashed"},
            executor=RayExecutor(),
        )
    assert read_records(tmp_path / VERDICTS_FILE) == {}


def test_workers_ask_for_the_heaviest_kind_their_runs_need() -> None:
    dataset = load_dataset(DS, partial=True)
    from bench.grid_runner import plan_runs

    runs = plan_runs(dataset, GridSpec(modes=("agent", "llm")), "mock/pass")
    postgres = environment_kind("postgres").worker_resources
    assert postgres.memory_mb > WorkerResources().memory_mb
    assert grid_resources(runs) == postgres  # pg tasks are the DS suite's heaviest
    filesystem_only = [run for run in runs if run.task.id.startswith("fs-")]
    assert grid_resources(filesystem_only) == environment_kind("filesystem").worker_resources
    llm_only = [run for run in runs if run.mode == "llm"]
    assert grid_resources(llm_only) == WorkerResources()
    desktop = environment_kind("desktop").worker_resources
    assert desktop.memory_mb > postgres.memory_mb


async def test_connection_slots_bound_calls_and_survive_a_lost_holder() -> None:
    slots = ConnectionSlots(2)
    assert await slots.acquire("a", "t1")
    assert await slots.acquire("b", "t2")
    third = asyncio.create_task(slots.acquire("b", "t3"))
    await asyncio.sleep(0.05)
    assert not third.done()
    assert slots.in_use() == 2
    # Worker "a" dies holding a slot: forgetting it frees the slot for "b".
    assert slots.forget("a") == 1
    assert await asyncio.wait_for(third, 1) is True
    # "a" is refused from now on, and gives the slot it got straight back.
    slots.release("t2")
    assert await asyncio.wait_for(slots.acquire("a", "t4"), 1) is False
    assert slots.in_use() == 1
    slots.release("t3")
    assert slots.in_use() == 0
    # A ticket given up while waiting is returned as soon as it would be granted.
    assert await slots.acquire("b", "t5")
    assert await slots.acquire("b", "t6")
    waiting = asyncio.create_task(slots.acquire("b", "t7"))
    await asyncio.sleep(0.05)
    slots.release("t7")
    slots.release("t5")
    assert await asyncio.wait_for(waiting, 1) is False
    assert slots.in_use() == 1
