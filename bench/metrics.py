"""Classification metrics of a judge's verdicts against the labels, from confusion counts.

This module owns turning (label, verdict) pairs into a ``Confusion`` and the counts into metric
values: one scalar version returning ``None`` where a metric is undefined, and vectorised versions
over count arrays (returning NaN there) for the bootstrap in ``bench.statistics``.

Conventions (PASS is the positive class):

- A verdict is ``True`` (PASS), ``False`` (FAIL) or ``None`` (INVALID). INVALID is scored as a
  wrong answer: on a PASS trajectory it is a false negative (also counted in
  ``invalid_on_pass``), on a FAIL trajectory a false positive (also in ``invalid_on_fail``).
- accuracy = (tp + tn) / total; undefined when there are no predictions.
- precision = tp / (tp + fp); undefined when nothing was judged PASS.
- recall = tp / (tp + fn); undefined without PASS trajectories.
- f1 = 2tp / (2tp + fp + fn), which is the harmonic mean of precision and recall, is 0 when tp is
  0 but some prediction was wrong, and agrees with scikit-learn's ``f1_score(zero_division=0)``
  whenever the denominator is positive; undefined when 2tp + fp + fn = 0.
- specificity = tn / (tn + fp); balanced accuracy is the mean of recall and specificity when both
  are defined, whichever one is defined when only one is (a single class present), undefined when
  neither is.
- fpr = fp / (fp + tn), undefined without FAIL trajectories; fnr = fn / (fn + tp), undefined
  without PASS trajectories.

Count arrays have their last axis in ``COUNT_COLUMNS`` order (tp, fp, tn, fn); a 2-D array holds
one row of counts per bootstrap replicate or per task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from bench.scores import Confusion

__all__ = [
    "COUNT_COLUMNS",
    "METRICS_FROM_COUNTS",
    "CountArray",
    "accuracy_from_counts",
    "balanced_accuracy_from_counts",
    "confusion_counts",
    "counts_row",
    "f1_from_counts",
    "metric_values",
]

CountArray: TypeAlias = NDArray[Any]
"""Counts with a last axis of length 4 in ``COUNT_COLUMNS`` order (integer or float dtype)."""

COUNT_COLUMNS: tuple[str, str, str, str] = ("tp", "fp", "tn", "fn")
"""Column order of count arrays."""


def confusion_counts(labels: Sequence[bool], verdicts: Sequence[bool | None]) -> Confusion:
    """Tally labels (True = PASS) against verdicts (True = PASS, False = FAIL, None = INVALID).

    INVALID verdicts land in ``fn`` on PASS trajectories and in ``fp`` on FAIL trajectories, and
    are also tallied in ``invalid_on_pass`` / ``invalid_on_fail``. Raises ``ValueError`` when the
    two sequences have different lengths.
    """
    if len(labels) != len(verdicts):
        raise ValueError(
            f"labels and verdicts must have the same length, got {len(labels)} labels "
            f"and {len(verdicts)} verdicts"
        )
    tp = fp = tn = fn = invalid_on_pass = invalid_on_fail = 0
    for label, verdict in zip(labels, verdicts, strict=True):
        if verdict is None:
            if label:
                fn += 1
                invalid_on_pass += 1
            else:
                fp += 1
                invalid_on_fail += 1
        elif label:
            if verdict:
                tp += 1
            else:
                fn += 1
        elif verdict:
            fp += 1
        else:
            tn += 1
    return Confusion(
        tp=tp,
        fp=fp,
        tn=tn,
        fn=fn,
        invalid_on_pass=invalid_on_pass,
        invalid_on_fail=invalid_on_fail,
    )


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator > 0 else None


def metric_values(confusion: Confusion) -> dict[str, float | None]:
    """Every headline metric of one confusion matrix, ``None`` where it is undefined.

    Keys: ``accuracy``, ``precision``, ``recall``, ``f1``, ``balanced_accuracy``, ``fpr``,
    ``fnr``; the module docstring gives each definition.
    """
    tp, fp, tn, fn = confusion.tp, confusion.fp, confusion.tn, confusion.fn
    recall = _ratio(tp, tp + fn)
    specificity = _ratio(tn, tn + fp)
    defined = [value for value in (recall, specificity) if value is not None]
    balanced_accuracy = sum(defined) / len(defined) if defined else None
    return {
        "accuracy": _ratio(tp + tn, tp + fp + tn + fn),
        "precision": _ratio(tp, tp + fp),
        "recall": recall,
        "f1": _ratio(2 * tp, 2 * tp + fp + fn),
        "balanced_accuracy": balanced_accuracy,
        "fpr": _ratio(fp, fp + tn),
        "fnr": _ratio(fn, fn + tp),
    }


def counts_row(confusion: Confusion) -> NDArray[np.int64]:
    """The four counts of a confusion matrix as a shape-(4,) array in ``COUNT_COLUMNS`` order."""
    return np.array([confusion.tp, confusion.fp, confusion.tn, confusion.fn], dtype=np.int64)


def _columns(
    counts: CountArray,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    array = np.asarray(counts, dtype=np.float64)
    if array.ndim == 0 or array.shape[-1] != len(COUNT_COLUMNS):
        raise ValueError(f"counts must have a last axis of length 4, got shape {array.shape}")
    return array[..., 0], array[..., 1], array[..., 2], array[..., 3]


def _divide(
    numerator: NDArray[np.float64], denominator: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Element-wise numerator / denominator, NaN where the denominator is not positive."""
    out = np.full(np.broadcast_shapes(numerator.shape, denominator.shape), np.nan)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def f1_from_counts(counts: CountArray) -> NDArray[np.float64]:
    """F1 = 2tp / (2tp + fp + fn) over the last axis of ``counts``; NaN where undefined."""
    tp, fp, _tn, fn = _columns(counts)
    return _divide(2 * tp, 2 * tp + fp + fn)


def balanced_accuracy_from_counts(counts: CountArray) -> NDArray[np.float64]:
    """Mean of recall and specificity over the last axis of ``counts``.

    Where only one of the two is defined that one is returned; NaN where neither is.
    """
    tp, fp, tn, fn = _columns(counts)
    recall = _divide(tp, tp + fn)
    specificity = _divide(tn, tn + fp)
    recall_defined = ~np.isnan(recall)
    specificity_defined = ~np.isnan(specificity)
    total = np.where(recall_defined, recall, 0.0) + np.where(specificity_defined, specificity, 0.0)
    defined = recall_defined.astype(np.float64) + specificity_defined.astype(np.float64)
    return _divide(total, defined)


def accuracy_from_counts(counts: CountArray) -> NDArray[np.float64]:
    """Accuracy = (tp + tn) / total over the last axis of ``counts``; NaN where there is none."""
    tp, fp, tn, fn = _columns(counts)
    return _divide(tp + tn, tp + fp + tn + fn)


METRICS_FROM_COUNTS: dict[str, Callable[[CountArray], NDArray[np.float64]]] = {
    "f1": f1_from_counts,
    "balanced_accuracy": balanced_accuracy_from_counts,
    "accuracy": accuracy_from_counts,
}
"""The vectorised metrics by name, as statistics for ``bench.statistics`` bootstraps."""
