"""``python -m suites.mini`` writes exactly the bundled ``datasets/examples/mini``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
MINI = ROOT / "datasets" / "examples" / "mini"


def _files(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


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
