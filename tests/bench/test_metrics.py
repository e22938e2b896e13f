"""Confusion counts and metric values: hand-computed cases, INVALID placement, scikit-learn."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    confusion_matrix,
    f1_score,
    precision_score,
    recall_score,
)

from bench.metrics import (
    COUNT_COLUMNS,
    METRICS_FROM_COUNTS,
    accuracy_from_counts,
    balanced_accuracy_from_counts,
    confusion_counts,
    counts_row,
    f1_from_counts,
    metric_values,
)
from bench.scores import Confusion

METRIC_KEYS = {"accuracy", "precision", "recall", "f1", "balanced_accuracy", "fpr", "fnr"}


def _labelled(tp: int, fp: int, tn: int, fn: int) -> tuple[list[bool], Sequence[bool | None]]:
    """Labels and verdicts that produce exactly the given counts (no INVALID)."""
    labels = [True] * tp + [False] * fp + [False] * tn + [True] * fn
    verdicts = [True] * tp + [True] * fp + [False] * tn + [False] * fn
    return labels, verdicts


def test_a_mixed_matrix_matches_the_hand_arithmetic() -> None:
    labels, verdicts = _labelled(tp=6, fp=2, tn=9, fn=3)
    confusion = confusion_counts(labels, verdicts)
    assert confusion == Confusion(tp=6, fp=2, tn=9, fn=3)
    assert confusion.total == 20
    values = metric_values(confusion)
    assert set(values) == METRIC_KEYS
    # accuracy = (6 + 9) / 20
    assert values["accuracy"] == pytest.approx(15 / 20)
    # precision = 6 / (6 + 2); recall = 6 / (6 + 3)
    assert values["precision"] == pytest.approx(6 / 8)
    assert values["recall"] == pytest.approx(6 / 9)
    # f1 = 2*6 / (2*6 + 2 + 3) = 12 / 17 (= 2 * 0.75 * 0.6667 / (0.75 + 0.6667))
    assert values["f1"] == pytest.approx(12 / 17)
    # specificity = 9 / (9 + 2); balanced accuracy = (6/9 + 9/11) / 2
    assert values["balanced_accuracy"] == pytest.approx((6 / 9 + 9 / 11) / 2)
    # fpr = 2 / (2 + 9); fnr = 3 / (3 + 6)
    assert values["fpr"] == pytest.approx(2 / 11)
    assert values["fnr"] == pytest.approx(3 / 9)


def test_a_judge_that_never_says_pass_has_no_precision_and_zero_f1() -> None:
    # tp=0, fp=0, tn=5, fn=4: nothing predicted PASS.
    values = metric_values(Confusion(tp=0, fp=0, tn=5, fn=4))
    assert values["accuracy"] == pytest.approx(5 / 9)
    assert values["precision"] is None  # tp + fp = 0
    assert values["recall"] == 0.0  # 0 / 4
    assert values["f1"] == 0.0  # 0 / (0 + 0 + 4)
    assert values["balanced_accuracy"] == pytest.approx((0.0 + 1.0) / 2)  # recall 0, spec 5/5
    assert values["fpr"] == 0.0  # 0 / 5
    assert values["fnr"] == 1.0  # 4 / 4


def test_only_pass_trajectories_leave_specificity_and_fpr_undefined() -> None:
    # tp=3, fp=0, tn=0, fn=1: no FAIL trajectory at all.
    values = metric_values(Confusion(tp=3, fp=0, tn=0, fn=1))
    assert values["accuracy"] == pytest.approx(3 / 4)
    assert values["precision"] == 1.0  # 3 / 3
    assert values["recall"] == pytest.approx(3 / 4)
    assert values["f1"] == pytest.approx(6 / 7)  # 6 / (6 + 0 + 1)
    assert values["balanced_accuracy"] == pytest.approx(3 / 4)  # only recall is defined
    assert values["fpr"] is None  # fp + tn = 0
    assert values["fnr"] == pytest.approx(1 / 4)


def test_only_fail_trajectories_leave_recall_f1_and_fnr_undefined_when_all_correct() -> None:
    # tp=0, fp=0, tn=7, fn=0: the judge rejected every FAIL trajectory.
    values = metric_values(Confusion(tn=7))
    assert values["accuracy"] == 1.0
    assert values["precision"] is None
    assert values["recall"] is None
    assert values["f1"] is None  # 2*0 + 0 + 0 = 0
    assert values["balanced_accuracy"] == 1.0  # only specificity 7/7
    assert values["fpr"] == 0.0
    assert values["fnr"] is None
    # tp=0, fp=2, tn=5, fn=0: two FAIL trajectories let through.
    let_through = metric_values(Confusion(fp=2, tn=5))
    assert let_through["precision"] == 0.0  # 0 / 2
    assert let_through["f1"] == 0.0  # 0 / (0 + 2 + 0)
    assert let_through["balanced_accuracy"] == pytest.approx(5 / 7)
    assert let_through["fpr"] == pytest.approx(2 / 7)


def test_an_empty_matrix_has_every_metric_undefined() -> None:
    confusion = confusion_counts([], [])
    assert confusion == Confusion()
    assert metric_values(confusion) == dict.fromkeys(METRIC_KEYS)


def test_invalid_verdicts_count_as_wrong_on_either_class() -> None:
    labels = [True, True, False, False, False]
    verdicts: list[bool | None] = [None, True, None, None, False]
    confusion = confusion_counts(labels, verdicts)
    # PASS: one INVALID -> fn, one PASS -> tp. FAIL: two INVALID -> fp, one FAIL -> tn.
    assert confusion == Confusion(tp=1, fp=2, tn=1, fn=1, invalid_on_pass=1, invalid_on_fail=2)
    assert confusion.invalid == 3
    assert confusion.total == 5


def test_all_invalid_verdicts_are_all_wrong() -> None:
    labels = [True, False, True, False, False]
    confusion = confusion_counts(labels, [None] * 5)
    assert confusion == Confusion(fp=3, fn=2, invalid_on_pass=2, invalid_on_fail=3)
    values = metric_values(confusion)
    assert values["accuracy"] == 0.0
    assert values["precision"] == 0.0  # tp / (tp + fp) = 0 / 3
    assert values["recall"] == 0.0  # 0 / 2
    assert values["f1"] == 0.0  # 0 / (0 + 3 + 2)
    assert values["balanced_accuracy"] == 0.0
    assert values["fpr"] == 1.0  # 3 / 3
    assert values["fnr"] == 1.0  # 2 / 2


def test_different_lengths_are_refused_with_both_lengths_named() -> None:
    with pytest.raises(ValueError, match=r"3 labels and 2 verdicts"):
        confusion_counts([True, False, True], [True, None])


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_metrics_agree_with_scikit_learn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size = int(rng.integers(20, 200))
    truth = rng.random(size) < rng.uniform(0.2, 0.8)
    # A judge right about 75% of the time, so every cell is populated.
    predicted = np.where(rng.random(size) < 0.75, truth, ~truth)
    labels = [bool(value) for value in truth]
    verdicts: list[bool | None] = [bool(value) for value in predicted]
    values = metric_values(confusion_counts(labels, verdicts))

    assert values["accuracy"] == pytest.approx(accuracy_score(truth, predicted))
    assert values["precision"] == pytest.approx(precision_score(truth, predicted, zero_division=0))
    assert values["recall"] == pytest.approx(recall_score(truth, predicted, zero_division=0))
    assert values["f1"] == pytest.approx(f1_score(truth, predicted, zero_division=0))
    assert values["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(truth, predicted))
    (tn, fp), (fn, tp) = confusion_matrix(truth, predicted, labels=[False, True])
    assert values["fpr"] == pytest.approx(fp / (fp + tn))
    assert values["fnr"] == pytest.approx(fn / (fn + tp))


def test_f1_agrees_with_scikit_learn_when_no_pass_is_predicted() -> None:
    truth = np.array([True, True, False, False, False])
    predicted = np.zeros(5, dtype=bool)
    values = metric_values(confusion_counts(list(truth), list(predicted)))
    assert values["f1"] == f1_score(truth, predicted, zero_division=0) == 0.0


def test_counts_row_follows_the_column_order() -> None:
    row = counts_row(Confusion(tp=1, fp=2, tn=3, fn=4, invalid_on_pass=4))
    assert COUNT_COLUMNS == ("tp", "fp", "tn", "fn")
    assert row.dtype == np.int64
    assert row.tolist() == [1, 2, 3, 4]


def _matches(vectorised: float, scalar: float | None) -> bool:
    if scalar is None:
        return math.isnan(vectorised)
    return math.isclose(vectorised, scalar, rel_tol=1e-12, abs_tol=0.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorised_metrics_equal_the_scalar_ones_row_by_row(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # Small counts so that many rows have zeros in them and hit the undefined cases.
    counts: NDArray[np.int64] = rng.integers(0, 3, size=(400, 4), dtype=np.int64)
    counts[:4] = 0  # an all-zero row for sure
    counts[4] = [0, 0, 5, 0]  # only FAIL trajectories, all rejected
    counts[5] = [3, 0, 0, 1]  # only PASS trajectories
    columns = {
        "f1": f1_from_counts(counts),
        "balanced_accuracy": balanced_accuracy_from_counts(counts),
        "accuracy": accuracy_from_counts(counts),
    }
    for name, column in columns.items():
        assert column.shape == (400,)
        assert column.dtype == np.float64
        assert np.array_equal(METRICS_FROM_COUNTS[name](counts), column, equal_nan=True)
    undefined = dict.fromkeys(columns, 0)
    for index, row in enumerate(counts):
        tp, fp, tn, fn = (int(value) for value in row)
        scalar = metric_values(Confusion(tp=tp, fp=fp, tn=tn, fn=fn))
        for name, column in columns.items():
            assert _matches(float(column[index]), scalar[name]), (name, row.tolist())
            undefined[name] += scalar[name] is None
    # The random rows did exercise the undefined (NaN) path of every metric.
    assert all(count > 0 for count in undefined.values())


def test_vectorised_metrics_keep_leading_axes() -> None:
    counts = np.array([[[6, 2, 9, 3], [0, 0, 0, 0]]])
    result = f1_from_counts(counts)
    assert result.shape == (1, 2)
    assert result[0, 0] == pytest.approx(12 / 17)
    assert math.isnan(result[0, 1])


def test_vectorised_metrics_refuse_a_wrong_last_axis() -> None:
    with pytest.raises(ValueError, match="last axis of length 4"):
        f1_from_counts(np.zeros((3, 5)))
