"""Uncertainty of bench scores: how much a number would move with other runs or other tasks.

This module owns the statistics behind every interval and test in a report:

- ``mean_interval``: Avg@k over repeated runs, with a Student-t interval of the mean.
- ``cluster_bootstrap``: a percentile bootstrap that resamples tasks (clusters), each carrying all
  of its predictions' confusion counts, because predictions on one task are not independent.
- ``paired_cluster_bootstrap``: the same for the difference of two configurations judged on the
  same tasks, with a bootstrap p-value.
- ``mcnemar_exact``: the exact McNemar test on paired right/wrong outcomes.
- ``ranking_fidelity``: whether the judge orders agents as the labels do.

Everything here is a pure function of its inputs; bootstraps are deterministic given ``seed``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from bench.metrics import COUNT_COLUMNS, CountArray
from bench.scores import Interval, RankingFidelity, RunSpread

__all__ = [
    "cluster_bootstrap",
    "draw_cluster_indices",
    "mcnemar_exact",
    "mean_interval",
    "paired_cluster_bootstrap",
    "ranking_fidelity",
]

Statistic = Callable[[CountArray], NDArray[np.float64]]
"""Maps summed counts of shape (replicates, 4) to one value per replicate (NaN if undefined)."""


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> RunSpread:
    """Avg@k of a metric measured once per run: mean, sample std and a Student-t interval.

    NaN values (runs where the metric was undefined) are dropped first, and ``runs`` counts only
    the values kept. The interval is mean ± t((1 + confidence) / 2, k - 1) · std / √k with the
    sample standard deviation (ddof = 1). With a single value the spread is unknown, so ``std``
    and ``interval`` are None. Raises ``ValueError`` when no value is left.
    """
    _check_confidence(confidence)
    array = np.asarray(values, dtype=np.float64).reshape(-1)
    kept = array[~np.isnan(array)]
    runs = int(kept.size)
    if runs == 0:
        raise ValueError("mean_interval needs at least one value that is not NaN")
    mean = float(np.mean(kept))
    if runs == 1:
        return RunSpread(runs=1, mean=mean, std=None, interval=None)
    std = float(np.std(kept, ddof=1))
    quantile = float(stats.t.ppf((1.0 + confidence) / 2.0, runs - 1))
    half_width = quantile * std / math.sqrt(runs)
    return RunSpread(
        runs=runs,
        mean=mean,
        std=std,
        interval=Interval(low=mean - half_width, high=mean + half_width),
    )


def _as_count_matrix(counts: CountArray, name: str) -> NDArray[np.float64]:
    """The counts as float64, which holds integer counts (below 2**53) and their sums exactly."""
    array = np.asarray(counts, dtype=np.float64)
    if array.ndim != 2 or array.shape[1] != len(COUNT_COLUMNS):
        raise ValueError(f"{name} must have shape (n_clusters, 4), got {array.shape}")
    return array


def draw_cluster_indices(n_clusters: int, replicates: int, seed: int) -> NDArray[np.int64]:
    """The resampled clusters: a (replicates, n_clusters) matrix of cluster indices.

    Drawn as ``numpy.random.default_rng(seed).integers(0, n_clusters, size=(replicates,
    n_clusters))``; row r lists the clusters (with repetition) that make up replicate r.
    """
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_clusters, size=(replicates, n_clusters), dtype=np.int64)


def _replicate_sums(
    matrices: Sequence[NDArray[np.float64]], replicates: int, seed: int
) -> list[NDArray[np.float64]]:
    """Per replicate, the counts summed over its resampled clusters, for each count matrix.

    Every matrix is resampled with the same drawn clusters. The sum is a product with a
    (replicates, n_clusters) matrix of how often each cluster was drawn in each replicate.
    """
    n_clusters = matrices[0].shape[0]
    indices = draw_cluster_indices(n_clusters, replicates, seed)
    offsets = (np.arange(replicates, dtype=np.int64) * n_clusters)[:, np.newaxis]
    multiplicity = np.bincount(
        (indices + offsets).ravel(), minlength=replicates * n_clusters
    ).reshape(replicates, n_clusters)
    weights = multiplicity.astype(np.float64)
    return [weights @ matrix for matrix in matrices]


def _apply(statistic: Statistic, sums: CountArray, replicates: int) -> NDArray[np.float64]:
    values = np.asarray(statistic(sums), dtype=np.float64)
    if values.shape != (replicates,):
        raise ValueError(
            f"statistic must map ({replicates}, 4) counts to shape ({replicates},), "
            f"got {values.shape}"
        )
    return values


def _percentile_interval(values: NDArray[np.float64], confidence: float) -> Interval:
    tail = (1.0 - confidence) / 2.0
    low, high = np.percentile(values, [100.0 * tail, 100.0 * (1.0 - tail)])
    return Interval(low=float(low), high=float(high))


def cluster_bootstrap(
    counts: CountArray,
    statistic: Statistic,
    *,
    replicates: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Interval | None:
    """Percentile bootstrap interval of a metric, resampling whole clusters (tasks).

    ``counts`` holds one row of (tp, fp, tn, fn) per cluster, summed over that cluster's
    predictions. Each replicate draws ``n_clusters`` clusters with replacement (see
    ``draw_cluster_indices``), adds up their rows and applies ``statistic`` to the pooled counts.
    Replicates where the statistic is NaN (undefined) are left out of the percentiles. Returns
    None when there is no cluster or no replicate has a defined value.
    """
    _check_confidence(confidence)
    if replicates < 1:
        raise ValueError(f"replicates must be positive, got {replicates}")
    matrix = _as_count_matrix(counts, "counts")
    if matrix.shape[0] == 0:
        return None
    (sums,) = _replicate_sums([matrix], replicates, seed)
    values = _apply(statistic, sums, replicates)
    defined = values[~np.isnan(values)]
    if defined.size == 0:
        return None
    return _percentile_interval(defined, confidence)


def paired_cluster_bootstrap(
    counts_a: CountArray,
    counts_b: CountArray,
    statistic: Statistic,
    *,
    replicates: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[Interval | None, float | None]:
    """Paired cluster bootstrap of statistic(a) - statistic(b) on the same clusters.

    ``counts_a`` and ``counts_b`` hold the two configurations' counts for the same clusters in the
    same row order. Each replicate resamples the same clusters for both, so the difference keeps
    the pairing. Returns the percentile interval of the difference and a two-sided p-value of the
    percentile-bootstrap test of "no difference": with the replicates where both values are
    defined, p = min(1, 2 · min(share with difference ≤ 0, share with difference ≥ 0)). Both are
    None when there is no cluster or no replicate with a defined difference. Raises
    ``ValueError`` when the two count arrays have different shapes.
    """
    _check_confidence(confidence)
    if replicates < 1:
        raise ValueError(f"replicates must be positive, got {replicates}")
    shape_a, shape_b = np.shape(counts_a), np.shape(counts_b)
    if shape_a != shape_b:
        raise ValueError(
            f"counts_a and counts_b must cover the same clusters, got shapes {shape_a} and "
            f"{shape_b}"
        )
    matrix_a = _as_count_matrix(counts_a, "counts_a")
    matrix_b = _as_count_matrix(counts_b, "counts_b")
    if matrix_a.shape[0] == 0:
        return None, None
    sums_a, sums_b = _replicate_sums([matrix_a, matrix_b], replicates, seed)
    differences = _apply(statistic, sums_a, replicates) - _apply(statistic, sums_b, replicates)
    defined = differences[~np.isnan(differences)]
    if defined.size == 0:
        return None, None
    at_most_zero = float(np.mean(defined <= 0.0))
    at_least_zero = float(np.mean(defined >= 0.0))
    p_value = min(1.0, 2.0 * min(at_most_zero, at_least_zero))
    return _percentile_interval(defined, confidence), p_value


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Exact two-sided McNemar test on the discordant pairs.

    ``a_only`` pairs only A got right, ``b_only`` pairs only B got right. Under "no difference"
    each discordant pair is equally likely to go either way, so this is a two-sided binomial test
    of ``a_only`` successes in ``a_only + b_only`` trials with p = 0.5. Returns 1.0 when there
    are no discordant pairs.
    """
    if a_only < 0 or b_only < 0:
        raise ValueError(f"discordant counts must be non-negative, got {a_only} and {b_only}")
    trials = a_only + b_only
    if trials == 0:
        return 1.0
    result = stats.binomtest(a_only, trials, 0.5, alternative="two-sided")
    return float(min(1.0, result.pvalue))


def ranking_fidelity(
    agents: Sequence[str], label_rates: Sequence[float], judged_rates: Sequence[float]
) -> RankingFidelity | None:
    """How faithfully the judge's per-agent success rates reproduce the labels' ranking.

    Spearman's rank correlation (and its two-sided p-value) between the label rates and the
    judged rates, plus the mean absolute error of the judged rates. Returns None with fewer than
    two agents. ``spearman_rho`` and ``spearman_p`` are None when either sequence is constant,
    where the correlation is undefined; ``spearman_p`` is also None when scipy cannot give one
    (two agents). Raises ``ValueError`` when the three sequences differ in length.
    """
    if not len(agents) == len(label_rates) == len(judged_rates):
        raise ValueError(
            f"agents, label_rates and judged_rates must have the same length, got "
            f"{len(agents)}, {len(label_rates)} and {len(judged_rates)}"
        )
    if len(agents) < 2:
        return None
    labels = np.asarray(label_rates, dtype=np.float64)
    judged = np.asarray(judged_rates, dtype=np.float64)
    rho: float | None = None
    p_value: float | None = None
    if np.ptp(labels) > 0 and np.ptp(judged) > 0:
        result = stats.spearmanr(labels, judged)
        rho_value, p_raw = float(result.statistic), float(result.pvalue)
        rho = None if math.isnan(rho_value) else rho_value
        p_value = None if rho is None or math.isnan(p_raw) else p_raw
    return RankingFidelity(
        agents=list(agents),
        label_rates=[float(rate) for rate in labels],
        judged_rates=[float(rate) for rate in judged],
        spearman_rho=rho,
        spearman_p=p_value,
        mae=float(np.mean(np.abs(judged - labels))),
    )
