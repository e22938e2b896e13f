"""Choosing sandbox backends for a run, and starting their providers only when needed."""

from __future__ import annotations

import asyncio
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict

from dataset.models import Task
from sandboxes.base import Releasable, SandboxError, SandboxProvider

FilesystemBackend = Literal["local", "docker"]
PostgresBackend = Literal["embedded", "external", "docker"]

KIND_BY_SUBDOMAIN: dict[tuple[str, str], str] = {
    ("ds", "filesystem"): "filesystem",
    ("ds", "postgres"): "postgres",
}
"""The sandbox kind each (domain, subdomain) replays into; absent pairs have no replay yet."""


def sandbox_kind(task: Task) -> str | None:
    """The kind of sandbox a task needs, or None when no sandbox kind serves it yet."""
    return KIND_BY_SUBDOMAIN.get((task.domain, task.subdomain))


class BackendChoice(BaseModel):
    """Which backend each sandbox kind uses in a run."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    filesystem: FilesystemBackend = "local"
    """``local``: a private host directory; ``docker``: a container with the tree inside."""
    postgres: PostgresBackend = "embedded"
    """``embedded``: a server from the pgserver wheel; ``external``: ``postgres_dsn``; ``docker``:
    a Postgres container."""
    postgres_dsn: str | None = None
    """The server to use with the ``external`` backend (a superuser or CREATEDB+CREATEROLE)."""

    @classmethod
    def for_backend(cls, backend: Literal["local", "docker"], dsn: str | None = None) -> Self:
        """The command line's ``--backend``: ``local`` (local + embedded, or external when a DSN
        is given) or ``docker`` (both kinds in containers)."""
        if backend == "docker":
            return cls(filesystem="docker", postgres="docker")
        return cls(postgres="external" if dsn else "embedded", postgres_dsn=dsn)

    def label(self, kind: str) -> str:
        """The backend name used for ``kind`` (for reports)."""
        return self.filesystem if kind == "filesystem" else self.postgres


class ProviderSet(Releasable):
    """One provider per sandbox kind, started on first use and closed together."""

    def __init__(self, choice: BackendChoice | None = None) -> None:
        self.choice = choice or BackendChoice()
        self._providers: dict[str, SandboxProvider] = {}
        self._lock = asyncio.Lock()

    async def get(self, kind: str) -> SandboxProvider:
        """The provider for ``kind``, starting it (and its server or image) if needed."""
        async with self._lock:
            if kind not in self._providers:
                self._providers[kind] = await self._start(kind)
            return self._providers[kind]

    async def _start(self, kind: str) -> SandboxProvider:
        if self.choice.label(kind) == "docker":
            from sandboxes.docker.images import ensure_sandbox_image_async

            await ensure_sandbox_image_async()  # builds it once (minutes), then cached by tag
        if kind == "filesystem":
            if self.choice.filesystem == "docker":
                from sandboxes.filesystem.docker import DockerFilesystemProvider

                return DockerFilesystemProvider()
            from sandboxes.filesystem.local import LocalFilesystemProvider

            return LocalFilesystemProvider()
        if kind == "postgres":
            from sandboxes.postgres.provider import ClusterPostgresProvider
            from sandboxes.postgres.sandbox import PostgresCluster

            cluster: PostgresCluster
            if self.choice.postgres == "docker":
                from sandboxes.postgres.docker_cluster import DockerPostgresCluster

                cluster = DockerPostgresCluster()
            elif self.choice.postgres == "external":
                from sandboxes.postgres.external import ExternalPostgresCluster

                if not self.choice.postgres_dsn:
                    raise SandboxError("the external Postgres backend needs a DSN (--dsn)")
                cluster = ExternalPostgresCluster(self.choice.postgres_dsn)
            else:
                from sandboxes.postgres.embedded import EmbeddedPostgresCluster

                cluster = EmbeddedPostgresCluster()
            await cluster.start()
            return ClusterPostgresProvider(cluster)
        raise SandboxError(f"no sandbox kind {kind!r}")

    async def aclose(self) -> None:
        """Close every started provider (destroying what it still holds), then stop clusters."""
        errors: list[BaseException] = []
        for provider in list(self._providers.values()):
            try:
                await provider.aclose()
            except Exception as error:  # closing the others matters more than the first error
                errors.append(error)
            cluster = getattr(provider, "cluster", None)
            if cluster is not None:
                try:
                    await cluster.stop()
                except Exception as error:
                    errors.append(error)
        self._providers.clear()
        if errors:
            raise SandboxError("; ".join(str(error) for error in errors))

    async def release(self) -> None:
        await self.aclose()
