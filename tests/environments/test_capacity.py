"""``--jobs auto``: runs at once sized from the machine's CPUs and memory and the kinds' needs;
sandboxes made ahead of need sized from what is left beside those runs."""

from __future__ import annotations

import pytest

from environments.capacity import MAX_AUTO_JOBS, auto_ahead, auto_jobs, parse_jobs
from environments.desktop.kind import DesktopKind
from environments.kind import WorkerResources

DESKTOP = DesktopKind.worker_resources
LIGHT = WorkerResources(cpus=0.5, memory_mb=512)


@pytest.mark.parametrize(
    ("needs", "cpus", "memory_mb", "jobs"),
    [
        ([DESKTOP], 2, 22_000, 3),  # this machine: three desktops of 0.6 CPU, not a fixed 4
        ([DESKTOP], 8, 6_000, 2),  # memory binds: 80 % of 6 GB holds two 2 GiB desktops
        ([LIGHT], 2, 22_000, 4),
        ([LIGHT, DESKTOP], 2, 22_000, 3),  # the heaviest kind counts
        ([DESKTOP], 4, 22_000, 6),
        ([DESKTOP], 1, 1_000, 1),  # never fewer than one
        ([LIGHT], 256, 10**7, MAX_AUTO_JOBS),
        ([], 2, 22_000, 8),  # no kind: the default need
    ],
)
def test_auto_jobs_fit_the_heaviest_kind_on_the_machine(
    needs: list[WorkerResources], cpus: int, memory_mb: int, jobs: int
) -> None:
    assert auto_jobs(needs, cpus=cpus, memory_mb=memory_mb) == jobs


def test_auto_jobs_read_this_machine() -> None:
    assert 1 <= auto_jobs([DESKTOP]) <= MAX_AUTO_JOBS


@pytest.mark.parametrize(("value", "jobs"), [("auto", None), ("AUTO", None), ("3", 3)])
def test_jobs_are_a_number_or_auto(value: str, jobs: int | None) -> None:
    assert parse_jobs(value) == jobs


@pytest.mark.parametrize("value", ["0", "-2", "many"])
def test_other_jobs_are_refused_naming_the_value(value: str) -> None:
    with pytest.raises(ValueError, match="--jobs"):
        parse_jobs(value)


@pytest.mark.parametrize(
    ("needs", "jobs", "cpus", "memory_mb", "ahead"),
    [
        ([DESKTOP], 2, 2, 22_000, 2),  # memory for six more, one per core
        ([DESKTOP], 3, 2, 22_000, 3),  # this machine's three jobs: one each, as they free up
        ([DESKTOP], 2, 8, 8_000, 1),  # 80 % of 8 GB holds three desktops: one beside two jobs
        ([DESKTOP], 2, 8, 5_000, 0),  # memory holds only the jobs' own: none made ahead
        ([LIGHT, DESKTOP], 2, 2, 22_000, 2),  # the heaviest kind counts
        ([DESKTOP], 4, 64, 10**7, MAX_AUTO_JOBS),
    ],
)
def test_sandboxes_made_ahead_fit_beside_the_jobs(
    needs: list[WorkerResources], jobs: int, cpus: int, memory_mb: int, ahead: int
) -> None:
    assert auto_ahead(needs, jobs=jobs, cpus=cpus, memory_mb=memory_mb) == ahead
