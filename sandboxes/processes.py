"""A process cap for a group of processes (a desktop): a pids cgroup of its own, under this
process's.

Works with cgroup v2 (the ``pids`` controller in the unified hierarchy) and with v1's ``pids``
hierarchy. A cap counts processes and threads alike; a ``fork`` or a new thread past it fails
(``EAGAIN``), and ``pids.events`` counts those refusals, which is how a step stopped by the cap is
told apart from one that failed on its own. Named like the memory cgroup beside it
(``aj_<run id>_desktop_<n>``) and noted in the owner's folder, so ``gc`` removes it after a
``kill -9``. Where none can be made (no controller, no permission), the processes run without one.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from sandboxes.memory import own_cgroup


def own_pids_cgroup() -> Path | None:
    """This process's pids cgroup folder, if one can take children."""
    own = own_cgroup("pids")
    return own[0] if own is not None else None


class ProcessCap:
    """One pids cgroup."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def create(cls, name: str, limit: int) -> ProcessCap | None:
        """A new pids cgroup ``name`` capped at ``limit`` processes and threads; None when none
        can be made here."""
        parent = own_pids_cgroup()
        if parent is None:
            return None
        folder = parent / name
        try:
            folder.mkdir()
            (folder / "pids.max").write_text(str(limit))
        except OSError:
            with contextlib.suppress(OSError):
                folder.rmdir()
            return None
        return cls(folder)

    @property
    def procs_file(self) -> Path:
        """Writing a pid here moves that process (and its future children) into the cgroup."""
        return self.folder / "cgroup.procs"

    def limit(self) -> int | None:
        """The cap (None: none, or unreadable)."""
        return read_number(self.folder / "pids.max")

    def refusals(self) -> int | None:
        """How many forks and new threads the cap refused so far (None: unknown)."""
        return refused_forks(self.folder)


def read_number(path: Path) -> int | None:
    """The integer a cgroup file holds (None: unreadable, or ``max``)."""
    try:
        return int(path.read_text())
    except (OSError, ValueError):
        return None


def refused_forks(folder: Path) -> int | None:
    """The ``max`` count of a pids cgroup's ``pids.events``: forks and threads refused."""
    try:
        lines = (folder / "pids.events").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        key, _, value = line.partition(" ")
        if key == "max" and value.strip().isdigit():
            return int(value)
    return None


def process_limit_note(limit: int | None) -> str:
    """How a step stopped by the cap is reported."""
    size = f"{limit:,} processes" if limit is not None else "its size"
    return f"stopped by the desktop's process limit ({size}): the action started more processes"
