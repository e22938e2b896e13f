"""``agentjudge sandboxes gc``: what a dead run left is removed, a live run's is kept."""

from __future__ import annotations

from typer.testing import CliRunner

from agentjudge.cli import app
from sandboxes.runs import current_run, workdir


def test_gc_removes_a_dead_runs_directory_and_keeps_the_live_one() -> None:
    dead = workdir() / "aj_deadbeef00"
    (dead / "aj_deadbeef00_fs_1" / "nested").mkdir(parents=True)
    (dead / "aj_deadbeef00_fs_1" / "nested" / "file.txt").write_text("left behind")
    (dead / "aj_deadbeef00_fs_1" / "nested").chmod(0o500)  # frozen trees are read-only
    live = current_run().directory()
    (live / "mine.txt").write_text("in use")
    result = CliRunner().invoke(app, ["sandboxes", "gc"])
    assert result.exit_code == 0, result.output
    assert not dead.exists()
    assert f"removed directory {dead}" in result.output
    assert (live / "mine.txt").read_text() == "in use"
