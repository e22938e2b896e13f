"""A throwaway Postgres server of one sandbox's own, for recorded steps that need the superuser.

An agent recorded as the server's superuser may have switched to it (``SET ROLE postgres``). A
superuser session runs programs and reads files as the server's operating-system user
(``COPY ... PROGRAM``, ``pg_read_file``) and reaches every database of its server, so such a
step never runs in a server that other sandboxes share or that runs on the host.

``move_to_private_server`` rebuilds a live, unused sandbox from its task in a server of its own:
an isolated Docker container (``DockerPostgresCluster(isolated=True)``: no network, every
capability dropped, reached through its Unix socket) holding nothing but that sandbox's
template and database. There the sandbox role may ``SET ROLE`` to the superusers the recording
switched to (``postgres``; Supabase's ``supabase_admin`` is made as a superuser there), so the
steps replay as recorded; whatever they run stays inside the container. The sandbox object keeps
its identity, so snapshots, clones, verifier relays and judge servers made from it afterwards are
all in that server. The server is removed when its last sandbox and snapshot are destroyed, and
with the provider the sandbox came from at the latest.

The judges' read-only views still connect as their reader role, which is no superuser and reads
with ``default_transaction_read_only``; a judge's writable clone gets a sandbox role of its own,
no superuser either (the attribute is not inherited through its lineage).
"""

from __future__ import annotations

from collections.abc import Iterable

from sandboxes.base import SandboxError
from sandboxes.postgres import admin
from sandboxes.postgres.docker_cluster import DockerPostgresCluster
from sandboxes.postgres.provider import ClusterPostgresProvider, ClusterPostgresSandbox

DOCKER_ONLY = (
    "a superuser session can run programs and read files on its server's machine and reach "
    "every database of that server; only the docker backend gives a trajectory a throwaway "
    "server of its own with no network (replay with --backend docker)"
)
"""Why a recorded superuser step is refused outside a private server."""


class PrivateServerProvider(ClusterPostgresProvider):
    """The provider of one sandbox's throwaway server; it removes the server with its last
    sandbox and snapshot."""

    private = True

    def __init__(
        self, cluster: DockerPostgresCluster, parent: ClusterPostgresProvider, **options: float
    ) -> None:
        super().__init__(cluster, **options)  # type: ignore[arg-type]
        self._parent = parent
        self._stopping = False

    async def new_sandbox(self, template: str) -> ClusterPostgresSandbox:
        """A writable sandbox as any provider makes it, whose role is a superuser: the recorded
        agent was one, and the replay, its verifier and writable clones (a judge's, a
        verifier's on a frozen state) must reach what it made as ``postgres``. Read-only views
        keep their plain reader role."""
        sandbox = await super().new_sandbox(template)
        owner = admin.quote_ident((await sandbox.owner_connection()).user)
        try:
            async with self.admin_pool.connection() as conn:
                await conn.execute(f"ALTER ROLE {owner} SUPERUSER")
        except BaseException:
            await sandbox.destroy()
            raise
        return sandbox

    async def released(self) -> None:
        """Close and remove the server once nothing of it is left."""
        if not self._stopping and not self.sandboxes and not self.snapshots:
            await self.aclose()

    async def aclose(self) -> None:
        """Close as any provider, then remove the container (whatever closing found)."""
        if self._stopping:
            return
        self._stopping = True
        self._parent.private_servers.discard(self)
        try:
            await super().aclose()
        finally:
            await self.cluster.stop()


async def move_to_private_server(
    sandbox: ClusterPostgresSandbox, superusers: Iterable[str]
) -> None:
    """Rebuild ``sandbox`` (live, made by its provider's ``create``, no step run yet) from its
    task in a throwaway server of its own, where its role is a superuser and each of
    ``superusers`` exists. Raises ``SandboxError`` saying why when it cannot (not on the docker
    backend, no task to rebuild from, the server did not start)."""
    if sandbox.on_private_server:
        return
    parent = sandbox.provider
    if not isinstance(parent.cluster, DockerPostgresCluster):
        backend = parent.cluster.backend
        raise SandboxError(f"this replay runs on the {backend} backend: {DOCKER_ONLY}")
    if sandbox.origin is None:
        raise SandboxError(
            f"postgres sandbox {sandbox.name} is a copy of a snapshot, not a task's start: it"
            " cannot be rebuilt in a server of its own"
        )
    task, task_dir = sandbox.origin
    cluster = DockerPostgresCluster(parent.cluster.image, isolated=True)
    private = PrivateServerProvider(cluster, parent, seed_timeout=parent.seed_timeout)
    parent.private_servers.add(private)
    try:
        await cluster.start()
        fresh = await private.create(task, task_dir)
        async with private.admin_pool.connection() as conn:
            for name in dict.fromkeys(superusers):
                if not await conn.fetchval("SELECT 1 FROM pg_roles WHERE rolname = $1", name):
                    await conn.execute(f"CREATE ROLE {admin.quote_ident(name)} SUPERUSER NOLOGIN")
        await sandbox.take_over(fresh)
    except BaseException:
        await private.aclose()
        raise
