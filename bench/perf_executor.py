"""``make perf-executor``: a latency-bound grid on the local executor and on a 3-node Ray cluster.

Prints figures (nothing asserted). The grid is ``--runs`` judge runs of ``--turns`` turns over
copies of a bundled trajectory (tools from the trajectory server, so no replay), with a scripted
model that sleeps ``--delay`` seconds per call: the wall time is model latency plus the
harness. Both executors get the same total concurrency (``--jobs`` runs, as many model
connections). The cluster is ``bench.ray_cluster.loopback_cluster``: a head and two worker
nodes as separate processes on 127.0.0.1, started before the clock starts.

Figures: runs per second on each executor; the seconds the cluster's workers took to start (once
per grid: process start, imports, collecting leftovers, loading the dataset); the overhead Ray
adds per run once they are ready, as the wall-time difference spread over the runs made at once
((ray - start - local) x jobs / runs; target: <= 50 ms), which counts the cluster-wide model-call
slots too; and the driver's wait for a run's result beyond the worker's own time for it (sending
the run, returning record and log), median and p95.
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
from bench.perf_judge import build_dataset
from bench.perf_sandboxes import percentile
from bench.ray_cluster import loopback_cluster
from bench.ray_executor import RayExecutor
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
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="aj-perf-executor-") as scratch:
        base = Path(scratch)
        dataset = base / "dataset"
        build_dataset(dataset, args.runs)
        options = {"turns": args.turns, "delay": args.delay, "jobs": args.jobs}
        await _grid(dataset, base / "warm", **options, executor=None)  # imports and caches
        local, runs = await _grid(dataset, base / "local", **options, executor=None)
        remote, _ = await _grid(dataset, base / "ray", **options, executor=executor)
        overheads = [value * 1000 for value in executor.stats.overheads]
        median = statistics.median(overheads)
        p95 = percentile(overheads, 0.95)
        starting = executor.stats.start_seconds
        steady = remote - starting
        ideal = -(-runs // args.jobs) * args.turns * args.delay
        added = (steady - local) * args.jobs / runs * 1000
        head = f"{runs} runs x {args.turns} turns, {args.delay * 1000:.0f} ms per call"
        print(f"{head}, {args.jobs} at once (ideal {ideal:.2f} s)", flush=True)
        print(_line("local executor", runs, local), flush=True)
        workers = len(executor.stats.workers)
        print(_line(f"ray executor, 3 nodes, {workers} workers", runs, remote), flush=True)
        print(
            f"{'  of which starting the workers':<44} {starting:6.2f} s (once per grid)",
            flush=True,
        )
        print(_line("  ray, workers started", runs, steady), flush=True)
        verdict = "met" if added <= 50 else "MISSED"
        print(
            f"{'ray overhead per run (wall, workers started)':<44} {added:6.1f} ms"
            f"   = (ray - local) x {args.jobs} at once / {runs} runs   target <= 50 ms: {verdict}",
            flush=True,
        )
        print(
            f"{'  driver wait beyond the worker time':<44} median {median:6.2f} ms"
            f"   p95 {p95:6.2f} ms",
            flush=True,
        )
        figures.update(
            runs=runs,
            local_seconds=round(local, 3),
            ray_seconds=round(remote, 3),
            ray_start_seconds=round(starting, 3),
            local_runs_per_second=round(runs / local, 3),
            ray_runs_per_second=round(runs / remote, 3),
            ray_runs_per_second_started=round(runs / steady, 3),
            ray_overhead_ms_per_run=round(added, 3),
            ray_driver_wait_ms_median=round(median, 3),
            ray_driver_wait_ms_p95=round(p95, 3),
        )
    return figures


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
    main(parser.parse_args())
