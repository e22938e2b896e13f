"""``make perf-judge``: the judge harness's own cost, printed as figures (nothing asserted).

Uses the scripted model (``mock/``), so every figure is the harness, not a judge:
- overhead per turn: a judge run of 16 turns (15 tool calls through the in-memory trajectory MCP
  server, then ``submit_verdict``) with a model that answers at once, so the run's wall time is
  all harness; divided by its turns. Median and p95 over ``--overhead-runs`` runs, each through
  the whole dataset runner (dataset loading, prompt, MCP sessions, logs, records);
- grid wall time: 64 judge runs x 16 turns at ``--jobs 32`` with a model that sleeps 200 ms per
  call, against the ideal (64 / 32 waves x 16 calls x 0.2 s = 6.4 s).
Targets (issue #6): overhead <= 5 ms median per turn; wall time <= 1.25 x the ideal.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench.grid_runner import GridSpec, judge_dataset
from benchmarks.perf_sandboxes import percentile
from dataset.store import Manifest, load_dataset, write_manifest, write_task, write_trajectory
from judge_agent.conversation import JudgeLimits
from judge_agent.model import ChatMessage, ChatMessageAssistant, GenerateConfig, ToolInfo
from judge_agent.providers.mock import Reply, ScriptedModel, reply, tool_call

MINI = Path(__file__).resolve().parents[1] / "datasets" / "examples" / "mini"
SOURCE = "search-python3-release-dates--pass"
TURNS = 16


def build_dataset(root: Path, copies: int) -> None:
    """``copies`` copies of a bundled trajectory (a domain without replay: tools are the
    trajectory server's), so the grid measures the judge and not replays."""
    mini = load_dataset(MINI)
    trajectory = mini.trajectories[SOURCE]
    write_manifest(root, Manifest(name="perf-judge"))
    write_task(root, mini.tasks[trajectory.task_id])
    for copy in range(copies):
        write_trajectory(root, trajectory.model_copy(update={"id": f"{SOURCE}--copy{copy:03d}"}))


class _Explorer:
    """A script: view step 1 on every turn but the last, then submit a verdict."""

    def __init__(self) -> None:
        self.model_seconds = 0.0

    def __call__(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> Reply:
        made = sum(isinstance(message, ChatMessageAssistant) for message in messages)
        if made < TURNS - 1:
            return reply("", tool_call("VIEW_TRAJECTORY_STEP", step=1))
        return reply("", tool_call("submit_verdict", verdict="PASS", confidence=0.5, reasoning="x"))


async def _grid(root: Path, output: Path, *, delay: float, jobs: int) -> tuple[float, int]:
    script = _Explorer()
    started = time.perf_counter()
    summary = await judge_dataset(
        root,
        output,
        model_factory=lambda: ScriptedModel("perf", respond=script, delay_seconds=delay),
        grid=GridSpec(modes=("agent",), turns=(TURNS,), limits=JudgeLimits(turn_limit=TURNS)),
        jobs=jobs,
        max_connections=jobs,
        fresh=True,
    )
    seconds = time.perf_counter() - started
    if summary.problems or summary.by_verdict.get("PASS") != summary.runs:
        raise RuntimeError(f"the scripted grid did not run cleanly: {summary}")
    return seconds, summary.runs


async def main(overhead_runs: int, grid_runs: int, jobs: int, delay: float) -> None:
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="aj-perf-judge-") as scratch:
        base = Path(scratch)
        single = base / "one"
        build_dataset(single, 1)
        await _grid(single, base / "warm", delay=0.0, jobs=1)  # imports and caches
        per_turn: list[float] = []
        for index in range(overhead_runs):
            seconds, runs = await _grid(single, base / f"o{index}", delay=0.0, jobs=1)
            per_turn.append(seconds / (runs * TURNS))
        milliseconds = [value * 1000 for value in per_turn]
        median, p95 = statistics.median(milliseconds), percentile(milliseconds, 0.95)
        figures["overhead_ms_per_turn_median"] = round(median, 3)
        figures["overhead_ms_per_turn_p95"] = round(p95, 3)
        print(
            f"{'harness overhead per turn (scripted model, no latency)':<58}"
            f" median {median:6.2f} ms"
            f"   p95 {p95:6.2f} ms   (n={overhead_runs} runs x {TURNS} turns)"
            f"   target <= 5 ms: {'met' if median <= 5 else 'MISSED'}",
            flush=True,
        )
        grid = base / "grid"
        build_dataset(grid, grid_runs)
        seconds, runs = await _grid(grid, base / "grid-out", delay=delay, jobs=jobs)
        waves = -(-runs // jobs)
        ideal = waves * TURNS * delay
        figures.update(grid_seconds=round(seconds, 3), grid_ideal_seconds=round(ideal, 3))
        print(
            f"{f'{runs} runs x {TURNS} turns, --jobs {jobs}, {delay * 1000:.0f} ms per call':<58} "
            f"{seconds:6.2f} s   ideal {ideal:.2f} s   ratio {seconds / ideal:.3f}"
            f"   target <= 1.25: {'met' if seconds / ideal <= 1.25 else 'MISSED'}",
            flush=True,
        )
    print(json.dumps(figures))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--overhead-runs", type=int, default=20)
    parser.add_argument("--grid-runs", type=int, default=64)
    parser.add_argument("--jobs", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.2, help="seconds per scripted call")
    options = parser.parse_args()
    asyncio.run(main(options.overhead_runs, options.grid_runs, options.jobs, options.delay))
