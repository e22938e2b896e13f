"""The bundled example dataset: valid, one PASS and one FAIL per subdomain, and in sync with its
generator."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from dataset.store import count_by, load_dataset

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "datasets" / "examples"
MINI = EXAMPLES / "mini"


def _files(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


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


def test_committed_mini_matches_a_fresh_generator_run(tmp_path: Path) -> None:
    output = tmp_path / "mini"
    completed = subprocess.run(
        [sys.executable, "-m", "suites.mini", "--output", str(output)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert _files(output) == _files(MINI)


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
