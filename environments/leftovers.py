"""Garbage collection of what killed runs left behind, across every registered kind.

Owns ``collect_all_leftovers`` (what ``agentjudge sandboxes gc`` and every run's start call) and
the collectors shared by several kinds (helper processes, Docker). Each kind names its own
collectors (``EnvironmentKind.leftover_collectors``); they run by ascending order, servers and
containers first, directories last. Docker is skipped when the engine is unreachable; an existing
server a kind connects to is collected only when the run gives its endpoint.
"""

from __future__ import annotations

from collections.abc import Mapping

from environments.kind import LeftoverSource
from environments.registry import all_kinds
from sandboxes.runs import collect_leftovers, collect_processes


async def _docker() -> list[str]:
    from sandboxes.docker.leftovers import collect_docker_leftovers

    return await collect_docker_leftovers()  # answers [] when no engine is reachable


PROCESS_LEFTOVERS = LeftoverSource("processes", collect_processes, order=5)
"""Helper processes (verifiers, servers) of dead runs, killed before anything else."""

DOCKER_LEFTOVERS = LeftoverSource("docker", _docker, order=10)
"""Containers and images labelled with a dead run, for every kind with a Docker backend."""


def leftover_sources(endpoints: Mapping[str, str] | None = None) -> list[LeftoverSource]:
    """Every collector of every registered kind, once per name, in the order they run; each
    kind is given its endpoint from ``endpoints`` (``BackendChoice.endpoints``), if any."""
    sources = {PROCESS_LEFTOVERS.name: PROCESS_LEFTOVERS}
    for kind in all_kinds():
        for source in kind.leftover_collectors((endpoints or {}).get(kind.name)):
            sources.setdefault(source.name, source)
    return sorted(sources.values(), key=lambda source: source.order)


async def collect_all_leftovers(endpoints: Mapping[str, str] | None = None) -> list[str]:
    """Remove every leftover of dead runs; also in the existing servers of ``endpoints`` (by
    kind name, checked as ``BackendChoice.endpoints`` are)."""
    sources = leftover_sources(endpoints)
    return await collect_leftovers(
        extra=[(source.name, source.collect, source.order) for source in sources]
    )
