"""Label placement in the cost-vs-F1 plot: every label gets its own place, and it ends."""

from __future__ import annotations

import itertools

from bench.plots import _LINE_HEIGHT, _place_labels


def test_labels_on_one_spot_are_stacked_without_overlap() -> None:
    # Thirty configurations with the same cost and F1 (as a scripted run gives): a regression
    # for a placement loop that never ended when rounding made a moved label overlap again.
    points = [(0.0, 0.1 * 7 / 3, f"config {index}") for index in range(30)]
    centres = _place_labels(points, 0.0, 1.0)
    assert len(centres) == 30
    ordered = sorted(centres)
    assert ordered[0] == points[0][1]
    for lower, upper in itertools.pairwise(ordered):
        assert upper - lower >= _LINE_HEIGHT - 1e-9


def test_labels_far_apart_stay_at_their_points() -> None:
    points = [(0.0, 0.1, "a"), (0.0, 0.9, "b")]
    assert _place_labels(points, 0.0, 1.0) == [0.1, 0.9]
