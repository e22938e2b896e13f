"""``agentjudge sandboxes gc``: what a dead run left is removed, a live run's is kept."""

from __future__ import annotations

import pytest
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


@pytest.mark.docker
def test_build_images_also_builds_the_desktop_image_when_asked() -> None:
    from sandboxes.desktop.image import desktop_image_size, desktop_image_tag
    from sandboxes.docker.images import sandbox_image_tag

    result = CliRunner().invoke(app, ["sandboxes", "build-images", "--desktop"])
    assert result.exit_code == 0, result.output
    assert f"sandbox image: {sandbox_image_tag()}" in result.output
    size = desktop_image_size(desktop_image_tag()) / 2**20
    assert f"desktop image: {desktop_image_tag()} ({size:.0f} MiB)" in result.output
