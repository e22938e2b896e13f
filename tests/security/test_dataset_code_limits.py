"""Hostile dataset scripts against the limits of their box, run in real bubblewrap boxes through
``run_python_script`` (what ``verify.py`` and preparation scripts run in): a script cannot fill
its ``HOME`` or any other place, allocate without bound, start hundreds of processes, burn more
CPU seconds than its timeout, or run past the ceiling whatever timeout its task names."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import tempfile
import textwrap
from pathlib import Path

import pytest

from replay.verifier import run_script
from sandboxes import confinement
from sandboxes.confinement import (
    BOX_USER,
    SHM_BYTES,
    TMP_BYTES,
    BoxLimits,
    BoxSpec,
    box_command,
    run_python_script,
)


async def _run(tmp_path: Path, source: str, timeout: float = 120) -> tuple[int | None, str]:
    script = tmp_path / "task" / "verify.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(textwrap.dedent(source))
    run = await run_python_script(script, [], {}, timeout)
    return run.exit_code, run.text(8000)


async def test_a_script_cannot_fill_its_home(tmp_path: Path) -> None:
    _, said = await _run(
        tmp_path,
        """
        import os
        written = 0
        with open(os.path.join(os.environ["HOME"], "fill"), "wb") as out:
            try:
                for _ in range(2048):
                    out.write(b"x" * 2**20)
                    out.flush()
                    written += 1
            except OSError as error:
                print("stopped:", error)
        print("written MiB:", written)
        """,
    )
    assert "stopped:" in said, said
    written = int(said.rsplit("written MiB:", 1)[1].split()[0])
    assert written < 1024  # well short of the 2 GiB it tried


async def test_a_script_cannot_allocate_without_bound(tmp_path: Path) -> None:
    _, said = await _run(
        tmp_path,
        """
        try:
            block = bytearray(6 * 2**30)
            print("allocated", len(block))
        except MemoryError:
            print("refused: MemoryError")
        """,
    )
    assert "refused: MemoryError" in said, said


@pytest.mark.skipif(
    os.geteuid() != 0, reason="the process cap applies where the box user is nobody"
)
async def test_a_script_cannot_start_hundreds_of_processes(tmp_path: Path) -> None:
    _, said = await _run(
        tmp_path,
        """
        import subprocess
        started = []
        try:
            for _ in range(600):
                started.append(subprocess.Popen(["sleep", "30"]))
        except OSError as error:
            print("refused:", error)
        print("started:", len(started))
        for process in started:
            process.kill()
        """,
    )
    assert "refused:" in said, said
    assert int(said.rsplit("started:", 1)[1].split()[0]) < 600


async def test_cpu_time_is_capped_at_the_timeout(tmp_path: Path) -> None:
    """Each process of the box may burn at most as many CPU seconds as its timeout (threads on
    several cores cannot take more), and may not raise that limit."""
    _, said = await _run(
        tmp_path,
        """
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        print("cpu limit:", soft, hard)
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (hard + 60, hard + 60))
            print("raised")
        except (ValueError, OSError) as error:
            print("cannot raise:", error)
        """,
        timeout=45,
    )
    soft, hard = (int(n) for n in said.split("cpu limit:", 1)[1].split()[:2])
    assert 0 < soft <= hard <= 45, said
    assert "cannot raise:" in said, said


async def test_a_script_past_its_cpu_limit_is_named(tmp_path: Path) -> None:
    """The kernel's signal for the CPU-time limit is reported as that limit, not a bare crash."""
    script = tmp_path / "task" / "verify.py"
    script.parent.mkdir()
    script.write_text(
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_CPU, (1, resource.getrlimit(resource.RLIMIT_CPU)[1]))\n"
        "while True:\n    pass\n"
    )
    run = await run_script(script, [], {}, 60)
    assert not run.timed_out
    assert run.exit_code == 128 + signal.SIGXCPU, run.output
    assert run.error_summary is not None
    assert "killed by SIGXCPU" in run.error_summary
    assert "CPU-time limit" in run.error_summary


async def test_a_task_cannot_choose_a_timeout_past_the_ceiling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However long a task's verifier asks to run, it is killed at the ceiling, and the
    verdict's note gives the time it really had."""
    monkeypatch.setattr(confinement, "DATASET_CODE_MAX_SECONDS", 3.0)
    script = tmp_path / "task" / "verify.py"
    script.parent.mkdir()
    script.write_text("import time\ntime.sleep(120)\n")
    run = await run_script(script, [], {}, 10**9)
    assert run.timed_out
    assert run.seconds < 30
    assert run.error_summary == "timed out after 3 s"
    assert "[killed after 3 s]" in run.output


async def test_an_unprivileged_box_writes_only_to_places_with_a_size(tmp_path: Path) -> None:
    """Where the runtime is not root, bubblewrap runs in a user namespace and the box user owns
    the box's root and ``/dev``: neither takes a byte, ``/dev/shm`` takes at most its size, and
    ``HOME`` at most the work folder's."""
    scratch = Path(tempfile.mkdtemp(prefix="aj-box-test-", dir="/tmp"))
    try:
        scratch.chmod(0o755)
        folder = scratch / "code"
        folder.mkdir()
        (folder / "main.py").write_text(
            textwrap.dedent(
                """
                import json, os
                found = {}
                for place in ["/", "/dev", "/dev/shm", os.environ["HOME"], "/tmp"]:
                    written = 0
                    try:
                        with open(os.path.join(place, "fill.bin"), "wb") as out:
                            for _ in range(1024):
                                out.write(b"x" * 2**20)
                                out.flush()
                                written += 1
                    except OSError:
                        pass
                    try:
                        os.unlink(os.path.join(place, "fill.bin"))
                    except OSError:
                        pass
                    found[place] = written
                print(json.dumps(found))
                """
            )
        )
        (folder / "main.py").chmod(0o644)
        folder.chmod(0o755)
        work = scratch / "work"
        (work / "tmp").mkdir(parents=True)
        caller: list[str] = []
        if os.geteuid() == 0:
            for path in (work, work / "tmp"):
                os.chown(path, BOX_USER, BOX_USER)
            caller = ["setpriv", f"--reuid={BOX_USER}", f"--regid={BOX_USER}", "--clear-groups"]
        limits = BoxLimits(work_bytes=128 * 2**20)
        spec = BoxSpec(
            command=["/usr/bin/python3", "main.py"],
            cwd=folder,
            read_only=[folder],
            interpreter=False,
            limits=limits,
        )
        process = await asyncio.create_subprocess_exec(
            *caller,
            *box_command(spec, work, privileged=False),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await asyncio.wait_for(process.communicate(), 120)
    finally:
        shutil.rmtree(scratch)
    assert process.returncode == 0, output
    written = json.loads(output.decode().splitlines()[-1])
    assert written["/"] == 0, written
    assert written["/dev"] == 0, written
    assert written["/dev/shm"] <= SHM_BYTES // 2**20, written
    assert written["/box"] <= 128, written
    assert written["/tmp"] <= TMP_BYTES // 2**20, written
