"""A memory cap for a group of processes (a desktop, a browser): a memory cgroup of its own, under
this process's cgroup.

Works with cgroup v2 (``memory.max``, ``memory.peak``) and with v1's memory controller
(``memory.limit_in_bytes``, ``memory.max_usage_in_bytes``). The cgroup is named like every other
resource of the run (``aj_<run id>_desktop_<n>``, ``aj_<run id>_browser_<n>``) and its path is
written into the owner's folder, so ``gc`` finds and removes it after a ``kill -9``. Where no
cgroup can be made (no memory controller, no permission), the processes run without a cap and
say so.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
"""Where the cgroup file systems are mounted."""


def own_cgroup(controller: str) -> tuple[Path, int] | None:
    """This process's cgroup folder for ``controller`` (``memory``, ``pids`` …) and the cgroup
    version, if one can take children."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    if (CGROUP_ROOT / "cgroup.controllers").exists():  # v2 only (unified)
        for line in lines:
            if line.startswith("0::"):
                folder = CGROUP_ROOT / line[3:].lstrip("/")
                with contextlib.suppress(OSError):
                    if controller in (folder / "cgroup.controllers").read_text().split():
                        return folder, 2
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            folder = CGROUP_ROOT / controller / path.lstrip("/")
            if folder.is_dir():
                return folder, 1
    return None


def own_memory_cgroup() -> tuple[Path, int] | None:
    """This process's memory cgroup folder and the cgroup version, if one can take children."""
    return own_cgroup("memory")


class MemoryCap:
    """One memory cgroup (a desktop's, a browser's)."""

    def __init__(self, folder: Path, version: int) -> None:
        self.folder = folder
        self.version = version

    @classmethod
    def create(cls, name: str, limit_bytes: int) -> MemoryCap | None:
        """A new cgroup ``name`` capped at ``limit_bytes``; None when none can be made here."""
        own = own_memory_cgroup()
        if own is None:
            return None
        parent, version = own
        folder = parent / name
        try:
            folder.mkdir()
            limit_file = "memory.max" if version == 2 else "memory.limit_in_bytes"
            (folder / limit_file).write_text(str(limit_bytes))
            if version == 2:
                with contextlib.suppress(OSError):
                    (folder / "memory.swap.max").write_text("0")
        except OSError:
            with contextlib.suppress(OSError):
                folder.rmdir()
            return None
        return cls(folder, version)

    def child(self, name: str, limit_bytes: int | None = None) -> MemoryCap | None:
        """A cgroup ``name`` inside this one, capped at ``limit_bytes`` (None: only this one's
        cap applies); None when none can be made. Its processes count towards this cgroup's cap
        too. On cgroup v2 processes may then live only in children (the kernel's rule for a
        cgroup that hands controllers down): put them in a child from the start."""
        folder = self.folder / name
        try:
            if self.version == 2:
                controls = self.folder / "cgroup.subtree_control"
                if "memory" not in controls.read_text().split():
                    controls.write_text("+memory")
            folder.mkdir()
            if limit_bytes is not None:
                limit_file = "memory.max" if self.version == 2 else "memory.limit_in_bytes"
                (folder / limit_file).write_text(str(limit_bytes))
                if self.version == 2:
                    with contextlib.suppress(OSError):
                        (folder / "memory.swap.max").write_text("0")
        except OSError:
            with contextlib.suppress(OSError):
                folder.rmdir()
            return None
        return MemoryCap(folder, self.version)

    def add(self, pid: int) -> bool:
        """Move process ``pid`` (all its threads) into this cgroup; whether it moved. Memory it
        already holds stays counted where it was; what it allocates from now on counts here."""
        try:
            self.procs_file.write_text(str(pid))
        except OSError:
            return False
        return True

    def pids(self) -> list[int]:
        """The processes in this cgroup (not in its children)."""
        try:
            return [int(pid) for pid in self.procs_file.read_text().split()]
        except (OSError, ValueError):
            return []

    @property
    def procs_file(self) -> Path:
        """Writing a pid here moves that process (and its future children) into the cgroup."""
        return self.folder / "cgroup.procs"

    def peak_bytes(self) -> int | None:
        """The most memory the cgroup's processes used at once."""
        return self._number("memory.peak" if self.version == 2 else "memory.max_usage_in_bytes")

    def oom_kills(self) -> int | None:
        """How many processes the cap's out-of-memory killer ended so far (None: unknown)."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            lines = (self.folder / name).read_text().splitlines()
        except OSError:
            return None
        for line in lines:
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return None

    def limit_bytes(self) -> int | None:
        """The cap, in bytes."""
        return self._number("memory.max" if self.version == 2 else "memory.limit_in_bytes")

    def _number(self, name: str) -> int | None:
        try:
            return int((self.folder / name).read_text())
        except (OSError, ValueError):
            return None

    def remove(self, *, wait_seconds: float = 5.0) -> None:
        """Kill whatever still runs in the cgroup and remove it."""
        remove_cgroup(self.folder, wait_seconds=wait_seconds)


def remove_cgroup(folder: Path, *, wait_seconds: float = 5.0) -> bool:
    """Kill the processes of the cgroup ``folder`` and of the cgroups inside it, then remove them
    all; True when it is gone."""
    deadline = time.monotonic() + wait_seconds
    with contextlib.suppress(OSError):
        for inner in sorted(path for path in folder.iterdir() if path.is_dir()):
            if not inner.is_symlink():
                remove_cgroup(inner, wait_seconds=max(deadline - time.monotonic(), 0.1))
    while True:
        try:
            pids = [int(pid) for pid in (folder / "cgroup.procs").read_text().split()]
        except FileNotFoundError:
            return True
        except (OSError, ValueError):
            pids = []
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, 9)
        try:
            folder.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
