"""Running the shell blocks of a documentation page as a user would, in a copy of the project.

A page's fenced ``bash`` blocks are run in order, each as its own ``bash -e -o pipefail`` script,
from the root of a scratch copy of the repository (every top-level entry linked, ``runs/`` fresh,
``../shared`` beside it when the real one exists), so what the commands write never reaches the
checkout. A block that exits non-zero is a failure naming the page, the block's first line and
the end of its output.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
DOCS = REPOSITORY / "docs"
SHARED = REPOSITORY.parent / "shared"
"""The sample data the bring-your-own-data pages use, as ``../shared`` from the project's root."""

FENCE = re.compile(r"^```(bash|sh|shell)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)

NOT_LINKED = {".git", "runs", "site", "test-output", "pyproject.toml", "__pycache__"}
"""Entries of the repository the copy does not link: what the commands write, and
``pyproject.toml``, which is copied (see ``project_copy``)."""

BLOCK_TIMEOUT = 900
"""Seconds one block may take (the getting-started replay of the DS suite is the longest)."""


@dataclass(frozen=True)
class ShellBlock:
    """One fenced shell block of a page."""

    page: Path
    line: int
    """The line of the block's first command in the page (1-based)."""
    code: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPOSITORY)}:{self.line}"


@dataclass(frozen=True)
class BlockFailure:
    """A block that did not run: where it is, its exit code and the end of its output."""

    block: ShellBlock
    returncode: int
    output: str

    def __str__(self) -> str:
        tail = "\n".join(self.output.splitlines()[-30:])
        header = f"{self.block.where}: exit code {self.returncode}"
        return f"{header}\n{self.block.code}\n--- output:\n{tail}"


def shell_blocks(page: Path, text: str | None = None) -> list[ShellBlock]:
    """The page's shell blocks in order (``text`` instead of the file's, for planted pages)."""
    text = page.read_text(encoding="utf-8") if text is None else text
    return [
        ShellBlock(page, text.count("\n", 0, match.start(2)) + 1, match.group(2))
        for match in FENCE.finditer(text)
    ]


def project_copy(root: Path) -> Path:
    """A scratch project under ``root`` in which the docs' commands can run.

    ``pyproject.toml`` is copied with an old modification time: the Makefile reinstalls the
    virtualenv when it is newer than the install stamp, and a reinstall from the scratch copy
    would point the shared virtualenv's editable install at it.
    """
    project = root / "project"
    project.mkdir()
    for entry in REPOSITORY.iterdir():
        if entry.name not in NOT_LINKED:
            (project / entry.name).symlink_to(entry)
    shutil.copy(REPOSITORY / "pyproject.toml", project / "pyproject.toml")
    os.utime(project / "pyproject.toml", (0, 0))
    if SHARED.is_dir():
        (root / "shared").symlink_to(SHARED)
    return project


def block_environment() -> dict[str, str]:
    """The caller's environment without what a surrounding ``make`` passes down."""
    environment = dict(os.environ)
    for name in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        environment.pop(name, None)
    environment["PYTHONPATH"] = os.pathsep.join(
        part for part in (str(REPOSITORY), environment.get("PYTHONPATH", "")) if part
    )
    return environment


def run_blocks(blocks: list[ShellBlock], project: Path) -> list[BlockFailure]:
    """Run every block in order from ``project``; the failures, each with its output."""
    failures = []
    for block in blocks:
        completed = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", block.code],
            cwd=project,
            env=block_environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=BLOCK_TIMEOUT,
            check=False,
        )
        if completed.returncode != 0:
            failures.append(BlockFailure(block, completed.returncode, completed.stdout))
    return failures
