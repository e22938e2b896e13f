"""Garbage collection of what killed runs left behind, across every registered kind.

Owns ``collect_all_leftovers`` (what ``agentjudge sandboxes gc`` and every run's start call) and
the collectors shared by several kinds (helper processes, Docker). Each kind names its own
collectors (``EnvironmentKind.leftover_collectors``); they run by ascending order, servers and
containers first, directories last. Docker is skipped when the engine is unreachable; an external
server is collected only when its DSN is given.
"""

from __future__ import annotations

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


def leftover_sources(dsn: str | None = None) -> list[LeftoverSource]:
    """Every collector of every registered kind, once per name, in the order they run."""
    sources = {PROCESS_LEFTOVERS.name: PROCESS_LEFTOVERS}
    for kind in all_kinds():
        for source in kind.leftover_collectors(dsn):
            sources.setdefault(source.name, source)
    return sorted(sources.values(), key=lambda source: source.order)


async def collect_all_leftovers(dsn: str | None = None) -> list[str]:
    """Remove every leftover of dead runs; also in the external server ``dsn`` when given."""
    return await collect_leftovers(
        extra=[(source.name, source.collect, source.order) for source in leftover_sources(dsn)]
    )
