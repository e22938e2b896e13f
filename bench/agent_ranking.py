"""Scoring judges the way MobileJudgeBench does: per source benchmark and per agent, how well
each judge variant ranks the agents, and which quality metric predicts that.

Owns:

* ``TrajectoryFacts`` and ``trajectory_facts`` (a trajectory's task, source benchmark and agent,
  from the dataset: ``metadata["benchmark"]`` (or ``source_benchmark``) of the trajectory or its
  task, else its provenance format; the *agent* is the benchmark with the recorded agent and
  model, as the paper counts a benchmark-model pair as one agent);
* ``score_variants``: for every judge variant (one report configuration), trajectory-level
  accuracy, precision, recall, F1 and balanced accuracy (``INVALID`` scored as wrong), each
  agent's success rate by the labels and by the judge, **ranking fidelity** (Spearman's rho of
  the two, over agents) and **rate error** (their mean absolute difference); the
  **meta-correlation** (Spearman's rho, across variants, between each quality metric and each
  reliability metric); all with percentile intervals from a **task-cluster bootstrap** in which
  tasks are resampled with replacement *within each source benchmark*, a task carrying all its
  trajectories, the variants held fixed (2,000 replicates, fixed seed); per-benchmark scores;
  and the **failure table** (trajectories most variants get wrong);
* ``mobile_markdown``, the tables as Markdown, headed by a warning when any variant is scripted.

Several runs of one variant on a trajectory are pooled: each run's verdict counts once in the
confusion counts and in the judged success rate. A replicate where a statistic is undefined (an
agent set whose rates are all equal, a metric with an empty denominator) leaves it out of that
statistic's percentiles; a point estimate that is undefined is shown as a dash.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict
from scipy import stats

from bench.metrics import accuracy_from_counts, balanced_accuracy_from_counts, f1_from_counts
from bench.results import Prediction
from bench.scores import Interval
from dataset.domains import domain_spec
from dataset.store import Dataset, load_dataset
from storage.files import write_json_atomic, write_text_atomic

__all__ = [
    "JSON_FILE",
    "MARKDOWN_FILE",
    "QUALITY_METRICS",
    "RELIABILITY_METRICS",
    "AgentRates",
    "BenchmarkScores",
    "FailureRow",
    "MetaCorrelation",
    "MobileScores",
    "TrajectoryFacts",
    "VariantScores",
    "Verdict",
    "average_ranks",
    "mobile_markdown",
    "score_variants",
    "spearman",
    "trajectory_facts",
    "write_agent_ranking",
]

MARKDOWN_FILE = "agent-ranking.md"
JSON_FILE = "agent-ranking.json"

QUALITY_METRICS = ("accuracy", "precision", "recall", "f1", "balanced_accuracy")
"""The trajectory-level quality metrics, in table order."""
RELIABILITY_METRICS = ("ranking_rho", "rate_mae")
"""The agent-level reliability metrics: ranking fidelity and rate error."""

Verdict = Literal["PASS", "FAIL", "INVALID"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


@dataclass(frozen=True)
class TrajectoryFacts:
    """What the scoring needs to know of one labelled trajectory."""

    trajectory_id: str
    task_id: str
    benchmark: str
    agent: str
    label: bool


def trajectory_facts(dataset: Dataset) -> list[TrajectoryFacts]:
    """The facts of every labelled trajectory of ``dataset``, sorted by id."""
    facts = []
    for trajectory_id, trajectory in sorted(dataset.trajectories.items()):
        if trajectory.label is None:
            continue
        task = dataset.tasks[trajectory.task_id]
        benchmark = next(
            (
                value
                for record in (trajectory.metadata, task.metadata)
                for key in ("benchmark", "source_benchmark")
                if isinstance(value := record.get(key), str) and value
            ),
            trajectory.provenance.source_format,
        )
        agent = f"{benchmark}/{trajectory.agent}"
        if trajectory.model and trajectory.model not in trajectory.agent:
            agent += f"/{trajectory.model}"
        facts.append(
            TrajectoryFacts(
                trajectory_id, task.id, benchmark, agent, trajectory.label.value == "PASS"
            )
        )
    return facts


class AgentRates(_Model):
    """One agent's success rate by the labels and by each variant."""

    agent: str
    """``benchmark/agent[/model]``."""
    benchmark: str
    """Its source benchmark."""
    trajectories: int
    """Its labelled trajectories."""
    label_rate: float
    """The share the labels call PASS."""
    judged_rates: dict[str, float]
    """The share of PASS verdicts, by variant (runs pooled)."""


class VariantScores(_Model):
    """One judge variant's quality and reliability, with bootstrap intervals."""

    variant: str
    """The configuration's label."""
    scripted: bool
    """Its verdicts come from the scripted model: a dry run, not a judge result."""
    predictions: int
    """Verdicts scored (trajectories times runs)."""
    invalid: int
    """Of those, ``INVALID`` ones (scored as wrong)."""
    values: dict[str, float | None]
    """Point estimates of every quality and reliability metric (None: undefined)."""
    intervals: dict[str, Interval | None]
    """Their 95% task-cluster bootstrap intervals (None: undefined in every replicate)."""


class BenchmarkScores(_Model):
    """One source benchmark's trajectories scored on their own."""

    benchmark: str
    trajectories: int
    """Labelled trajectories from it."""
    tasks: int
    """Their tasks."""
    label_rate: float
    """The share labelled PASS."""
    accuracy: dict[str, float | None]
    """Accuracy by variant."""
    f1: dict[str, float | None]
    """F1 by variant."""


class MetaCorrelation(_Model):
    """Across variants: does a quality metric predict a reliability metric?"""

    quality: str
    """One of ``QUALITY_METRICS``."""
    reliability: str
    """One of ``RELIABILITY_METRICS``."""
    rho: float | None
    """Spearman's rho across the variants where both are defined (None: undefined)."""
    variants: int
    """How many variants entered it."""
    interval: Interval | None
    """Its 95% task-cluster bootstrap interval, the variants held fixed."""


class FailureRow(_Model):
    """A trajectory most variants judge wrongly."""

    trajectory_id: str
    benchmark: str
    agent: str
    label: Literal["PASS", "FAIL"]
    wrong: int
    """Variants whose verdicts on it were mostly wrong."""
    variants: int
    """Variants that judged it."""
    kind: str
    """``false positive`` (a failure judged PASS) or ``false negative`` (a success judged FAIL or
    INVALID)."""


class MobileScores(_Model):
    """Every number of the MobileJudgeBench-style tables."""

    variants: list[VariantScores]
    benchmarks: list[BenchmarkScores]
    agents: list[AgentRates]
    meta: list[MetaCorrelation]
    failures: list[FailureRow]
    replicates: int
    """Bootstrap replicates."""
    seed: int
    """The bootstrap's seed (a report is reproducible)."""
    scripted: bool
    """Any variant is scripted: the tables test the pipeline, they measure no judge."""


def average_ranks(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Ranks from 1, ties given the mean of the ranks they span (as ``scipy.stats.rankdata``;
    written out because the bootstrap calls it for every replicate)."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    bounds = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1], True])
    sorted_ranks = np.repeat((bounds[:-1] + bounds[1:] - 1) / 2.0 + 1.0, np.diff(bounds))
    ranks = np.empty(values.size)
    ranks[order] = sorted_ranks
    return ranks


def spearman(x: NDArray[np.float64], y: NDArray[np.float64]) -> float:
    """Spearman's rho (average ranks for ties); NaN with fewer than two points or a constant
    side."""
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    rx = average_ranks(x)
    ry = average_ranks(y)
    rx -= rx.mean()
    ry -= ry.mean()
    return float(rx @ ry / math.sqrt(float(rx @ rx) * float(ry @ ry)))


def _rowwise_spearman(
    rows: NDArray[np.float64], target: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Spearman's rho of each row of ``rows`` with ``target`` (NaN where undefined); a row with
    gaps (agents a variant did not judge) is correlated over the agents it judged."""
    if target.size < 2 or np.ptp(target) == 0:
        return np.full(rows.shape[0], np.nan)
    gaps = np.isnan(rows).any(axis=1)
    if gaps.any():
        out = np.empty(rows.shape[0])
        for i, row in enumerate(rows):
            defined = ~np.isnan(row)
            out[i] = spearman(row[defined], target[defined])
        return out
    rank_rows = stats.rankdata(rows, axis=1)
    rank_target = stats.rankdata(target)
    a = rank_rows - rank_rows.mean(axis=1, keepdims=True)
    b = rank_target - rank_target.mean()
    norm = np.sqrt((a * a).sum(axis=1)) * np.sqrt((b * b).sum())
    out = np.full(rows.shape[0], np.nan)
    np.divide(a @ b, norm, out=out, where=norm > 0)
    return out


@dataclass
class _Arrays:
    """The data as arrays: T trajectories, V variants, A agents, K tasks."""

    counts: NDArray[np.float64]  # (T, V, 4): tp, fp, tn, fn over runs
    passes: NDArray[np.float64]  # (T, V): PASS verdicts
    runs: NDArray[np.float64]  # (T, V): verdicts
    invalid: NDArray[np.float64]  # (T, V)
    labels: NDArray[np.float64]  # (T,)
    agents: NDArray[np.float64]  # (T, A) membership
    task_of: NDArray[np.int64]  # (T,) task index
    strata: list[NDArray[np.int64]]  # per benchmark: its task indices

    def __post_init__(self) -> None:
        t, v = self.passes.shape
        a = self.agents.shape[1]
        # (T, V * A) products, so one weighted sum per replicate is a matrix-vector product.
        self.pass_by_agent = (self.passes[:, :, None] * self.agents[:, None, :]).reshape(t, v * a)
        self.runs_by_agent = (self.runs[:, :, None] * self.agents[:, None, :]).reshape(t, v * a)
        self.flat_counts = self.counts.reshape(t, v * 4)


def _arrays(
    facts: Sequence[TrajectoryFacts],
    verdicts: Mapping[str, Mapping[str, Sequence[Verdict]]],
    variants: list[str],
    agent_names: list[str],
    task_names: list[str],
) -> _Arrays:
    t, v = len(facts), len(variants)
    counts = np.zeros((t, v, 4))
    passes = np.zeros((t, v))
    runs = np.zeros((t, v))
    invalid = np.zeros((t, v))
    for i, fact in enumerate(facts):
        for j, variant in enumerate(variants):
            for verdict in verdicts[variant].get(fact.trajectory_id, ()):
                runs[i, j] += 1
                passes[i, j] += verdict == "PASS"
                invalid[i, j] += verdict == "INVALID"
                if fact.label:
                    counts[i, j, 0 if verdict == "PASS" else 3] += 1
                else:
                    counts[i, j, 2 if verdict == "FAIL" else 1] += 1
    agents = np.zeros((t, len(agent_names)))
    for i, fact in enumerate(facts):
        agents[i, agent_names.index(fact.agent)] = 1
    task_index = {name: k for k, name in enumerate(task_names)}
    task_of = np.array([task_index[fact.task_id] for fact in facts], dtype=np.int64)
    by_benchmark: dict[str, set[int]] = defaultdict(set)
    for fact in facts:
        by_benchmark[fact.benchmark].add(task_index[fact.task_id])
    strata = [np.array(sorted(tasks), dtype=np.int64) for _, tasks in sorted(by_benchmark.items())]
    return _Arrays(
        counts,
        passes,
        runs,
        invalid,
        np.array([float(f.label) for f in facts]),
        agents,
        task_of,
        strata,
    )


def _quality(counts: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """Every quality metric from (..., 4) counts."""
    tp, fp, _tn, fn = (counts[..., k] for k in range(4))
    precision = np.full(tp.shape, np.nan)
    np.divide(tp, tp + fp, out=precision, where=(tp + fp) > 0)
    recall = np.full(tp.shape, np.nan)
    np.divide(tp, tp + fn, out=recall, where=(tp + fn) > 0)
    return {
        "accuracy": accuracy_from_counts(counts),
        "precision": precision,
        "recall": recall,
        "f1": f1_from_counts(counts),
        "balanced_accuracy": balanced_accuracy_from_counts(counts),
    }


def _metrics(data: _Arrays, weights: NDArray[np.float64]) -> list[dict[str, NDArray[np.float64]]]:
    """Every metric of every variant (each of shape (V,)), for each row of ``weights`` (a
    (B, T) matrix of trajectory weights: the sums of all rows are one matrix product)."""
    rows, variants, agents = weights.shape[0], data.passes.shape[1], data.agents.shape[1]
    counts = (weights @ data.flat_counts).reshape(rows, variants, 4)
    quality = _quality(counts)
    agent_weight = weights @ data.agents
    labelled = (weights * data.labels) @ data.agents
    passed = (weights @ data.pass_by_agent).reshape(rows, variants, agents)
    judged_runs = (weights @ data.runs_by_agent).reshape(rows, variants, agents)
    found = []
    for row in range(rows):
        present = agent_weight[row] > 0
        label_rates = labelled[row, present] / agent_weight[row, present]
        judged = np.full((variants, int(present.sum())), np.nan)
        np.divide(
            passed[row][:, present],
            judged_runs[row][:, present],
            out=judged,
            where=judged_runs[row][:, present] > 0,
        )
        errors = np.abs(judged - label_rates)
        judged_agents = (~np.isnan(errors)).sum(axis=1)
        mae = np.full(variants, np.nan)
        np.divide(np.nansum(errors, axis=1), judged_agents, out=mae, where=judged_agents > 0)
        metrics = {name: values[row] for name, values in quality.items()}
        metrics["ranking_rho"] = _rowwise_spearman(judged, label_rates)
        metrics["rate_mae"] = mae
        found.append(metrics)
    return found


def _meta(metrics: Mapping[str, NDArray[np.float64]]) -> dict[tuple[str, str], tuple[float, int]]:
    """Spearman across variants of each quality metric with each reliability metric."""
    found = {}
    for quality in QUALITY_METRICS:
        for reliability in RELIABILITY_METRICS:
            x, y = metrics[quality], metrics[reliability]
            defined = ~np.isnan(x) & ~np.isnan(y)
            found[(quality, reliability)] = (spearman(x[defined], y[defined]), int(defined.sum()))
    return found


def _replicate_weights(
    data: _Arrays, replicates: int, seed: int, n_tasks: int
) -> NDArray[np.float64]:
    """(replicates, T) trajectory weights: tasks resampled with replacement within each source
    benchmark, each drawn task weighting all its trajectories by how often it was drawn."""
    rng = np.random.default_rng(seed)
    multiplicity = np.zeros((replicates, n_tasks))
    rows = np.arange(replicates)[:, np.newaxis]
    for tasks in data.strata:
        drawn = tasks[rng.integers(0, tasks.size, size=(replicates, tasks.size))]
        np.add.at(multiplicity, (np.broadcast_to(rows, drawn.shape), drawn), 1.0)
    return multiplicity[:, data.task_of]


def _interval(values: Sequence[float], confidence: float) -> Interval | None:
    array = np.asarray(values, dtype=np.float64)
    defined = array[~np.isnan(array)]
    if defined.size == 0:
        return None
    tail = (1.0 - confidence) / 2.0
    low, high = np.percentile(defined, [100.0 * tail, 100.0 * (1.0 - tail)])
    return Interval(low=float(low), high=float(high))


def _value(number: float) -> float | None:
    return None if math.isnan(number) else float(number)


_BLOCK = 250
"""Replicates whose weighted sums are computed together (bounds the memory of one product)."""


def score_variants(
    facts: Sequence[TrajectoryFacts],
    verdicts: Mapping[str, Mapping[str, Sequence[Verdict]]],
    *,
    scripted: frozenset[str] = frozenset(),
    replicates: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    failure_share: float = 0.5,
) -> MobileScores:
    """Score every variant of ``verdicts`` (variant -> trajectory id -> its runs' verdicts) on
    the labelled trajectories ``facts``. Trajectories a variant did not judge count for nothing
    in that variant's scores."""
    if replicates < 1:
        raise ValueError(f"replicates must be positive, got {replicates}")
    variants = sorted(verdicts)
    agent_names = sorted({fact.agent for fact in facts})
    task_names = sorted({fact.task_id for fact in facts})
    data = _arrays(facts, verdicts, variants, agent_names, task_names)
    (point,) = _metrics(data, np.ones((1, len(facts))))
    point_meta = _meta(point)
    samples: dict[str, list[NDArray[np.float64]]] = defaultdict(list)
    meta_samples: dict[tuple[str, str], list[float]] = defaultdict(list)
    if facts and variants:
        all_weights = _replicate_weights(data, replicates, seed, len(task_names))
        for block in range(0, replicates, _BLOCK):
            for metrics in _metrics(data, all_weights[block : block + _BLOCK]):
                for name, values in metrics.items():
                    samples[name].append(values)
                for key, (rho, _) in _meta(metrics).items():
                    meta_samples[key].append(rho)
    variant_rows = []
    for j, variant in enumerate(variants):
        names = (*QUALITY_METRICS, *RELIABILITY_METRICS)
        variant_rows.append(
            VariantScores(
                variant=variant,
                scripted=variant in scripted,
                predictions=int(data.runs[:, j].sum()),
                invalid=int(data.invalid[:, j].sum()),
                values={name: _value(point[name][j]) for name in names},
                intervals={
                    name: _interval([row[j] for row in samples[name]], confidence) for name in names
                },
            )
        )
    meta = [
        MetaCorrelation(
            quality=quality,
            reliability=reliability,
            rho=_value(point_meta[(quality, reliability)][0]),
            variants=point_meta[(quality, reliability)][1],
            interval=_interval(meta_samples[(quality, reliability)], confidence),
        )
        for quality in QUALITY_METRICS
        for reliability in RELIABILITY_METRICS
    ]
    return MobileScores(
        variants=variant_rows,
        benchmarks=_benchmarks(facts, data, variants),
        agents=_agents(facts, data, variants, agent_names),
        meta=meta,
        failures=_failures(facts, data, variants, failure_share),
        replicates=replicates,
        seed=seed,
        scripted=any(row.scripted for row in variant_rows),
    )


def _benchmarks(
    facts: Sequence[TrajectoryFacts], data: _Arrays, variants: list[str]
) -> list[BenchmarkScores]:
    rows = []
    for benchmark in sorted({fact.benchmark for fact in facts}):
        mask = np.array([fact.benchmark == benchmark for fact in facts])
        counts = data.counts[mask].sum(axis=0)
        quality = _quality(counts)
        rows.append(
            BenchmarkScores(
                benchmark=benchmark,
                trajectories=int(mask.sum()),
                tasks=len({fact.task_id for fact in facts if fact.benchmark == benchmark}),
                label_rate=float(data.labels[mask].mean()),
                accuracy={v: _value(quality["accuracy"][j]) for j, v in enumerate(variants)},
                f1={v: _value(quality["f1"][j]) for j, v in enumerate(variants)},
            )
        )
    return rows


def _agents(
    facts: Sequence[TrajectoryFacts], data: _Arrays, variants: list[str], agent_names: list[str]
) -> list[AgentRates]:
    rows = []
    for a, agent in enumerate(agent_names):
        mask = data.agents[:, a] > 0
        runs = data.runs[mask].sum(axis=0)
        passes = data.passes[mask].sum(axis=0)
        rows.append(
            AgentRates(
                agent=agent,
                benchmark=next(f.benchmark for f in facts if f.agent == agent),
                trajectories=int(mask.sum()),
                label_rate=float(data.labels[mask].mean()),
                judged_rates={
                    v: float(passes[j] / runs[j]) for j, v in enumerate(variants) if runs[j] > 0
                },
            )
        )
    return rows


def _failures(
    facts: Sequence[TrajectoryFacts], data: _Arrays, variants: list[str], share: float
) -> list[FailureRow]:
    wrong_runs = data.counts[:, :, 1] + data.counts[:, :, 3]  # fp + fn, INVALID included
    judged = data.runs > 0
    mostly_wrong = judged & (wrong_runs * 2 > data.runs)
    rows = []
    for i, fact in enumerate(facts):
        seen = int(judged[i].sum())
        wrong = int(mostly_wrong[i].sum())
        if seen and wrong / seen >= share:
            rows.append(
                FailureRow(
                    trajectory_id=fact.trajectory_id,
                    benchmark=fact.benchmark,
                    agent=fact.agent,
                    label="PASS" if fact.label else "FAIL",
                    wrong=wrong,
                    variants=seen,
                    kind="false negative" if fact.label else "false positive",
                )
            )
    rows.sort(key=lambda row: (-row.wrong / row.variants, row.trajectory_id))
    return rows


# --- Markdown -------------------------------------------------------------------------------

_NAMES = {
    "accuracy": "Acc",
    "precision": "Prec",
    "recall": "Rec",
    "f1": "F1",
    "balanced_accuracy": "BAcc",
    "ranking_rho": "ranking rho",
    "rate_mae": "rate MAE",
}


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _with_interval(value: float | None, interval: Interval | None) -> str:
    text = _number(value)
    if interval is not None and value is not None:
        text += f" [{interval.low:.2f}, {interval.high:.2f}]"
    return text


def mobile_markdown(scores: MobileScores, *, limit: int = 30) -> str:
    """The tables as Markdown."""
    lines = ["# Agent ranking and meta-correlation (MobileJudgeBench scoring)", ""]
    if scores.scripted:
        lines += [
            "**SCRIPTED: rows marked (scripted) come from the scripted `mock` model. They test "
            "the pipeline and measure no judge.**",
            "",
        ]
    lines += [
        f"Intervals: 95% task-cluster bootstrap, tasks resampled within each source benchmark, "
        f"{scores.replicates:,} replicates, seed {scores.seed}. INVALID verdicts count as wrong.",
        "",
        "## Judge variants",
        "",
        "| variant | verdicts | invalid | "
        + " | ".join(_NAMES[m] for m in (*QUALITY_METRICS, *RELIABILITY_METRICS))
        + " |",
        "| --- | ---: | ---: |" + " ---: |" * (len(QUALITY_METRICS) + len(RELIABILITY_METRICS)),
    ]
    for row in scores.variants:
        name = row.variant + (" (scripted)" if row.scripted else "")
        cells = [_number(row.values[m]) for m in QUALITY_METRICS]
        cells += [_with_interval(row.values[m], row.intervals[m]) for m in RELIABILITY_METRICS]
        lines.append(f"| {name} | {row.predictions} | {row.invalid} | " + " | ".join(cells) + " |")
    lines += ["", "## Meta-correlation across variants", ""]
    lines += ["| quality metric | rho with ranking fidelity | rho with rate MAE | variants |"]
    lines += ["| --- | ---: | ---: | ---: |"]
    by_key = {(m.quality, m.reliability): m for m in scores.meta}
    for quality in QUALITY_METRICS:
        ranking, mae = by_key[(quality, "ranking_rho")], by_key[(quality, "rate_mae")]
        lines.append(
            f"| {_NAMES[quality]} | {_with_interval(ranking.rho, ranking.interval)} | "
            f"{_with_interval(mae.rho, mae.interval)} | {ranking.variants} |"
        )
    variants = [row.variant for row in scores.variants]
    lines += ["", "## Per source benchmark (accuracy / F1)", ""]
    lines.append(
        "| benchmark | tasks | trajectories | label PASS rate | " + " | ".join(variants) + " |"
    )
    lines.append("| --- | ---: | ---: | ---: |" + " ---: |" * len(variants))
    for bench in scores.benchmarks:
        cells = [f"{_number(bench.accuracy[v], 2)} / {_number(bench.f1[v], 2)}" for v in variants]
        lines.append(
            f"| {bench.benchmark} | {bench.tasks} | {bench.trajectories} | "
            f"{bench.label_rate:.2f} | " + " | ".join(cells) + " |"
        )
    lines += ["", "## Per agent: success rate by the labels and by each variant", ""]
    lines.append("| agent | trajectories | labels | " + " | ".join(variants) + " |")
    lines.append("| --- | ---: | ---: |" + " ---: |" * len(variants))
    for agent in scores.agents:
        cells = [_number(agent.judged_rates.get(v), 2) for v in variants]
        lines.append(
            f"| {agent.agent} | {agent.trajectories} | {agent.label_rate:.2f} | "
            + " | ".join(cells)
            + " |"
        )
    lines += ["", "## Trajectories most variants get wrong", ""]
    if not scores.failures:
        lines.append("None: no trajectory is judged wrongly by half of the variants or more.")
    else:
        lines += ["| trajectory | benchmark | agent | label | wrong | kind |"]
        lines += ["| --- | --- | --- | --- | ---: | --- |"]
        for failure in scores.failures[:limit]:
            lines.append(
                f"| {failure.trajectory_id} | {failure.benchmark} | {failure.agent} | "
                f"{failure.label} | {failure.wrong}/{failure.variants} | {failure.kind} |"
            )
        if len(scores.failures) > limit:
            lines.append(f"\n{len(scores.failures) - limit} more in the JSON file.")
    return "\n".join(lines) + "\n"


def write_agent_ranking(
    folder: Path, predictions: Sequence[Prediction], dataset_root: Path, *, replicates: int = 2000
) -> Path | None:
    """Score ``predictions`` (judges and baselines, each configuration a variant) on the
    dataset's labelled trajectories and write ``agent-ranking.md`` and ``agent-ranking.json``
    into ``folder``; only for datasets of agent runs from source benchmarks (tasks of a domain
    whose record ranks agents, such as mobile, or trajectories naming their ``benchmark``).
    Returns the Markdown file, or None when skipped."""
    try:
        dataset = load_dataset(dataset_root, partial=True)
    except Exception:  # the results folder outlived its dataset: no table, the report stands
        return None
    grouped = any(
        domain_spec(task.domain).ranks_agents or "benchmark" in task.metadata
        for task in dataset.tasks.values()
    )
    facts = trajectory_facts(dataset)
    if not grouped or not facts:
        return None
    known = {fact.trajectory_id for fact in facts}
    verdicts: dict[str, dict[str, list[Verdict]]] = defaultdict(lambda: defaultdict(list))
    scripted: set[str] = set()
    for prediction in predictions:
        if prediction.trajectory_id not in known:
            continue
        variant = prediction.config.label
        verdicts[variant][prediction.trajectory_id].append(prediction.verdict)
        if prediction.scripted:
            scripted.add(variant)
    scores = score_variants(facts, verdicts, scripted=frozenset(scripted), replicates=replicates)
    write_json_atomic(folder / JSON_FILE, scores.model_dump(mode="json"))
    path = folder / MARKDOWN_FILE
    write_text_atomic(path, mobile_markdown(scores))
    return path
