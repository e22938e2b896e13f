"""Running verifiers: the MCPMark exit-code contract, environment, timeouts."""

from __future__ import annotations

import os
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
    run = await run_script(script(tmp_path, "print('all good')\n"), [], dict(os.environ), 10)
    assert run.passed
    assert run.exit_code == 0
    assert "all good" in run.output


async def test_any_other_exit_code_is_fail_with_stderr(tmp_path: Path) -> None:
    body = "import sys\nprint('checking')\nsys.exit('missing index.md')\n"
    run = await run_script(script(tmp_path, body), [], dict(os.environ), 10)
    assert not run.passed
    assert run.exit_code == 1
    assert "checking" in run.output
    assert "missing index.md" in run.output


async def test_a_verifier_that_hangs_is_killed(tmp_path: Path) -> None:
    body = "import time\nprint('started', flush=True)\ntime.sleep(60)\n"
    run = await run_script(script(tmp_path, body), [], dict(os.environ), 0.5)
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
