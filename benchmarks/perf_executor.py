"""``make perf-executor``: a latency-bound grid on the local executor and on a 3-node Ray cluster.

Prints figures (nothing asserted). The grid is ``--runs`` judge runs of ``--turns`` turns over
copies of a bundled trajectory (tools from the trajectory server, so no replay), with a scripted
model that sleeps ``--delay`` seconds per call: the wall time is model latency plus the
harness. Both executors get the same total concurrency (``--jobs`` runs, as many model
connections). The cluster is ``bench.ray_cluster.loopback_cluster``: a head and two worker
nodes as separate processes on 127.0.0.1, started before the clock starts.

Figures (medians of ``--repetitions`` grids per executor, alternated): runs per second on each
executor; the seconds the cluster's workers took to start and close (once per grid: process
start, imports, collecting leftovers, loading the dataset; closing sandboxes, collecting again);
the overhead Ray adds per run besides that, as the wall-time difference spread over the runs made
at once ((ray - start and close - local) x jobs / runs; target: <= 50 ms); and the driver's wait
for a run's result beyond the worker's own time for it (sending the run, returning record and
log), median and p95.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench.grid_runner import GridSpec, JudgeArm, judge_dataset
from bench.ray_cluster import loopback_cluster
from bench.ray_executor import RayExecutor
from benchmarks.perf_judge import build_dataset
from benchmarks.perf_sandboxes import percentile
from judge_agent.conversation import JudgeLimits
from judge_agent.model import ChatMessage, ChatMessageAssistant, GenerateConfig, ToolInfo
from judge_agent.providers.mock import Reply, ScriptedModel, reply, tool_call


def explore(
    turns: int, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
) -> Reply:
    """A script: view step 1 on every turn but the last, then submit a verdict."""
    made = sum(isinstance(message, ChatMessageAssistant) for message in messages)
    if made < turns - 1:
        return reply("", tool_call("VIEW_TRAJECTORY_STEP", step=1))
    return reply("", tool_call("submit_verdict", verdict="PASS", confidence=0.5, reasoning="x"))


def sleepy_model(turns: int, delay: float) -> ScriptedModel:
    """The benchmark's model (module level, so workers rebuild it from a pickled reference)."""
    return ScriptedModel("perf", respond=functools.partial(explore, turns), delay_seconds=delay)


async def _grid(
    root: Path, output: Path, *, turns: int, delay: float, jobs: int, executor: RayExecutor | None
) -> tuple[float, int]:
    grid = GridSpec(
        modes=("agent",),
        turns=(turns,),
        limits=JudgeLimits(turn_limit=turns),
        items="together",  # one run per trajectory copy, its claims judged in it
    )
    started = time.perf_counter()
    summary = await judge_dataset(
        root,
        output,
        arms=[JudgeArm(functools.partial(sleepy_model, turns, delay), grid)],
        jobs=jobs,
        max_connections=jobs,
        fresh=True,
        executor=executor,
    )
    seconds = time.perf_counter() - started
    if summary.problems or summary.by_verdict.get("PASS") != summary.runs:
        raise RuntimeError(f"the scripted grid did not run cleanly: {summary}")
    return seconds, summary.runs


def _line(label: str, runs: int, seconds: float) -> str:
    return f"{label:<44} {seconds:6.2f} s   {runs / seconds:6.2f} runs/s"


async def _measure(args: argparse.Namespace, executor: RayExecutor) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="aj-perf-executor-") as scratch:
        base = Path(scratch)
        dataset = base / "dataset"
        build_dataset(dataset, args.runs)
        options = {"turns": args.turns, "delay": args.delay, "jobs": args.jobs}
        await _grid(dataset, base / "warm", **options, executor=None)  # imports and caches
        local: list[float] = []
        remote: list[float] = []
        once: list[float] = []
        waits: list[float] = []
        runs = 0
        # Alternated, so a neighbour's load on this shared machine hits both alike.
        for repetition in range(args.repetitions):
            seconds, runs = await _grid(
                dataset, base / f"local{repetition}", **options, executor=None
            )
            local.append(seconds)
            seconds, _ = await _grid(
                dataset, base / f"ray{repetition}", **options, executor=executor
            )
            stats = executor.stats
            remote.append(seconds)
            once.append(stats.start_seconds + stats.close_seconds)
            waits.extend(value * 1000 for value in stats.overheads)
    local_s, remote_s, once_s = (statistics.median(v) for v in (local, remote, once))
    steady = statistics.median(r - o for r, o in zip(remote, once, strict=True))
    added = (steady - local_s) * args.jobs / runs * 1000
    ideal = -(-runs // args.jobs) * args.turns * args.delay
    head = f"{runs} runs x {args.turns} turns, {args.delay * 1000:.0f} ms per call"
    print(
        f"{head}, {args.jobs} at once (ideal {ideal:.2f} s); medians of {args.repetitions}",
        flush=True,
    )
    print(_line("local executor", runs, local_s), flush=True)
    workers = len(executor.stats.workers)
    print(_line(f"ray executor, 3 nodes, {workers} workers", runs, remote_s), flush=True)
    print(f"{'  of which starting and closing the workers':<44} {once_s:6.2f} s (once per grid)")
    print(_line("  ray, without starting and closing", runs, steady), flush=True)
    verdict = "met" if added <= 50 else "MISSED"
    print(
        f"{'ray overhead per run':<44} {added:6.1f} ms"
        f"   = (ray - local) x {args.jobs} at once / {runs} runs   target <= 50 ms: {verdict}",
        flush=True,
    )
    median, p95 = statistics.median(waits), percentile(waits, 0.95)
    print(
        f"{'  driver wait beyond the worker time':<44} median {median:6.2f} ms   p95 {p95:6.2f} ms",
        flush=True,
    )
    return {
        "runs": runs,
        "local_seconds": round(local_s, 3),
        "ray_seconds": round(remote_s, 3),
        "ray_start_and_close_seconds": round(once_s, 3),
        "local_runs_per_second": round(runs / local_s, 3),
        "ray_runs_per_second": round(runs / remote_s, 3),
        "ray_runs_per_second_started": round(runs / steady, 3),
        "ray_overhead_ms_per_run": round(added, 3),
        "ray_driver_wait_ms_median": round(median, 3),
        "ray_driver_wait_ms_p95": round(p95, 3),
    }


def main(args: argparse.Namespace) -> None:
    with loopback_cluster(workers=2, cpus_per_worker=args.jobs):
        executor = RayExecutor(slots_per_worker=max(1, args.jobs // 2))
        figures = asyncio.run(_measure(args, executor))
    print(json.dumps(figures))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=96)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=16)
    parser.add_argument("--delay", type=float, default=0.2, help="seconds per scripted call")
    parser.add_argument("--repetitions", type=int, default=3, help="grids on each executor")
    main(parser.parse_args())
