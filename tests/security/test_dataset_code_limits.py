"""Hostile dataset scripts against the limits of their box, run in real bubblewrap boxes through
``run_python_script`` (what ``verify.py`` and preparation scripts run in): a script cannot fill
its ``HOME``, allocate without bound or start hundreds of processes."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from sandboxes.confinement import run_python_script


async def _run(tmp_path: Path, source: str) -> tuple[int | None, str]:
    script = tmp_path / "task" / "verify.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(textwrap.dedent(source))
    run = await run_python_script(script, [], {}, 120)
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
