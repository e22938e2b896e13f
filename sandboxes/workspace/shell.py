"""Running one shell command in a project folder, inside the dataset-code box.

A command sees a copy of the project at ``/box/project`` (its working directory), the system,
the interpreter with the runtime's packages, no network and no other host path; it runs as the
box's unprivileged user with a time limit, a cap on the size of any file it writes and a cap on
the output kept. When the caller keeps the changes, the copy replaces the project's contents
afterwards; otherwise it is thrown away with the box.

Why a copy: the box (``sandboxes.confinement``) binds every caller path read-only and gives the
command one writable folder of its own, so the project is copied into that folder at the start
and copied back at the end. Projects here are small source trees, so the two copies cost
milliseconds.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from sandboxes.confinement import WORK_MOUNT, BoxSpec, remove_tree, run_in_box
from sandboxes.filesystem.tree import charge
from sandboxes.runs import current_run

PROJECT_MOUNT = WORK_MOUNT / "project"
"""Where a command sees the project (its working directory)."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a command may run when its call names no timeout."""

MAX_TIMEOUT = 300.0
"""The longest time a call may ask for."""

OUTPUT_CHARS = 16_000
"""Characters of output a result keeps (its start and end around a note of what was cut)."""

FILE_BLOCKS = 64 * 1024
"""The largest file a command may write, in KiB (``ulimit -f``)."""

_WRAPPER = (
    'ulimit -f "$FILE_BLOCKS"; '
    'cp -R --no-dereference --preserve=mode,timestamps,links "$PROJECT_SOURCE" '
    f'{PROJECT_MOUNT} && cd {PROJECT_MOUNT} && exec /bin/bash -c "$1"'
)
"""Copies the read-only project into the work folder, then runs the command there."""


@dataclass(frozen=True)
class CommandRun:
    """How one command ended and what it printed."""

    exit_code: int | None
    """Its exit code (128 + n after signal n); None when it ran out of time."""
    timed_out: bool
    """True when the box was killed at the time limit."""
    output: str
    """Standard output and error, interleaved, capped at ``OUTPUT_CHARS``."""
    seconds: float
    """Wall time, box set-up included."""
    over_quota: int | None = None
    """When changes were to be kept but the project would have held more than its quota: what
    it would have held, in quota bytes (nothing was kept)."""

    def text(self) -> str:
        """The result as a coding agent's shell tool words it: the output, then how it ended."""
        body = self.output.rstrip("\n")
        status = "[command timed out]" if self.timed_out else f"[exit code {self.exit_code}]"
        if self.over_quota is not None:
            status += f"\n[changes not kept: the project would hold {self.over_quota} bytes]"
        return f"{body}\n{status}" if body else status


async def run_project_command(
    project: Path,
    command: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    keep_changes: bool,
    quota: int | None = None,
) -> CommandRun:
    """Run ``command`` with ``bash -c`` on a copy of ``project`` in a box; with
    ``keep_changes`` the copy, as the command left it, becomes the project's contents, unless
    it holds more than ``quota`` bytes (counted as ``sandboxes.filesystem.tree.charge`` does)."""
    project = Path(os.path.realpath(project))
    folder = current_run().directory() / current_run().new_name("shell")
    try:
        run = await run_in_box(
            BoxSpec(
                command=["/bin/bash", "-c", _WRAPPER, "workspace-shell", command],
                cwd=WORK_MOUNT,
                read_only=[project],
                environment={
                    "PROJECT_SOURCE": str(project),
                    "FILE_BLOCKS": str(FILE_BLOCKS),
                    "PYTHONDONTWRITEBYTECODE": "1",
                },
                timeout=min(max(timeout, 1.0), MAX_TIMEOUT),
                interpreter=True,
            ),
            folder=folder,
        )
        copy = folder / "work" / "project"
        over_quota = None
        if keep_changes and copy.is_dir() and not copy.is_symlink():
            held = await asyncio.to_thread(_measure, copy) if quota is not None else 0
            if quota is not None and held > quota:
                over_quota = held
            else:
                await asyncio.to_thread(_replace_contents, project, copy)
        return CommandRun(
            exit_code=run.exit_code,
            timed_out=run.timed_out,
            output=run.text(OUTPUT_CHARS),
            seconds=run.seconds,
            over_quota=over_quota,
        )
    finally:
        await asyncio.to_thread(remove_tree, folder)


def _measure(folder: Path) -> int:
    """What ``folder``'s entries count against a tree's quota."""
    total = 0
    for root, folders, files in os.walk(folder):
        total += len(folders) * charge("directory", 0)
        for name in files:
            status = os.lstat(Path(root, name))
            total += charge("file" if stat.S_ISREG(status.st_mode) else "other", status.st_size)
    return total


def _replace_contents(project: Path, copy: Path) -> None:
    """Make ``project`` hold what ``copy`` holds (symlinks stay links; modes and times kept)."""
    for entry in os.scandir(project):
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(path)
        else:
            path.unlink()
    shutil.copytree(copy, project, symlinks=True, dirs_exist_ok=True)
    if os.geteuid() == 0:  # the box user owned the copy; the project stays the runtime's
        for root, folders, files in os.walk(project):
            for name in [*folders, *files]:
                os.chown(Path(root, name), 0, 0, follow_symlinks=False)
