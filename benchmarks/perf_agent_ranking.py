"""``make perf-ranking``: how long the MobileJudgeBench-style scoring takes at the paper's scale,
printed as figures (nothing asserted).

Synthetic data of the paper's shape: 931 labelled trajectories of 289 tasks from 6 source
benchmarks, 24 agents (benchmark x model), 30 judge variants of varied accuracy, one verdict each;
scored with 2,000 task-cluster bootstrap replicates (tasks resampled within each benchmark). The
verdicts are random draws, so the numbers themselves mean nothing; only the time is the figure.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench.agent_ranking import TrajectoryFacts, Verdict, mobile_markdown, score_variants


def synthetic(
    seed: int, trajectories: int, tasks: int, variants: int
) -> tuple[list[TrajectoryFacts], dict[str, dict[str, list[Verdict]]]]:
    """Facts and verdicts of the paper's shape (see the module docstring)."""
    rng = np.random.default_rng(seed)
    benchmarks = [f"bench{b}" for b in range(6)]
    models = [f"model{m}" for m in range(4)]
    task_benchmark = [benchmarks[t % 6] for t in range(tasks)]
    facts = []
    for number in range(trajectories):
        task = number % tasks
        benchmark = task_benchmark[task]
        model = models[(number // tasks) % 4]
        facts.append(
            TrajectoryFacts(
                f"traj{number}",
                f"task{task}",
                benchmark,
                f"{benchmark}/{model}",
                bool(rng.random() < 0.53),
            )
        )
    verdicts: dict[str, dict[str, list[Verdict]]] = {}
    for variant in range(variants):
        accuracy = 0.75 + 0.15 * variant / max(variants - 1, 1)
        verdicts[f"variant{variant}"] = {
            fact.trajectory_id: [
                ("PASS" if fact.label else "FAIL")
                if rng.random() < accuracy
                else ("FAIL" if fact.label else "PASS")
            ]
            for fact in facts
        }
    return facts, verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    facts, verdicts = synthetic(0, 931, 289, 30)
    for repeat in range(1, args.repeats + 1):
        started = time.perf_counter()
        scores = score_variants(facts, verdicts, replicates=args.replicates)
        scored = time.perf_counter() - started
        started = time.perf_counter()
        text = mobile_markdown(scores)
        written = time.perf_counter() - started
        print(
            f"run {repeat}: scored 931 trajectories x 30 variants with {args.replicates:,} "
            f"replicates in {scored:.2f} s; tables in {written * 1000:.1f} ms "
            f"({len(text):,} characters)"
        )


if __name__ == "__main__":
    main()
