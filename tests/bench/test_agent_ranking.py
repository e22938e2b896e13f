"""MobileJudgeBench-style scoring against hand-computed values, scipy and a slow reference loop."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bench.agent_ranking import (
    TrajectoryFacts,
    Verdict,
    _arrays,
    _replicate_weights,
    mobile_markdown,
    score_variants,
    spearman,
)

# Two source benchmarks. Agents (benchmark/agent) and their labels:
#   aw/a: t1 PASS, t2 PASS, t3 FAIL        -> label rate 2/3
#   aw/b: t1 FAIL, t2 FAIL, t3 FAIL        -> 0
#   spa/c: s1 PASS, s2 PASS                -> 1
#   spa/d: s1 PASS, s2 FAIL                -> 1/2
LABELS = {
    ("aw", "a", "t1"): True,
    ("aw", "a", "t2"): True,
    ("aw", "a", "t3"): False,
    ("aw", "b", "t1"): False,
    ("aw", "b", "t2"): False,
    ("aw", "b", "t3"): False,
    ("spa", "c", "s1"): True,
    ("spa", "c", "s2"): True,
    ("spa", "d", "s1"): True,
    ("spa", "d", "s2"): False,
}
FACTS = [
    TrajectoryFacts(f"{bench}-{agent}-{task}", f"{bench}-{task}", bench, f"{bench}/{agent}", label)
    for (bench, agent, task), label in LABELS.items()
]


def verdicts_from(
    passed: set[str], invalid: frozenset[str] = frozenset()
) -> dict[str, list[Verdict]]:
    return {
        fact.trajectory_id: [
            "INVALID"
            if fact.trajectory_id in invalid
            else ("PASS" if fact.trajectory_id in passed else "FAIL")
        ]
        for fact in FACTS
    }


PERFECT = verdicts_from({f.trajectory_id for f in FACTS if f.label})
# Lenient: also passes aw-a-t3 and aw-b-t1 (two false positives); INVALID on spa-c-s2.
LENIENT = verdicts_from(
    {f.trajectory_id for f in FACTS if f.label} | {"aw-a-t3", "aw-b-t1"},
    invalid=frozenset({"spa-c-s2"}),
)


def test_hand_computed_quality_ranking_and_rate_error() -> None:
    scores = score_variants(FACTS, {"lenient": LENIENT, "perfect": PERFECT}, replicates=50)
    lenient = next(row for row in scores.variants if row.variant == "lenient")
    # tp: a-t1, a-t2, c-s1, d-s1 = 4; fn: c-s2 (INVALID) = 1; fp: a-t3, b-t1 = 2; tn: 3.
    assert lenient.values["accuracy"] == pytest.approx(7 / 10)
    assert lenient.values["precision"] == pytest.approx(4 / 6)
    assert lenient.values["recall"] == pytest.approx(4 / 5)
    assert lenient.values["f1"] == pytest.approx(8 / 11)
    assert lenient.values["balanced_accuracy"] == pytest.approx((4 / 5 + 3 / 5) / 2)
    assert lenient.invalid == 1
    # Judged rates: a 1, b 1/3, c 1/2, d 1/2; labels: a 2/3, b 0, c 1, d 1/2.
    label_rates = [2 / 3, 0, 1, 1 / 2]
    judged = [1, 1 / 3, 1 / 2, 1 / 2]
    expected_rho = stats.spearmanr(label_rates, judged).statistic
    assert lenient.values["ranking_rho"] == pytest.approx(expected_rho)
    assert lenient.values["rate_mae"] == pytest.approx((1 / 3 + 1 / 3 + 1 / 2 + 0) / 4)
    perfect = next(row for row in scores.variants if row.variant == "perfect")
    assert perfect.values["ranking_rho"] == pytest.approx(1.0)
    assert perfect.values["rate_mae"] == pytest.approx(0.0)
    rates = {agent.agent: agent for agent in scores.agents}
    assert rates["aw/a"].label_rate == pytest.approx(2 / 3)
    assert rates["aw/b"].judged_rates["lenient"] == pytest.approx(1 / 3)
    by_benchmark = {row.benchmark: row for row in scores.benchmarks}
    assert by_benchmark["spa"].accuracy["lenient"] == pytest.approx(3 / 4)
    assert by_benchmark["aw"].tasks == 3


def test_spearman_matches_scipy_with_ties_and_is_undefined_when_constant() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.integers(0, 4, size=9).astype(float)
        y = rng.integers(0, 4, size=9).astype(float)
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            continue
        assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic)
    assert np.isnan(spearman(np.array([1.0, 1.0]), np.array([0.0, 1.0])))


def test_bootstrap_resamples_tasks_within_each_benchmark() -> None:
    data = _arrays(
        FACTS,
        {"perfect": PERFECT},
        ["perfect"],
        sorted({f.agent for f in FACTS}),
        sorted({f.task_id for f in FACTS}),
    )
    weights = _replicate_weights(data, 500, 7, len({f.task_id for f in FACTS}))
    task_of = [fact.task_id for fact in FACTS]
    for row in weights:
        # Every trajectory of a task carries the task's multiplicity.
        by_task: dict[str, set[float]] = {}
        for task, weight in zip(task_of, row, strict=True):
            by_task.setdefault(task, set()).add(float(weight))
        assert all(len(values) == 1 for values in by_task.values())
        per_task = {task: values.pop() for task, values in by_task.items()}
        # Three aw tasks drawn, two spa tasks drawn, in every replicate.
        assert sum(w for t, w in per_task.items() if t.startswith("aw-")) == 3
        assert sum(w for t, w in per_task.items() if t.startswith("spa-")) == 2


def test_intervals_match_a_slow_reference_loop() -> None:
    replicates, seed = 300, 11
    scores = score_variants(FACTS, {"lenient": LENIENT}, replicates=replicates, seed=seed)
    (lenient,) = scores.variants
    rng = np.random.default_rng(seed)
    aw_tasks = ["aw-t1", "aw-t2", "aw-t3"]
    spa_tasks = ["spa-s1", "spa-s2"]
    aw_draws = rng.integers(0, 3, size=(replicates, 3))
    spa_draws = rng.integers(0, 2, size=(replicates, 2))
    rhos, accuracies = [], []
    for r in range(replicates):
        drawn = [aw_tasks[i] for i in aw_draws[r]] + [spa_tasks[i] for i in spa_draws[r]]
        sample = [fact for task in drawn for fact in FACTS if fact.task_id == task]
        correct = sum(
            (LENIENT[f.trajectory_id][0] == "PASS") == f.label
            and LENIENT[f.trajectory_id][0] != "INVALID"
            for f in sample
        )
        accuracies.append(correct / len(sample))
        agents = sorted({f.agent for f in sample})
        label_rates = [np.mean([f.label for f in sample if f.agent == a]) for a in agents]
        judged = [
            np.mean([LENIENT[f.trajectory_id][0] == "PASS" for f in sample if f.agent == a])
            for a in agents
        ]
        if len(agents) >= 2 and np.ptp(label_rates) > 0 and np.ptp(judged) > 0:
            rhos.append(stats.spearmanr(label_rates, judged).statistic)
    rho_interval = lenient.intervals["ranking_rho"]
    accuracy_interval = lenient.intervals["accuracy"]
    assert rho_interval is not None
    assert accuracy_interval is not None
    assert rho_interval.low == pytest.approx(np.percentile(rhos, 2.5))
    assert rho_interval.high == pytest.approx(np.percentile(rhos, 97.5))
    assert accuracy_interval.low == pytest.approx(np.percentile(accuracies, 2.5))
    assert accuracy_interval.high == pytest.approx(np.percentile(accuracies, 97.5))


def test_meta_correlation_is_spearman_across_variants() -> None:
    ids = [fact.trajectory_id for fact in FACTS]
    positives = {f.trajectory_id for f in FACTS if f.label}
    variants = {
        "perfect": PERFECT,
        "lenient": LENIENT,
        "all-pass": verdicts_from(set(ids)),
        "flip-two": verdicts_from((positives - {"spa-c-s1"}) | {"aw-b-t2"}),
        "half": verdicts_from({"aw-a-t1", "aw-b-t1", "spa-c-s1", "spa-d-s2"}),
    }
    scores = score_variants(FACTS, variants, replicates=100)
    values = {row.variant: row.values for row in scores.variants}
    by_key = {(m.quality, m.reliability): m for m in scores.meta}
    # all-pass judges every agent at 1.0: its ranking rho is undefined and it is left out there.
    assert values["all-pass"]["ranking_rho"] is None
    for quality in ("accuracy", "f1", "balanced_accuracy"):
        names = [n for n in sorted(values) if values[n]["ranking_rho"] is not None]
        expected = stats.spearmanr(
            [values[n][quality] for n in names], [values[n]["ranking_rho"] for n in names]
        ).statistic
        meta = by_key[(quality, "ranking_rho")]
        assert meta.variants == len(names) == 4
        assert meta.rho == pytest.approx(expected)
        names = sorted(values)
        expected_mae = stats.spearmanr(
            [values[n][quality] for n in names], [values[n]["rate_mae"] for n in names]
        ).statistic
        assert by_key[(quality, "rate_mae")].rho == pytest.approx(expected_mae)
    assert by_key[("accuracy", "rate_mae")].interval is not None


def test_failure_table_lists_what_most_variants_get_wrong() -> None:
    variants = {
        "v1": LENIENT,
        "v2": verdicts_from({f.trajectory_id for f in FACTS if f.label} | {"aw-a-t3"}),
        "v3": PERFECT,
    }
    scores = score_variants(FACTS, variants, replicates=20)
    rows = {row.trajectory_id: row for row in scores.failures}
    # aw-a-t3 (a FAIL) is passed by v1 and v2: 2 of 3.
    assert rows["aw-a-t3"].wrong == 2
    assert rows["aw-a-t3"].kind == "false positive"
    # aw-b-t1 is wrong by v1 only, spa-c-s2 (INVALID) by v1 only: 1 of 3 is under half.
    assert "aw-b-t1" not in rows
    assert "spa-c-s2" not in rows
    text = mobile_markdown(scores.model_copy(update={"scripted": True}))
    assert "SCRIPTED" in text
    assert "| aw-a-t3 | aw | aw/a | FAIL | 2/3 | false positive |" in text
