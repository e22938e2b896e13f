"""Run spreads, task-cluster bootstraps, paired tests and ranking fidelity."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.stats import spearmanr

from bench.metrics import accuracy_from_counts, f1_from_counts
from bench.scores import Interval
from bench.statistics import (
    cluster_bootstrap,
    mcnemar_exact,
    mean_interval,
    paired_cluster_bootstrap,
    ranking_fidelity,
)

# --- mean_interval -------------------------------------------------------------------------------


def test_t_interval_of_one_to_five_matches_the_table_value() -> None:
    spread = mean_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    # mean 3; squared deviations 4 + 1 + 0 + 1 + 4 = 10, over n - 1 = 4 -> variance 2.5.
    t_975_4 = 2.7764451051977987  # t(0.975, df=4) from a published table
    half_width = t_975_4 * math.sqrt(2.5) / math.sqrt(5)
    assert spread.runs == 5
    assert spread.mean == pytest.approx(3.0, abs=1e-12)
    assert spread.std == pytest.approx(math.sqrt(2.5), abs=1e-12)
    assert spread.interval is not None
    assert spread.interval.low == pytest.approx(3.0 - half_width, abs=1e-9)
    assert spread.interval.high == pytest.approx(3.0 + half_width, abs=1e-9)


def test_nan_runs_are_dropped_before_the_interval() -> None:
    spread = mean_interval([2.0, math.nan, 4.0], confidence=0.9)
    # Kept: [2, 4] -> mean 3, std sqrt(((-1)^2 + 1^2) / 1) = sqrt(2), k = 2, df = 1.
    # With one degree of freedom t is Cauchy: t(q, 1) = tan(pi * (q - 1/2)), here q = 0.95.
    t_95_1 = math.tan(math.pi * 0.45)
    assert spread.runs == 2
    assert spread.mean == pytest.approx(3.0)
    assert spread.std == pytest.approx(math.sqrt(2))
    assert spread.interval is not None
    assert spread.interval.low == pytest.approx(3.0 - t_95_1 * math.sqrt(2) / math.sqrt(2))
    assert spread.interval.high == pytest.approx(3.0 + t_95_1, abs=1e-9)


def test_a_single_run_has_no_spread() -> None:
    spread = mean_interval([0.75])
    assert (spread.runs, spread.mean, spread.std, spread.interval) == (1, 0.75, None, None)
    # One value left after dropping NaN is a single run too.
    assert mean_interval([math.nan, 0.5]).model_dump() == {
        "runs": 1,
        "mean": 0.5,
        "std": None,
        "interval": None,
    }


def test_identical_runs_have_a_zero_width_interval() -> None:
    spread = mean_interval([0.6, 0.6, 0.6])
    assert spread.std == 0.0
    assert spread.interval == Interval(low=0.6, high=0.6)


@pytest.mark.parametrize("values", [[], [math.nan], [math.nan, math.nan]])
def test_no_usable_value_is_an_error(values: list[float]) -> None:
    with pytest.raises(ValueError, match="at least one value"):
        mean_interval(values)


# --- cluster_bootstrap ---------------------------------------------------------------------------


def _random_counts(seed: int, clusters: int) -> NDArray[np.int64]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 6, size=(clusters, 4), dtype=np.int64)


def _slow_bootstrap(
    counts: NDArray[np.int64], replicates: int, seed: int, confidence: float
) -> Interval | None:
    """The bootstrap written as a plain loop over the same drawn index matrix."""
    n_clusters = len(counts)
    indices = np.random.default_rng(seed).integers(0, n_clusters, size=(replicates, n_clusters))
    values: list[float] = []
    for row in indices:
        pooled = [0, 0, 0, 0]
        for cluster in row:
            for column in range(4):
                pooled[column] += int(counts[cluster, column])
        tp, fp, _tn, fn = pooled
        if 2 * tp + fp + fn > 0:
            values.append(2 * tp / (2 * tp + fp + fn))
    if not values:
        return None
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(low=float(low), high=float(high))


@pytest.mark.parametrize(("seed", "clusters"), [(0, 30), (1, 7), (2, 1)])
def test_the_vectorised_bootstrap_equals_a_plain_loop(seed: int, clusters: int) -> None:
    counts = _random_counts(seed, clusters)
    fast = cluster_bootstrap(counts, f1_from_counts, replicates=500, seed=seed)
    assert fast is not None
    assert fast == _slow_bootstrap(counts, replicates=500, seed=seed, confidence=0.95)


def test_replicates_with_an_undefined_metric_are_left_out() -> None:
    # Two clusters where the judge rejected FAIL trajectories only (F1 undefined alone), one with
    # a true positive: about (2/3)^3 of the replicates draw no tp and have no F1.
    counts = np.array([[0, 0, 3, 0], [0, 0, 2, 0], [2, 1, 1, 1]], dtype=np.int64)
    fast = cluster_bootstrap(counts, f1_from_counts, replicates=300, seed=5, confidence=0.8)
    assert fast == _slow_bootstrap(counts, replicates=300, seed=5, confidence=0.8)


def test_identical_clusters_give_a_degenerate_interval_at_the_point_value() -> None:
    counts = np.tile(np.array([3, 1, 4, 2], dtype=np.int64), (25, 1))
    point = float(f1_from_counts(counts.sum(axis=0)))
    interval = cluster_bootstrap(counts, f1_from_counts)
    assert interval == Interval(low=point, high=point)
    # 2tp / (2tp + fp + fn) = 6 / (6 + 1 + 2) for one cluster, and for 25 of them.
    assert point == pytest.approx(6 / 9)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_interval_contains_the_pooled_point_estimate(seed: int) -> None:
    counts = _random_counts(seed, 30)
    for statistic in (f1_from_counts, accuracy_from_counts):
        point = float(statistic(counts.sum(axis=0)))
        interval = cluster_bootstrap(counts, statistic, seed=seed)
        assert interval is not None
        assert interval.low < point < interval.high


def test_the_seed_fixes_the_interval() -> None:
    counts = _random_counts(11, 30)
    first = cluster_bootstrap(counts, f1_from_counts, seed=3)
    assert first == cluster_bootstrap(counts, f1_from_counts, seed=3)
    assert first != cluster_bootstrap(counts, f1_from_counts, seed=4)


def test_nothing_to_resample_gives_no_interval() -> None:
    assert cluster_bootstrap(np.zeros((0, 4), dtype=np.int64), f1_from_counts) is None
    only_rejected_fails = np.array([[0, 0, 3, 0], [0, 0, 1, 0]], dtype=np.int64)
    assert cluster_bootstrap(only_rejected_fails, f1_from_counts) is None


def test_counts_of_the_wrong_shape_are_refused() -> None:
    with pytest.raises(ValueError, match=r"\(n_clusters, 4\)"):
        cluster_bootstrap(np.zeros((5, 3), dtype=np.int64), f1_from_counts)


def test_two_thousand_replicates_over_thirty_clusters_take_milliseconds() -> None:
    counts = _random_counts(0, 30)
    elapsed = []
    for seed in range(3):
        start = time.perf_counter()
        cluster_bootstrap(counts, f1_from_counts, replicates=2000, seed=seed)
        elapsed.append(time.perf_counter() - start)
    assert min(elapsed) < 0.05


def test_the_cluster_bootstrap_covers_the_true_accuracy_about_95_percent_of_the_time() -> None:
    # Model: 40 tasks, 10 predictions each; task c's predictions are right with probability p_c,
    # p_c ~ Beta(1.4, 0.6) (mean 0.7, widely spread), so predictions within a task are strongly
    # correlated: resampling single predictions instead of tasks covers only about 70% here.
    # With equal task sizes the population accuracy is E[p_c] = 1.4 / (1.4 + 0.6) = 0.7.
    rng = np.random.default_rng(2024)
    true_accuracy = 0.7
    datasets, tasks, per_task = 200, 40, 10
    covered = 0
    for dataset in range(datasets):
        rates = rng.beta(1.4, 0.6, size=tasks)
        right = rng.binomial(per_task, rates)
        # All right answers as tn, wrong ones as fp: only the accuracy matters here.
        counts = np.zeros((tasks, 4), dtype=np.int64)
        counts[:, 2] = right
        counts[:, 1] = per_task - right
        interval = cluster_bootstrap(counts, accuracy_from_counts, seed=dataset)
        assert interval is not None
        covered += interval.low <= true_accuracy <= interval.high
    assert 0.88 * datasets <= covered <= 0.99 * datasets


# --- paired_cluster_bootstrap --------------------------------------------------------------------


def test_a_configuration_against_itself_differs_by_exactly_zero() -> None:
    counts = _random_counts(7, 20)
    interval, p_value = paired_cluster_bootstrap(counts, counts.copy(), f1_from_counts)
    assert interval == Interval(low=0.0, high=0.0)
    assert p_value == 1.0


def test_a_configuration_worse_on_every_task_is_detected() -> None:
    rng = np.random.default_rng(3)
    tasks = 25
    passes = rng.integers(2, 6, size=tasks)
    fails = rng.integers(2, 6, size=tasks)
    # a: perfect. b: misses one PASS and lets one FAIL through on every task.
    counts_a = np.column_stack([passes, np.zeros(tasks), fails, np.zeros(tasks)]).astype(np.int64)
    counts_b = np.column_stack([passes - 1, np.ones(tasks), fails - 1, np.ones(tasks)]).astype(
        np.int64
    )
    interval, p_value = paired_cluster_bootstrap(counts_a, counts_b, f1_from_counts)
    assert interval is not None
    assert p_value is not None
    assert interval.low > 0.0
    assert p_value < 0.01
    # And the other way round the difference is negative.
    reversed_interval, _ = paired_cluster_bootstrap(counts_b, counts_a, f1_from_counts)
    assert reversed_interval is not None
    assert reversed_interval.high < 0.0


def test_the_paired_bootstrap_resamples_the_same_tasks_for_both() -> None:
    counts_a = _random_counts(20, 12)
    counts_b = _random_counts(21, 12)
    replicates, seed = 400, 9
    indices = np.random.default_rng(seed).integers(0, 12, size=(replicates, 12))
    differences = []
    for row in indices:
        pooled_a = counts_a[row].sum(axis=0)
        pooled_b = counts_b[row].sum(axis=0)
        differences.append(float(f1_from_counts(pooled_a) - f1_from_counts(pooled_b)))
    at_most_zero = sum(d <= 0 for d in differences) / replicates
    at_least_zero = sum(d >= 0 for d in differences) / replicates
    expected_low, expected_high = np.percentile(differences, [2.5, 97.5])

    interval, p_value = paired_cluster_bootstrap(
        counts_a, counts_b, f1_from_counts, replicates=replicates, seed=seed
    )
    assert interval == Interval(low=float(expected_low), high=float(expected_high))
    assert p_value == min(1.0, 2 * min(at_most_zero, at_least_zero))


def test_paired_counts_of_different_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="same clusters"):
        paired_cluster_bootstrap(
            np.zeros((5, 4), dtype=np.int64), np.zeros((4, 4), dtype=np.int64), f1_from_counts
        )


def test_paired_bootstrap_without_tasks_has_no_result() -> None:
    empty = np.zeros((0, 4), dtype=np.int64)
    assert paired_cluster_bootstrap(empty, empty, f1_from_counts) == (None, None)


# --- mcnemar_exact -------------------------------------------------------------------------------


def _two_sided_binomial_half(successes: int, trials: int) -> float:
    """2 x the smaller tail of Binomial(trials, 1/2), capped at 1, from binomial coefficients."""
    smaller = min(successes, trials - successes)
    tail = sum(math.comb(trials, i) for i in range(smaller + 1)) / (1 << trials)
    return min(1.0, 2 * tail)


def test_mcnemar_one_against_nine_is_the_hand_sum() -> None:
    # n = 10 discordant pairs: p = 2 * (C(10,0) + C(10,1)) / 2^10 = 2 * 11 / 1024.
    assert mcnemar_exact(1, 9) == pytest.approx(22 / 1024, rel=1e-12)


@pytest.mark.parametrize(
    ("a_only", "b_only"), [(0, 5), (2, 5), (3, 3), (4, 11), (12, 30), (0, 1), (17, 16)]
)
def test_mcnemar_matches_binomial_sums_and_is_symmetric(a_only: int, b_only: int) -> None:
    expected = _two_sided_binomial_half(a_only, a_only + b_only)
    assert mcnemar_exact(a_only, b_only) == pytest.approx(expected, rel=1e-9)
    assert mcnemar_exact(b_only, a_only) == pytest.approx(expected, rel=1e-9)


def test_mcnemar_without_discordant_pairs_is_one() -> None:
    assert mcnemar_exact(0, 0) == 1.0


def test_mcnemar_refuses_negative_counts() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        mcnemar_exact(-1, 3)


# --- ranking_fidelity ----------------------------------------------------------------------------


def test_a_hand_computed_ranking() -> None:
    agents = ["a", "b", "c", "d", "e"]
    labels = [0.1, 0.4, 0.3, 0.8, 0.6]  # ranks 1 3 2 5 4
    judged = [0.2, 0.1, 0.5, 0.7, 0.9]  # ranks 2 1 3 4 5
    # d = -1, 2, -1, 1, -1 -> sum d^2 = 8; rho = 1 - 6 * 8 / (5 * (25 - 1)) = 0.6.
    # |errors| = 0.1, 0.3, 0.2, 0.1, 0.3 -> mae = 1.0 / 5 = 0.2.
    fidelity = ranking_fidelity(agents, labels, judged)
    assert fidelity is not None
    assert fidelity.agents == agents
    assert fidelity.label_rates == labels
    assert fidelity.judged_rates == judged
    assert fidelity.spearman_rho == pytest.approx(0.6)
    assert fidelity.mae == pytest.approx(0.2)
    reference = spearmanr(labels, judged)
    assert fidelity.spearman_p == pytest.approx(float(reference.pvalue))


def test_monotone_and_reversed_rankings() -> None:
    agents = ["a", "b", "c", "d"]
    labels = [0.2, 0.5, 0.6, 0.9]
    same_order = ranking_fidelity(agents, labels, [0.1, 0.3, 0.35, 1.0])
    assert same_order is not None
    assert same_order.spearman_rho == pytest.approx(1.0)
    reversed_order = ranking_fidelity(agents, labels, [0.9, 0.8, 0.4, 0.0])
    assert reversed_order is not None
    assert reversed_order.spearman_rho == pytest.approx(-1.0)
    # |0.9-0.2| + |0.8-0.5| + |0.4-0.6| + |0.0-0.9| = 0.7 + 0.3 + 0.2 + 0.9 = 2.1 -> / 4
    assert reversed_order.mae == pytest.approx(2.1 / 4)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rho_and_p_agree_with_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    labels = rng.random(8)
    judged = np.clip(labels + rng.normal(0, 0.2, size=8), 0, 1)
    fidelity = ranking_fidelity([f"agent{i}" for i in range(8)], list(labels), list(judged))
    reference = spearmanr(labels, judged)
    assert fidelity is not None
    assert fidelity.spearman_rho == pytest.approx(float(reference.statistic))
    assert fidelity.spearman_p == pytest.approx(float(reference.pvalue))
    assert fidelity.mae == pytest.approx(float(np.mean(np.abs(judged - labels))))


def test_a_constant_side_leaves_rho_undefined() -> None:
    fidelity = ranking_fidelity(["a", "b", "c"], [0.2, 0.5, 0.8], [0.5, 0.5, 0.5])
    assert fidelity is not None
    assert fidelity.spearman_rho is None
    assert fidelity.spearman_p is None
    # |0.5-0.2| + 0 + |0.5-0.8| = 0.6 -> / 3
    assert fidelity.mae == pytest.approx(0.2)
    constant_labels = ranking_fidelity(["a", "b"], [0.4, 0.4], [0.1, 0.9])
    assert constant_labels is not None
    assert constant_labels.spearman_rho is None


def test_two_agents_have_a_rho_but_no_p_value() -> None:
    fidelity = ranking_fidelity(["a", "b"], [0.3, 0.7], [0.2, 0.6])
    assert fidelity is not None
    assert fidelity.spearman_rho == pytest.approx(1.0)
    assert fidelity.spearman_p is None


def test_fewer_than_two_agents_give_no_ranking() -> None:
    assert ranking_fidelity(["a"], [0.5], [0.4]) is None
    assert ranking_fidelity([], [], []) is None


def test_mismatched_ranking_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="same length"):
        ranking_fidelity(["a", "b"], [0.1, 0.2], [0.3])
