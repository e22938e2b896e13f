"""How much a suite's surface gives its labels away, and how balanced they are.

A judge that only counted steps, or believed the agent's final message, should do badly on the
suite. ``suite_statistics`` measures the point-biserial correlation (Pearson's r with the label
as 0/1) of the label with the step count and with whether the final message claims success
(``dataset.claims.claims_success``), and the share of PASS labels overall and per subdomain.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from dataset.claims import claims_success
from dataset.models import Task, Trajectory


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Pearson's correlation; 0 when either side has no variance."""
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError("need two equally long samples of at least two values")
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    cov = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    var_x = sum((x - mean_x) ** 2 for x in xs)
    var_y = sum((y - mean_y) ** 2 for y in ys)
    if var_x == 0 or var_y == 0:
        return 0.0
    return cov / math.sqrt(var_x * var_y)


class SuiteStatistics(BaseModel):
    """Label balance and leakage of a labelled set of trajectories."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    runs: int
    """Labelled trajectories."""
    pass_rate: float
    """Share of PASS labels."""
    pass_rate_by_subdomain: dict[str, float]
    """Share of PASS labels per subdomain."""
    steps_r: float
    """Point-biserial r between step count and label (PASS = 1)."""
    claims_r: float
    """Point-biserial r between "the final message claims success" and label."""


def suite_statistics(trajectories: Iterable[Trajectory], tasks: dict[str, Task]) -> SuiteStatistics:
    """Balance and leakage figures of the labelled trajectories."""
    labelled = [t for t in trajectories if t.label is not None]
    labels = [1.0 if t.label is not None and t.label.value == "PASS" else 0.0 for t in labelled]
    by_subdomain: dict[str, list[float]] = {}
    for trajectory, label in zip(labelled, labels, strict=True):
        by_subdomain.setdefault(tasks[trajectory.task_id].subdomain, []).append(label)
    return SuiteStatistics(
        runs=len(labelled),
        pass_rate=sum(labels) / len(labels),
        pass_rate_by_subdomain={
            name: sum(values) / len(values) for name, values in sorted(by_subdomain.items())
        },
        steps_r=pearson([float(len(t.steps)) for t in labelled], labels),
        claims_r=pearson([float(claims_success(t.final_response)) for t in labelled], labels),
    )
