"""Running a task's ``verify.py`` on a sandbox, under the MCPMark contract, in a box.

The verifier runs as ``python verify.py [database]`` with this interpreter (so it sees the
runtime's packages, e.g. asyncpg), the task folder as its working directory and the task's
timeout, after which the whole box is killed. Exit code 0 means PASS. It runs in a
``sandboxes.confinement`` box: an unprivileged user, no network, the task folder and what the
environment kind exposes read-only, a fresh work folder as ``HOME``, an environment holding only
the contract's variables, and output captured in bounded memory. What points the verifier at the
sandbox (``FILESYSTEM_TEST_DIR``, ``POSTGRES_*`` and the database name, the folders bound into
the box) is the sandbox's environment kind's (``EnvironmentKind.verifier_inputs``).

The box sees this interpreter's packages, so the runtime depends on ``psycopg2-binary``: MCPMark's
Postgres verifiers import ``psycopg2`` and connect with the ``POSTGRES_*`` variables, whose host
is the relay's socket folder (libpq takes a directory as host). A run that ends non-zero with a
traceback, is ended by a signal or runs out of time is a *verifier error* (``VerifierRun.errored``,
see ``replay.crashes``), not a FAIL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from dataset.models import Task
from environments.kind import EnvironmentKind
from replay.crashes import verifier_error
from replay.report import VerifierRun
from sandboxes.base import Sandbox
from sandboxes.confinement import dataset_code_timeout, run_python_script

OUTPUT_LIMIT = 8_000
"""Characters of verifier output kept in reports (head and tail)."""


async def run_verifier(
    kind: EnvironmentKind, task: Task, task_dir: Path, sandbox: Sandbox
) -> VerifierRun:
    """Run the task's verifier against ``sandbox``, a sandbox of ``kind`` (the task's
    environment kind, which says what the verifier gets); the task must have a verifier."""
    if task.verifier is None:
        raise ValueError(f"task {task.id} has no verifier")
    script = task_dir / task.verifier.path
    async with kind.verifier_inputs(sandbox) as inputs:
        return await run_script(
            script,
            list(inputs.arguments),
            inputs.environment,
            task.verifier.timeout_seconds,
            read_only=inputs.read_only,
            task_dir=task_dir,
        )


async def run_script(
    script: Path,
    arguments: Sequence[str],
    environment: Mapping[str, str],
    timeout: float,
    *,
    read_only: Sequence[Path] = (),
    task_dir: Path | None = None,
) -> VerifierRun:
    """Run one Python script in a box with a timeout (at most the dataset-code ceiling), the
    variables ``environment`` names and read-only access to ``task_dir`` (default: the script's
    folder) and ``read_only``."""
    timeout = dataset_code_timeout(timeout)
    run = await run_python_script(
        script, arguments, environment, timeout, read_only=read_only, task_dir=task_dir
    )
    output = run.text(OUTPUT_LIMIT)
    if run.timed_out:
        output += f"\n[killed after {timeout:g} s]"
    error = verifier_error(run.exit_code, run.timed_out, output, timeout)
    return VerifierRun(
        passed=run.exit_code == 0 and not run.timed_out,
        exit_code=run.exit_code,
        output=output,
        timed_out=run.timed_out,
        seconds=run.seconds,
        errored=error is not None,
        error_summary=error,
    )
