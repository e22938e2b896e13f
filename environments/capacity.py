"""How many runs of some environment kinds this machine holds at once: ``--jobs auto``.

Each kind says what one of its runs needs (``EnvironmentKind.worker_resources``: CPUs and
memory); the machine offers the CPUs this process may use and the memory available now. Runs at
once: the smaller of CPUs over the heaviest CPU need and usable memory over the heaviest memory
need, at least 1 and at most ``MAX_AUTO_JOBS``. A desktop (0.6 CPU, 2 GiB) therefore gets 3 jobs
on a 2-core machine, where a fixed 4 started LibreOffice four times on two cores.

Sandboxes made ahead of need (``auto_ahead``; a judge grid's next desktops) are sized from what
is left beside those jobs: the memory that holds more runs of the heaviest kind, and at most one
per CPU or one per job, whichever is more: making them is the CPU's work, but jobs of equal
length (a judge grid's runs) free up together, and each then wants one ready.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable

import psutil

from environments.kind import WorkerResources

__all__ = ["MAX_AUTO_JOBS", "MEMORY_SHARE", "auto_ahead", "auto_jobs", "parse_jobs"]

MAX_AUTO_JOBS = 16
"""The most runs ``auto`` starts at once, however large the machine."""
MEMORY_SHARE = 0.8
"""The share of the available memory ``auto`` plans to use."""


def machine_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def auto_jobs(
    needs: Iterable[WorkerResources],
    *,
    cpus: int | None = None,
    memory_mb: int | None = None,
) -> int:
    """Runs at once for runs needing ``needs`` (the heaviest one counts), on a machine of
    ``cpus`` and ``memory_mb`` available (default: this one's)."""
    needs = list(needs) or [WorkerResources()]
    cpu_need = max(need.cpus for need in needs)
    memory_need = max(need.memory_mb for need in needs)
    cpus = machine_cpus() if cpus is None else cpus
    if memory_mb is None:
        memory_mb = psutil.virtual_memory().available // 2**20
    by_cpu = math.floor(cpus / cpu_need) if cpu_need > 0 else MAX_AUTO_JOBS
    by_memory = math.floor(memory_mb * MEMORY_SHARE / memory_need) if memory_need > 0 else by_cpu
    return max(1, min(by_cpu, by_memory, MAX_AUTO_JOBS))


def auto_ahead(
    needs: Iterable[WorkerResources],
    *,
    jobs: int,
    cpus: int | None = None,
    memory_mb: int | None = None,
) -> int:
    """Sandboxes to make ahead of need beside ``jobs`` runs in progress, for runs needing
    ``needs`` (the heaviest one counts), on a machine of ``cpus`` and ``memory_mb`` available
    (default: this one's): as many more as the usable memory holds beside the jobs' own, at most
    one per CPU or per job (whichever is more), and none when the memory holds no more."""
    needs = list(needs) or [WorkerResources()]
    memory_need = max(need.memory_mb for need in needs)
    cpus = machine_cpus() if cpus is None else cpus
    if memory_mb is None:
        memory_mb = psutil.virtual_memory().available // 2**20
    most = min(max(cpus, jobs), MAX_AUTO_JOBS)
    if memory_need <= 0:
        return most
    by_memory = math.floor(memory_mb * MEMORY_SHARE / memory_need) - jobs
    return max(0, min(by_memory, most))


def parse_jobs(value: str) -> int | None:
    """``auto`` as None, else a positive number of jobs; ``ValueError`` names the value."""
    if value.strip().lower() == "auto":
        return None
    try:
        jobs = int(value)
    except ValueError:
        raise ValueError(f"--jobs must be a number or 'auto', not {value!r}") from None
    if jobs < 1:
        raise ValueError(f"--jobs must be at least 1, not {jobs}")
    return jobs
