"""Running verifiers: the MCPMark exit-code contract, environment, timeouts, task folders."""

from __future__ import annotations

import textwrap
from pathlib import Path

from dataset.models import DirectoryTreeState, Task, VerifierRef
from environments.filesystem.kind import KIND
from replay.verifier import run_script, run_verifier
from sandboxes.filesystem.local import LocalFilesystemProvider


def script(folder: Path, body: str) -> Path:
    path = folder / "verify.py"
    path.write_text(textwrap.dedent(body))
    return path


async def test_exit_code_zero_is_pass_and_output_is_kept(tmp_path: Path) -> None:
    run = await run_script(script(tmp_path, "print('all good')\n"), [], {}, 10)
    assert run.passed
    assert run.exit_code == 0
    assert "all good" in run.output


async def test_any_other_exit_code_is_fail_with_stderr(tmp_path: Path) -> None:
    body = "import sys\nprint('checking')\nsys.exit('missing index.md')\n"
    run = await run_script(script(tmp_path, body), [], {}, 10)
    assert not run.passed
    assert run.exit_code == 1
    assert "checking" in run.output
    assert "missing index.md" in run.output


async def test_a_verifier_that_hangs_is_killed(tmp_path: Path) -> None:
    body = "import time\nprint('started', flush=True)\ntime.sleep(60)\n"
    run = await run_script(script(tmp_path, body), [], {}, 0.5)
    assert run.timed_out
    assert not run.passed
    assert run.exit_code is None
    assert run.seconds < 10
    assert "started" in run.output


async def test_a_filesystem_verifier_sees_the_sandbox(tmp_path: Path) -> None:
    task_dir = tmp_path / "task"
    (task_dir / "initial").mkdir(parents=True)
    (task_dir / "initial" / "data.txt").write_text("42")
    script(
        task_dir,
        """\
        import os, pathlib, sys
        root = pathlib.Path(os.environ["FILESYSTEM_TEST_DIR"])
        print("root", root)
        sys.exit(0 if (root / "answer.txt").read_text() == "42" else 1)
        """,
    )
    task = Task(
        id="t",
        domain="ds",
        subdomain="filesystem",
        instruction="Copy data.txt to answer.txt.",
        initial_state=DirectoryTreeState(),
        verifier=VerifierRef(timeout_seconds=20),
    )
    async with LocalFilesystemProvider() as provider:
        sandbox = await provider.create(task, task_dir)
        await sandbox.tree.write_bytes("answer.txt", b"41")
        assert not (await run_verifier(KIND, task, task_dir, sandbox)).passed
        await sandbox.tree.write_bytes("answer.txt", b"42")
        run = await run_verifier(KIND, task, task_dir, sandbox)
        assert run.passed, run.output
        assert sandbox.name in run.output


async def test_a_private_task_folder_is_shown_as_a_read_only_copy(tmp_path: Path) -> None:
    """A dataset written with umask 077 keeps the box user out of the task folder: the verifier
    gets a readable copy in its place, which it cannot change either."""
    task_dir = tmp_path / "task"
    (task_dir / "checks").mkdir(parents=True)
    task_dir.chmod(0o700)
    (task_dir / "expected.txt").write_text("42")
    (task_dir / "expected.txt").chmod(0o600)
    script(
        task_dir,
        """\
        import os, pathlib
        assert pathlib.Path("expected.txt").read_text() == "42"
        try:
            pathlib.Path("expected.txt").write_text("changed")
        except OSError as error:
            print("refused:", error.strerror)
        print("cwd", os.getcwd())
        """,
    ).chmod(0o600)
    run = await run_script(task_dir / "verify.py", [], {}, 20)
    assert run.passed, run.output
    assert "refused: Read-only file system" in run.output
    assert f"cwd {task_dir}" in run.output
    assert (task_dir / "expected.txt").read_text() == "42"
    assert sorted(p.name for p in task_dir.iterdir()) == ["checks", "expected.txt", "verify.py"]
