"""Garbage collection of everything killed runs left behind, across all sandbox backends.

Collectors run servers and containers first, plain directories last. Docker is skipped when the
engine is unreachable; an external Postgres server is collected only when its DSN is given.
"""

from __future__ import annotations

from sandboxes.postgres.sandbox import PostgresConnectionInfo
from sandboxes.runs import collect_leftovers, collect_processes, register_collector


async def _docker() -> list[str]:
    from sandboxes.docker.leftovers import collect_docker_leftovers

    return await collect_docker_leftovers()  # answers [] when no engine is reachable


async def _embedded() -> list[str]:
    from sandboxes.postgres.leftovers import collect_embedded_leftovers

    return await collect_embedded_leftovers()


async def _directories() -> list[str]:
    from sandboxes.filesystem.local import collect_local_leftovers

    return await collect_local_leftovers()


def register_default_collectors() -> None:
    """Register the collectors of every backend that needs no configuration."""
    register_collector("processes", collect_processes, order=5)
    register_collector("docker", _docker, order=10)
    register_collector("embedded-postgres", _embedded, order=20)
    register_collector("directories", _directories, order=900)


async def collect_all_leftovers(external_dsn: str | None = None) -> list[str]:
    """Remove every leftover of dead runs; also in an external Postgres server when given."""
    register_default_collectors()
    removed: list[str] = []
    if external_dsn:
        from sandboxes.postgres.external import ExternalPostgresCluster
        from sandboxes.postgres.leftovers import collect_postgres_leftovers

        admin: PostgresConnectionInfo = ExternalPostgresCluster(external_dsn).admin
        removed.extend(await collect_postgres_leftovers(admin))
    removed.extend(await collect_leftovers())
    return removed
