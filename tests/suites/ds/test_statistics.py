"""The leakage statistics against hand-computed and reference values."""

from __future__ import annotations

import random

import pytest

from dataset.claims import claims_success
from suites.ds.statistics import pearson


def test_pearson_matches_a_hand_computed_case() -> None:
    # x = 1,2,3,4 ; y = 0,0,1,1 -> cov 2, var_x 5, var_y 1 -> r = 2 / sqrt(5) = 0.894...
    assert pearson([1, 2, 3, 4], [0, 0, 1, 1]) == pytest.approx(2 / 5**0.5)
    assert pearson([1, 1, 1], [0, 1, 0]) == 0.0


def test_pearson_matches_numpy_style_reference_on_random_data() -> None:
    generator = random.Random(3)
    xs = [generator.gauss(0, 1) for _ in range(200)]
    ys = [float(x + generator.gauss(0, 1) > 0) for x in xs]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sx = (sum((x - mx) ** 2 for x in xs) / (n - 1)) ** 0.5
    sy = (sum((y - my) ** 2 for y in ys) / (n - 1)) ** 0.5
    reference = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / ((n - 1) * sx * sy)
    assert pearson(xs, ys) == pytest.approx(reference)


@pytest.mark.parametrize(
    ("message", "claims"),
    [
        ("Done: summary/totals.csv contains the invoice totals.", True),
        ("The view is in place and returns 42 rows.", True),
        ("I created the index successfully.", True),
        ("I could not finish: the move failed.", False),
        ("I wrote a file but please verify the numbers.", False),
        ("Stopped after an error in the migration.", False),
        ("", False),
        (None, False),
    ],
)
def test_success_claims(message: str | None, claims: bool) -> None:
    assert claims_success(message) is claims
