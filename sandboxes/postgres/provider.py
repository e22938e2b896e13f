"""Postgres sandboxes in any ``PostgresCluster``: a template database per task, one database each.

Owns the database lifecycle: creating a sandbox from its task's template, cloning sandboxes from
a snapshot (``CREATE DATABASE ... TEMPLATE ... STRATEGY FILE_COPY``), freezing a sandbox into a
snapshot (its database becomes a template), the shared read-only view of a snapshot, the
sandboxes' connections, and closing everything. Building templates from seeds is
``sandboxes.postgres.seeding``; the roles (seed, sandbox and reader roles, and those dataset code
creates) are ``sandboxes.postgres.roles``. Every database and role is named ``aj_<run id>_...``
and carries an ownership comment so that ``sandboxes.postgres.leftovers`` can collect them after a
crash.

Everything dataset-driven runs as a role of the sandbox, never as the cluster's administrator:
a writable sandbox's connections (replayed calls, the judges' writable SQL server, verifiers
through ``owner_connection``) are its sandbox role's, which owns the sandbox's database while it
is live; a read-only view's are its reader's. The administrator only makes, seals, clones and
drops databases and roles. A sealed database (a template or a snapshot) belongs to the
administrator and its role logs in no more.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import asyncpg

from dataset.models import SqlSeedState, Task
from sandboxes.base import SandboxError
from sandboxes.postgres import admin
from sandboxes.postgres.admin import CLOSE_TIMEOUT, as_sandbox_error
from sandboxes.postgres.preparation import collation_clause
from sandboxes.postgres.roles import SandboxRoles
from sandboxes.postgres.sandbox import (
    PostgresCluster,
    PostgresConnectionInfo,
    PostgresProvider,
    PostgresSandbox,
    PostgresSnapshot,
)
from sandboxes.postgres.seeding import DEFAULT_SEED_TIMEOUT, TaskTemplates
from sandboxes.runs import current_run


class ClusterPostgresSandbox(PostgresSandbox):
    """One database of the cluster: a writable sandbox, or the read-only view of a snapshot."""

    def __init__(
        self,
        provider: ClusterPostgresProvider,
        database: str,
        connection: PostgresConnectionInfo,
        *,
        role: PostgresConnectionInfo,
        view_of: ClusterPostgresSnapshot | None = None,
    ) -> None:
        """``connection``: a writable sandbox's administrator (the runtime's own work, never
        handed to dataset code or judges), a view's reader; ``role``: the role every ``connect``
        uses, the sandbox role of a writable sandbox or the reader of a view."""
        self.name = database
        self.connection = connection
        self.read_only = view_of is not None
        self.origin: tuple[Task, Path] | None = None
        """The task and folder a sandbox made by ``create`` started from (None for copies of a
        snapshot): what a move to a server of its own rebuilds (``sandboxes.postgres.private``)."""
        self._provider = provider
        self._role = role
        self._state: Literal["live", "freezing", "frozen", "destroying", "destroyed"] = "live"
        self._pool: Any = None
        self._pool_lock = asyncio.Lock()

    def __repr__(self) -> str:
        kind = "view" if self.read_only else "sandbox"
        return f"<postgres {kind} {self.name} ({self._state})>"

    def _check_live(self) -> None:
        if self._state != "live":
            raise SandboxError(f"postgres sandbox {self.name} is {self._state}")

    @property
    def role(self) -> PostgresConnectionInfo:
        """The role every ``connect`` uses: the sandbox role, or the view's reader."""
        return self._role

    @property
    def provider(self) -> ClusterPostgresProvider:
        """The provider whose server holds this database."""
        return self._provider

    @property
    def on_private_server(self) -> bool:
        """Whether the database lives in a throwaway server of its own (no network, nothing
        else in it), where recorded superuser steps may run (``sandboxes.postgres.private``)."""
        return self._provider.private

    async def take_over(self, fresh: ClusterPostgresSandbox) -> None:
        """Become ``fresh`` (a live sandbox of another provider, unused): this sandbox's own
        database and roles are dropped, and its connections go to ``fresh``'s database from
        now on; ``fresh`` itself is spent. The object stays, so whoever holds it keeps it."""
        self._check_live()
        if self.read_only or fresh.read_only:
            raise SandboxError(f"postgres view {self.name} cannot move")
        old = self._provider
        await self.close_connections()
        await old.drop_database(self.name)
        old.sandboxes.discard(self)
        fresh._state = "destroyed"  # its database is this sandbox's now
        fresh._provider.sandboxes.discard(fresh)
        self._provider, self.name = fresh._provider, fresh.name
        self.connection, self._role = fresh.connection, fresh._role
        self._provider.sandboxes.add(self)

    @property
    def server_version(self) -> int:
        """The server's ``server_version_num``."""
        return self._provider.version

    def stand_ins(self) -> dict[str, str]:
        """The seed role and the sandbox roles of this database's lineage, which own what an
        agent recorded as the administrator owned: each stands in for the administrator."""
        administrator = self._provider.cluster.admin.user
        return dict.fromkeys(self._provider.roles.lineage(self.name), administrator)

    async def _ensure_pool(self) -> Any:
        async with self._pool_lock:
            self._check_live()
            if self._pool is None:
                self._pool = await admin.session_pool(
                    self._provider.pool_size, **admin.connect_arguments(self._role)
                )
            return self._pool

    async def close_connections(self) -> None:
        """Close the pooled connections (cut them after ``CLOSE_TIMEOUT``)."""
        async with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            await admin.close_pool(pool, CLOSE_TIMEOUT)

    async def owner_connection(self) -> PostgresConnectionInfo:
        """How to connect to this sandbox as its sandbox role (made with the sandbox).

        The role is no superuser and has no CREATEDB, REPLICATION or BYPASSRLS; it may create
        roles (PostgreSQL 16+, see ``sandboxes.postgres.roles``), connect to this database only,
        and owns it: through its lineage it can read, change and drop every object the seed and
        earlier sandboxes put there, and nothing else. It is dropped with the sandbox (or with
        the snapshot it is frozen into). Writable sandboxes only.
        """
        if self.read_only:
            raise SandboxError(f"postgres view {self.name} is read-only and has no owner role")
        self._check_live()
        return self._role

    def connect_as_owner(self) -> AbstractAsyncContextManager[asyncpg.Connection]:
        """The same as ``connect``: a writable sandbox's connections are its sandbox role's."""
        if self.read_only:
            raise SandboxError(f"postgres view {self.name} is read-only and has no owner role")
        return self.connect()

    @asynccontextmanager
    async def connect(self, statement: str | None = None) -> AsyncIterator[asyncpg.Connection]:
        """A fresh-session autocommit connection as the sandbox's role (see
        ``PostgresSandbox.connect``).

        Roles created through it need no bookkeeping here: Postgres records their creator, and
        they are dropped with it (``sandboxes.postgres.roles``).
        """
        pool = await self._ensure_pool()
        async with pool.acquire() as conn:
            try:
                yield conn
            finally:
                await _end_transaction(conn)

    async def freeze(self) -> ClusterPostgresSnapshot:
        """Make this database the snapshot's template; this sandbox is consumed."""
        if self.read_only:
            raise SandboxError(f"postgres view {self.name} is read-only and cannot be frozen")
        self._check_live()
        self._state = "freezing"  # refuses new connections from here on
        try:
            with as_sandbox_error(f"cannot freeze postgres sandbox {self.name}"):
                await self.close_connections()
                await self._provider.seal(self.name)
                await self._provider.roles.retire(self._role.user)
        except BaseException:
            self._state = "live"
            raise
        snapshot = ClusterPostgresSnapshot(self._provider, self.name)
        self._state = "frozen"
        self._provider.sandboxes.discard(self)
        self._provider.snapshots.add(snapshot)
        return snapshot

    async def destroy(self) -> None:
        """Drop the database and the roles it created. A view is left to its snapshot."""
        if self.read_only or self._state in ("frozen", "destroyed"):
            return
        self._state = "destroying"  # stays so when the drop fails: a later call retries
        with as_sandbox_error(f"cannot destroy postgres sandbox {self.name}"):
            await self.close_connections()
            await self._provider.drop_database(self.name)
        self._state = "destroyed"
        self._provider.sandboxes.discard(self)
        await self._provider.released()

    async def _destroy_view(self) -> None:
        self._state = "destroying"
        await self.close_connections()
        await self._provider.drop_database(self.name)
        self._state = "destroyed"


async def _end_transaction(conn: asyncpg.Connection) -> None:
    # MCPMark commits each call on its own: a transaction left open by the caller is dropped.
    try:
        if conn.is_closed() or not conn.is_in_transaction():
            return
    except asyncpg.InterfaceError:  # terminated by the caller: already handed back to the pool
        return
    with contextlib.suppress(asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
        await conn.execute("ROLLBACK")


class ClusterPostgresSnapshot(PostgresSnapshot):
    """A frozen sandbox: a template database nobody may connect to."""

    def __init__(self, provider: ClusterPostgresProvider, template: str) -> None:
        self.name = template
        self._provider = provider
        self._view: ClusterPostgresSandbox | None = None
        self._view_lock = asyncio.Lock()
        self._destroyed = False

    def __repr__(self) -> str:
        return f"<postgres snapshot {self.name}{' (destroyed)' if self._destroyed else ''}>"

    async def clone(self, *, writable: bool = True) -> ClusterPostgresSandbox:
        """A private writable copy, or the snapshot's one shared read-only view."""
        if self._destroyed:
            raise SandboxError(f"postgres snapshot {self.name} is destroyed")
        with as_sandbox_error(f"cannot clone postgres snapshot {self.name}"):
            if writable:
                return await self._provider.new_sandbox(self.name)
            async with self._view_lock:
                if self._view is None:
                    self._view = await self._provider.new_view(self)
                return self._view

    async def destroy(self) -> None:
        """Drop the shared view, the template and the roles it needs. Safe to call twice."""
        if self._destroyed:
            return
        with as_sandbox_error(f"cannot destroy postgres snapshot {self.name}"):
            async with self._view_lock:
                if self._view is not None:
                    await self._view._destroy_view()
                    self._view = None
            await self._provider.drop_database(self.name)
        self._destroyed = True
        self._provider.snapshots.discard(self)
        await self._provider.released()


class ClusterPostgresProvider(PostgresProvider):
    """Creates Postgres sandboxes as databases of one cluster (embedded, external or Docker)."""

    private = False
    """Whether the cluster is a throwaway server of one sandbox's own
    (``sandboxes.postgres.private``)."""

    def __init__(
        self,
        cluster: PostgresCluster,
        *,
        seed_timeout: float = DEFAULT_SEED_TIMEOUT,
        pool_size: int = 4,
    ) -> None:
        """``cluster`` must be started; ``seed_timeout`` bounds one seed run in seconds."""
        if not seed_timeout > 0:
            raise ValueError(f"seed_timeout must be a positive number of seconds: {seed_timeout}")
        self.cluster = cluster
        # The backend is the cluster's, so it is set per instance over the class-level name.
        vars(self)["backend"] = cluster.backend
        self.seed_timeout = seed_timeout
        self.pool_size = pool_size
        self.sandboxes: set[ClusterPostgresSandbox] = set()
        """Live writable sandboxes."""
        self.snapshots: set[ClusterPostgresSnapshot] = set()
        """Snapshots not yet destroyed."""
        self.admin_pool = admin.AdminPool(cluster, pool_size)
        """The administrative connections every part of the provider shares."""
        self.roles = SandboxRoles(self.admin_pool)
        """The roles of this provider's databases."""
        self.templates = TaskTemplates(self)
        """The template database of each task's seed."""
        self.private_servers: set[ClusterPostgresProvider] = set()
        """Providers of throwaway servers this provider's sandboxes moved to; each closes itself
        when its last sandbox and snapshot go, and with this provider at the latest."""
        self._closed = False

    @property
    def version(self) -> int:
        """The server's ``server_version_num`` (0 until the first administrative connection)."""
        return self.admin_pool.version

    # --- databases --------------------------------------------------------------------------

    async def create_database(
        self,
        name: str,
        template: str,
        *,
        owner: str | None = None,
        collation: str | None = None,
    ) -> None:
        """Make the database ``name`` of this provider, a copy of ``template`` owned by ``owner``
        (a role of this provider), or by the administrator; ``collation`` (a copy of
        ``template0`` only) is its default collation."""
        async with self.admin_pool.connection() as conn:
            version = self.admin_pool.version
            strategy = " STRATEGY FILE_COPY" if version >= 150000 else ""
            owned = f" OWNER {admin.quote_ident(owner)}" if owner else ""
            locale = collation_clause(collation, version) if collation else ""
            await conn.execute(
                f"CREATE DATABASE {admin.quote_ident(name)}"
                f" TEMPLATE {admin.quote_ident(template)}{owned}{locale}{strategy}"
            )
            try:
                # Only the runtime's roles may connect: the reader must not reach sandboxes.
                comment = admin.ownership_comment(run=current_run().run_id)
                await conn.execute(
                    f"REVOKE ALL ON DATABASE {admin.quote_ident(name)} FROM PUBLIC;"
                    f" COMMENT ON DATABASE {admin.quote_ident(name)}"
                    f" IS {admin.quote_literal(comment)}"
                )
            except BaseException:
                await admin.drop_database(conn, name)
                raise

    async def drop_database(self, database: str) -> None:
        """Drop a database of this provider and the roles it created."""
        await self.admin_pool.run(lambda conn: admin.drop_database(conn, database))
        await self.roles.drop_with(database)

    async def seal(self, database: str) -> None:
        """Turn a database into a template: no connections, every session ended, owned by the
        administrator (so that no role of a sandbox may reopen it)."""
        name = admin.quote_ident(database)

        async def sealed(conn: asyncpg.Connection) -> None:
            await conn.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
            await admin.terminate_backends(conn, database, CLOSE_TIMEOUT)
            await conn.execute(
                f"ALTER DATABASE {name} IS_TEMPLATE true;"
                f" ALTER DATABASE {name} OWNER TO CURRENT_USER"
            )

        await self.admin_pool.run(sealed)

    # --- sandboxes and views ----------------------------------------------------------------

    async def create(self, task: Task, task_dir: Path) -> ClusterPostgresSandbox:
        """A sandbox holding the task's seed (``sql_seed``) or nothing (``empty``)."""
        if self._closed:
            raise SandboxError("the postgres provider is closed")
        with as_sandbox_error(f"task {task.id}: cannot create a postgres sandbox"):
            state = task.initial_state
            if isinstance(state, SqlSeedState) and state.server_roles:
                await self.roles.ensure_server_roles(state.server_roles)
            sandbox = await self.new_sandbox(await self.templates.for_task(task, task_dir))
        sandbox.origin = (task, task_dir)
        return sandbox

    async def new_sandbox(self, template: str) -> ClusterPostgresSandbox:
        """A writable sandbox copied from ``template``, owned by a sandbox role of its own."""
        if self._closed:
            raise SandboxError("the postgres provider is closed")
        name = current_run().new_name("db")
        try:
            async with self.admin_pool.held():
                role = await self.roles.new_sandbox_role(name, template)
                await self.create_database(name, template, owner=role.user)
        except BaseException:
            await self.roles.drop_with(name)
            raise
        sandbox = ClusterPostgresSandbox(
            self, name, self.cluster.admin.with_database(name), role=role
        )
        self.sandboxes.add(sandbox)
        return sandbox

    async def new_view(self, snapshot: ClusterPostgresSnapshot) -> ClusterPostgresSandbox:
        """The read-only view of ``snapshot``: a copy only its own reader role may reach."""
        if self._closed:
            raise SandboxError("the postgres provider is closed")
        name = current_run().new_name("view")
        await self.create_database(name, snapshot.name)
        self.roles.inherit_lineage(name, snapshot.name)
        try:
            reader, password = await self.roles.new_reader(name)
            await self.roles.grant_reader(name, reader)
        except BaseException:
            await self.drop_database(name)
            raise
        info = self.cluster.admin.model_copy(
            update={"user": reader, "password": password, "database": name}
        )
        return ClusterPostgresSandbox(self, name, info, role=info, view_of=snapshot)

    # --- closing ----------------------------------------------------------------------------

    async def released(self) -> None:
        """Called when one of its sandboxes or snapshots is gone; a provider of a private
        server then closes itself when nothing is left (this one does nothing)."""

    async def aclose(self) -> None:
        """Destroy every sandbox, view, snapshot and template, then the roles, and close the
        private servers its sandboxes moved to. Idempotent."""
        self._closed = True
        problems: list[str] = []
        for private in list(self.private_servers):
            try:
                await private.aclose()
            except Exception as error:  # keep closing the rest; report at the end
                problems.append(f"private server: {error}")
        for sandbox in list(self.sandboxes):
            try:
                await sandbox.destroy()
            except Exception as error:  # keep closing the rest; report at the end
                problems.append(f"sandbox {sandbox.name}: {error}")
        for snapshot in list(self.snapshots):
            try:
                await snapshot.destroy()
            except Exception as error:
                problems.append(f"snapshot {snapshot.name}: {error}")
        problems.extend(await self.templates.drop_all())
        if self.admin_pool.opened or self.roles.doomed:
            try:
                problems.extend(await self.roles.drop_all())
            except Exception as error:
                problems.append(f"roles: {error}")
        await self.admin_pool.close()
        if problems:
            raise SandboxError("postgres provider did not close cleanly: " + "; ".join(problems))
