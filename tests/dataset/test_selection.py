"""``--only`` and ``--limit`` on a real dataset: globs on trajectory and task ids, the limit in id
order, and a pattern that matches nothing refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from dataset.models import Trajectory
from dataset.selection import Selection, SelectionError, select_trajectories
from dataset.store import load_dataset

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"


@pytest.fixture(scope="module")
def trajectories() -> dict[str, Trajectory]:
    return load_dataset(MINI).trajectories


def test_no_option_keeps_everything(trajectories: dict[str, Trajectory]) -> None:
    assert Selection().everything
    assert select_trajectories(trajectories, Selection()) is None


def test_a_glob_matches_trajectory_ids(trajectories: dict[str, Trajectory]) -> None:
    chosen = select_trajectories(trajectories, Selection(patterns=("*--pass",)))
    assert chosen == {key for key in trajectories if key.endswith("--pass")}
    assert chosen  # the mini dataset has such runs


def test_a_task_id_selects_every_run_of_the_task(trajectories: dict[str, Trajectory]) -> None:
    # No trajectory id equals the task id: only the task id can match.
    task = "fs-meeting-notes-index"
    assert task not in trajectories
    chosen = select_trajectories(trajectories, Selection(patterns=(task,)))
    assert chosen == {key for key, value in trajectories.items() if value.task_id == task}
    assert chosen is not None
    assert len(chosen) == 2


def test_patterns_add_up_and_the_limit_keeps_the_first_in_id_order(
    trajectories: dict[str, Trajectory],
) -> None:
    both = Selection(patterns=("fs-*", "pg-*"))
    chosen = select_trajectories(trajectories, both)
    assert chosen == {key for key in trajectories if key.startswith(("fs-", "pg-"))}
    limited = select_trajectories(trajectories, Selection(patterns=both.patterns, limit=3))
    assert limited == set(sorted(chosen)[:3])
    only_limit = select_trajectories(trajectories, Selection(limit=2))
    assert only_limit == set(sorted(trajectories)[:2])


def test_a_pattern_matching_nothing_is_named(trajectories: dict[str, Trajectory]) -> None:
    with pytest.raises(SelectionError) as raised:
        select_trajectories(trajectories, Selection(patterns=("fs-*", "gui-*")))
    message = str(raised.value)
    assert "--only 'gui-*' matches no trajectory or task id" in message
    assert "'fs-*'" not in message
    assert "fs-meeting-notes-index" in message  # an example of what there is


def test_a_limit_below_one_is_refused(trajectories: dict[str, Trajectory]) -> None:
    with pytest.raises(SelectionError, match="--limit 0"):
        select_trajectories(trajectories, Selection(limit=0))


def test_globs_are_case_sensitive_like_the_ids(trajectories: dict[str, Trajectory]) -> None:
    with pytest.raises(SelectionError):
        select_trajectories(trajectories, Selection(patterns=("FS-*",)))
