"""Commands in a project folder, run in the dataset-code box: what they see, what they may do,
what stays afterwards."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandboxes.workspace import shell
from sandboxes.workspace.shell import PROJECT_MOUNT, run_project_command


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "code.py").write_text("VALUE = 1\n")
    (folder / "notes.txt").write_text("keep me\n")
    tmp_path.chmod(0o755)
    return folder


async def test_a_command_runs_in_the_project_unprivileged(project: Path) -> None:
    run = await run_project_command(
        project, "pwd; cat notes.txt; id -u", keep_changes=False, timeout=30
    )
    lines = run.output.splitlines()
    assert lines[0] == str(PROJECT_MOUNT)
    assert lines[1] == "keep me"
    assert lines[2] == ("65534" if os.geteuid() == 0 else str(os.geteuid()))
    assert run.text().endswith("[exit code 0]")


async def test_changes_stay_only_when_kept(project: Path) -> None:
    await run_project_command(
        project, "echo 2 > new.txt; rm notes.txt", keep_changes=False, timeout=30
    )
    assert sorted(p.name for p in project.iterdir()) == ["notes.txt", "pkg"]
    run = await run_project_command(
        project, "echo 2 > new.txt; rm notes.txt; mkdir -p out/deep", keep_changes=True, timeout=30
    )
    assert run.exit_code == 0
    assert sorted(p.name for p in project.iterdir()) == ["new.txt", "out", "pkg"]
    assert (project / "new.txt").read_text() == "2\n"
    if os.geteuid() == 0:
        assert (project / "new.txt").stat().st_uid == 0


async def test_the_exit_code_and_a_timeout(project: Path) -> None:
    failed = await run_project_command(project, "exit 3", keep_changes=False, timeout=30)
    assert (failed.exit_code, failed.timed_out) == (3, False)
    assert failed.text() == "[exit code 3]"
    slow = await run_project_command(project, "sleep 30", keep_changes=True, timeout=1)
    assert slow.timed_out
    assert slow.exit_code is None
    assert slow.seconds < 15
    assert slow.text() == "[command timed out]"
    assert (project / "notes.txt").read_text() == "keep me\n"


async def test_no_network(project: Path) -> None:
    run = await run_project_command(
        project,
        "python -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)\"",
        keep_changes=False,
        timeout=30,
    )
    assert run.exit_code != 0
    assert "Network is unreachable" in run.output or "OSError" in run.output


async def test_the_host_outside_the_project_is_not_there(project: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret\n")
    run = await run_project_command(project, f"cat {secret}", keep_changes=False, timeout=30)
    assert "host secret" not in run.output
    assert "No such file or directory" in run.output
    assert run.exit_code != 0


async def test_output_and_file_sizes_are_capped(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = await run_project_command(
        project, "yes 0123456789 | head -c 3000000", keep_changes=False, timeout=30
    )
    assert len(run.output) < shell.OUTPUT_CHARS + 200
    assert "cut" in run.output
    monkeypatch.setattr(shell, "FILE_BLOCKS", 16)  # KiB
    big = await run_project_command(
        project, "head -c 100000 /dev/zero > big.bin", keep_changes=True, timeout=30
    )
    assert big.exit_code != 0
    assert (project / "big.bin").stat().st_size <= 16 * 1024


async def test_changes_over_the_quota_are_not_kept(project: Path) -> None:
    run = await run_project_command(
        project, "head -c 200000 /dev/zero > big.bin", keep_changes=True, quota=100_000
    )
    assert run.exit_code == 0
    assert run.over_quota is not None
    assert run.over_quota > 200_000
    assert "[changes not kept" in run.text()
    assert not (project / "big.bin").exists()
    kept = await run_project_command(project, "echo small > s.txt", keep_changes=True, quota=10**6)
    assert kept.over_quota is None
    assert (project / "s.txt").exists()
