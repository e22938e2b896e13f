"""Running a task's ``verify.py`` on a sandbox, under the MCPMark contract.

The verifier runs as ``python verify.py [database]`` in a subprocess, with the task folder as its
working directory, this interpreter (so it sees the runtime's packages, e.g. asyncpg), the
contract's environment variables, and the task's timeout, after which it is killed. Exit code 0
means PASS. What points the verifier at the sandbox (``FILESYSTEM_TEST_DIR``, ``POSTGRES_*`` and
the database name, exported files) is the sandbox's environment kind's
(``EnvironmentKind.verifier_inputs``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path

from dataset.models import Task
from environments.kind import EnvironmentKind
from replay.report import VerifierRun
from sandboxes.base import Sandbox
from sandboxes.runs import track_process, untrack_process

OUTPUT_LIMIT = 8_000
"""Characters of verifier output kept in reports (head and tail)."""


def _clip(text: str) -> str:
    if len(text) <= OUTPUT_LIMIT:
        return text
    half = OUTPUT_LIMIT // 2
    return f"{text[:half]}\n[... {len(text) - OUTPUT_LIMIT} characters cut ...]\n{text[-half:]}"


async def run_verifier(
    kind: EnvironmentKind, task: Task, task_dir: Path, sandbox: Sandbox
) -> VerifierRun:
    """Run the task's verifier against ``sandbox``, a sandbox of ``kind`` (the task's
    environment kind, which says what the verifier gets); the task must have a verifier."""
    if task.verifier is None:
        raise ValueError(f"task {task.id} has no verifier")
    script = task_dir / task.verifier.path
    async with kind.verifier_inputs(sandbox) as inputs:
        environment = {**os.environ, **inputs.environment}
        return await run_script(
            script, list(inputs.arguments), environment, task.verifier.timeout_seconds
        )


async def run_script(
    script: Path, arguments: list[str], environment: dict[str, str], timeout: float
) -> VerifierRun:
    """Run one Python script with a timeout; kill it (and its group) when it runs over."""
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        script.name,
        *arguments,
        cwd=script.parent,
        env=environment,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    track_process(process.pid)
    try:
        return await _supervise(process, started, timeout)
    finally:
        untrack_process(process.pid)


async def _supervise(
    process: asyncio.subprocess.Process, started: float, timeout: float
) -> VerifierRun:
    assert process.stdout is not None
    assert process.stderr is not None
    # Read both pipes in tasks, so what a killed verifier printed before the kill is kept.
    readers = [asyncio.create_task(pipe.read()) for pipe in (process.stdout, process.stderr)]
    timed_out = False
    try:
        await asyncio.wait_for(process.wait(), timeout)
    except TimeoutError:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 9)
        await process.wait()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 9)
        for reader in readers:
            reader.cancel()
        raise
    stdout, stderr = await asyncio.gather(*readers)
    output = (stdout + stderr).decode(errors="replace")
    if timed_out:
        output += f"\n[killed after {timeout:g} s]"
    return VerifierRun(
        passed=process.returncode == 0 and not timed_out,
        exit_code=None if timed_out else process.returncode,
        output=_clip(output),
        timed_out=timed_out,
        seconds=time.perf_counter() - started,
    )
