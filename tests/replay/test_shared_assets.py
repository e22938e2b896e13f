"""Replay from files the dataset shares: a seed and an initial tree in ``assets/`` replay as
they do from their tasks' own folders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from replay.runner import replay_dataset
from tests.replay.builders import MINI

SHARED = {
    "pg-active-customers-view": ("seed.sql", "shop-seed.sql"),
    "fs-meeting-notes-index": ("initial", "meeting-notes"),
}


def _ds_part_with_shared_files(root: Path) -> Path:
    """The mini dataset's DS tasks and runs, their initial states moved into ``assets/``."""
    shutil.copytree(MINI, root, ignore=shutil.ignore_patterns("android-*", "search-*", "word-*"))
    (root / "assets").mkdir()
    for task_id, (own, shared) in SHARED.items():
        folder = root / "tasks" / task_id
        (folder / own).rename(root / "assets" / shared)
        record = json.loads((folder / "task.json").read_text())
        record["initial_state"]["path"] = f"dataset:assets/{shared}"
        (folder / "task.json").write_text(json.dumps(record))
    return root


async def test_runs_replay_faithfully_from_shared_files(tmp_path: Path) -> None:
    root = _ds_part_with_shared_files(tmp_path / "ds")
    summary = await replay_dataset(root, tmp_path / "out", jobs=2)
    assert summary.problems == []
    assert {f"{row.domain}/{row.subdomain}": row.faithful for row in summary.rows} == {
        "ds/filesystem": 2,
        "ds/postgres": 2,
    }
    assert summary.total.verifier_agrees == summary.total.verifier_checked == 4
