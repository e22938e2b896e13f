"""Where a judge grid's runs are made: the ``GridExecutor`` extension point and its registry.

An executor takes the runs a grid still has to make (``storage.jobs.Job`` of
``bench.grid_runner.PlannedRun``) and hands each finished run's record to the results file,
which only the driver process writes: the same keys, files and resume behaviour whichever
executor made the runs. ``local`` (the default, ``bench.grid_runner.LocalExecutor``) makes them
in this process; ``ray`` (``bench.ray_executor.RayExecutor``, the optional ``ray`` extra) makes
them on the workers of a Ray cluster.

Executors are registered by name with ``module:attr`` targets imported on first use, so choosing
``local`` never imports Ray; an installed package adds one through the entry-point group
``agentjudge.executors`` (``name = "package.module:ExecutorClass"``). A target is called with the
executor's options (``address`` for ``ray``) and must satisfy ``GridExecutor``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any, Protocol

from judge_agent.plugins import register_entry_points

if TYPE_CHECKING:
    from bench.grid_runner import GridWork, JudgeRecord, PlannedRun
    from judge_agent.model import ModelAPI
    from storage.jobs import Job, JobResults, ResumableJobs

__all__ = [
    "DEFAULT_EXECUTOR",
    "ENTRY_POINT_GROUP",
    "ExecutorError",
    "GridExecutor",
    "executor_names",
    "make_executor",
    "register_executor",
]

DEFAULT_EXECUTOR = "local"
"""The executor a grid uses unless told otherwise."""

ENTRY_POINT_GROUP = "agentjudge.executors"
"""The entry-point group through which installed packages register executors."""


class ExecutorError(RuntimeError):
    """An executor could not make runs at all (its cluster unreachable, no worker starting);
    the records that did land stay in the results file."""


class GridExecutor(Protocol):
    """Makes a grid's pending runs and hands every record to the driver's results file."""

    name: str
    """The executor's registered name (``local``, ``ray``)."""

    async def run(
        self,
        work: GridWork,
        models: Sequence[ModelAPI],
        jobs: Sequence[Job[PlannedRun]],
        results_file: ResumableJobs[JudgeRecord],
        *,
        on_result: Callable[[JudgeRecord], None] | None = None,
    ) -> JobResults[PlannedRun, JudgeRecord]:
        """Make every run of ``jobs`` (at most ``work.jobs`` at once, model calls bounded by
        ``work.max_connections`` across all of them), append each record to ``results_file``
        exactly once as it arrives (its log written under ``work.output`` first) and call
        ``on_result`` with it. ``models`` are the arms' models the driver built (in arm order);
        an executor that makes runs elsewhere builds its own from ``work.arms``. A run that
        cannot be made is a ``JobCrash`` in the result, not an exception."""
        ...


_BUILT_IN: dict[str, str] = {
    "local": "bench.grid_runner:LocalExecutor",
    "ray": "bench.ray_executor:RayExecutor",
}
"""The executors that ship with the runtime, as ``module:attr``."""

_REGISTRY: dict[str, str | Callable[..., GridExecutor]] = dict(_BUILT_IN)
_entry_points_read = False


def register_executor(
    name: str, target: str | Callable[..., GridExecutor], *, replace: bool = False
) -> None:
    """Register the executor ``name``: a class (or factory), or ``module:attr`` to import on
    first use. A taken name is refused unless ``replace``."""
    if not name or not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"executor name {name!r}: use letters, digits, '-' and '_'")
    if isinstance(target, str) and ":" not in target:
        raise ValueError(f"executor {name!r}: target {target!r} is not module:attr")
    if name in _REGISTRY and not replace:
        raise ValueError(f"executor {name!r} is already registered")
    _REGISTRY[name] = target


def _read_entry_points() -> None:
    global _entry_points_read  # noqa: PLW0603 - one scan per process, recorded here
    if _entry_points_read:
        return
    _entry_points_read = True

    def register(entry: EntryPoint) -> None:
        if entry.name not in _REGISTRY:
            register_executor(entry.name, entry.value)

    register_entry_points(
        entry_points(group=ENTRY_POINT_GROUP), what="grid executor", register=register
    )


def executor_names() -> tuple[str, ...]:
    """The registered executors' names, sorted."""
    _read_entry_points()
    return tuple(sorted(_REGISTRY))


def make_executor(name: str = DEFAULT_EXECUTOR, **options: Any) -> GridExecutor:
    """The executor ``name`` built with ``options``. Raises ``ValueError`` for an unknown name
    and ``ImportError`` (saying what to install) when its package is missing."""
    _read_entry_points()
    target = _REGISTRY.get(name)
    if target is None:
        raise ValueError(f"unknown executor {name!r} (known: {', '.join(executor_names())})")
    if isinstance(target, str):
        module_name, _, attribute = target.partition(":")
        target = getattr(importlib.import_module(module_name), attribute)
    executor: GridExecutor = target(**options)
    return executor
