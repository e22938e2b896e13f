"""The bundled example dataset: valid, one PASS and one FAIL per subdomain, its verifier honest
(``tests/suites/mini`` checks it is in sync with its generator)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from dataset.store import count_by, load_dataset

EXAMPLES = Path(__file__).resolve().parents[2] / "datasets" / "examples"
MINI = EXAMPLES / "mini"


def test_mini_is_valid_and_covers_every_domain_with_both_labels() -> None:
    dataset = load_dataset(MINI)
    assert dataset.problems == []
    assert count_by(dataset) == [
        ("ds", "filesystem", 1, 1, 0),
        ("ds", "postgres", 1, 1, 0),
        ("gui", "word", 1, 1, 0),
        ("mobile", "android", 1, 1, 0),
        ("search", "deep", 1, 1, 0),
    ]
    action_spaces = {
        step.action.type
        for trajectory in dataset.trajectories.values()
        for step in trajectory.steps
    }
    assert action_spaces == {"tool_call", "computer_13", "pyautogui", "android"}


def test_filesystem_verifier_fails_on_the_untouched_initial_tree(tmp_path: Path) -> None:
    task_dir = MINI / "tasks" / "fs-meeting-notes-index"
    shutil.copytree(task_dir / "initial", tmp_path / "tree")
    completed = subprocess.run(
        [sys.executable, str(task_dir / "verify.py")],
        env={**os.environ, "FILESYSTEM_TEST_DIR": str(tmp_path / "tree")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 1
    assert "index.md" in completed.stdout
