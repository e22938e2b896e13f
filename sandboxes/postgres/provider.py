"""Postgres sandboxes in any ``PostgresCluster``: a template database per task, one database each.

Owns the database lifecycle: building a task's template from its seed once per provider, cloning
sandboxes from it (``CREATE DATABASE ... TEMPLATE ... STRATEGY FILE_COPY``), freezing a sandbox
into a snapshot (its database becomes a template), the shared read-only view of a snapshot and
its reader role, the owner role of a writable sandbox (a login without superuser powers that
owns its database's objects), and the cluster-global roles sandboxes create (attributed to the
database that created them and dropped with it). Every database and role is named
``aj_<run id>_...`` and carries an ownership comment so that ``sandboxes.postgres.leftovers``
can collect them after a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import secrets
import shutil
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import asyncpg

from dataset.models import EmptyState, SqlSeedState, Task
from sandboxes.base import SandboxError
from sandboxes.postgres import admin
from sandboxes.postgres.embedded import wheel_binaries
from sandboxes.postgres.sandbox import (
    PostgresCluster,
    PostgresConnectionInfo,
    PostgresProvider,
    PostgresSandbox,
    PostgresSnapshot,
)
from sandboxes.runs import current_run

if TYPE_CHECKING:
    from sandboxes.postgres.sandbox import PostgresConnection

SeedRunner = Literal["auto", "psql", "asyncpg"]
"""How seeds run: ``psql`` (faithful to ``psql -f``: COPY FROM stdin, meta-commands),
``asyncpg`` (the whole script as one simple query), or ``auto`` (psql when one is found)."""

ROLE_STATEMENT = re.compile(
    r"\b(?:role|user|do|execute|function|procedure|call|owned|group(?!\s+by\b))\b", re.IGNORECASE
)
"""SQL that may create, rename or drop roles (directly, or through code it runs)."""

_RESTRICT_LINE = re.compile(rb"(?m)^\\(?:un)?restrict\s+\S+[ \t]*\r?$")

FREE_DATABASE = "template0"
"""Empty sandboxes are copies of ``template0``, which nobody can connect to or modify."""

CLOSE_TIMEOUT = 5.0
"""Seconds a sandbox's connections get to finish before they are cut (freeze, destroy)."""

logger = logging.getLogger(__name__)

_USER_SCHEMA = "{alias}.nspname !~ '^pg_' AND {alias}.nspname <> 'information_schema'"


def _not_in_extension(catalog: str, column: str) -> str:
    return (
        "NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = "
        f"'{catalog}'::regclass AND d.objid = {column} AND d.deptype = 'e')"
    )


_OWNED_SCHEMAS = f"""
SELECT format('SCHEMA %I', n.nspname) AS target
FROM pg_namespace n
WHERE {_USER_SCHEMA.format(alias="n")} AND {_not_in_extension("pg_namespace", "n.oid")}
ORDER BY n.nspname
"""
_OWNED_RELATIONS = f"""
SELECT format(
           CASE c.relkind
               WHEN 'v' THEN 'VIEW %I.%I'
               WHEN 'm' THEN 'MATERIALIZED VIEW %I.%I'
               WHEN 'S' THEN 'SEQUENCE %I.%I'
               WHEN 'f' THEN 'FOREIGN TABLE %I.%I'
               WHEN 'c' THEN 'TYPE %I.%I'
               ELSE 'TABLE %I.%I'
           END, n.nspname, c.relname) AS target
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f', 'c')
  AND {_USER_SCHEMA.format(alias="n")} AND {_not_in_extension("pg_class", "c.oid")}
  -- serial and identity sequences follow their table
  AND NOT (c.relkind = 'S' AND EXISTS (
      SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
        AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')))
ORDER BY c.oid
"""
_OWNED_ROUTINES = f"""
SELECT format(
           CASE p.prokind WHEN 'p' THEN 'PROCEDURE %I.%I(%s)'
                          WHEN 'a' THEN 'AGGREGATE %I.%I(%s)'
                          ELSE 'FUNCTION %I.%I(%s)' END,
           n.nspname, p.proname, pg_get_function_identity_arguments(p.oid)) AS target
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE {_USER_SCHEMA.format(alias="n")} AND {_not_in_extension("pg_proc", "p.oid")}
ORDER BY p.oid
"""
_OWNED_TYPES = f"""
SELECT format(CASE t.typtype WHEN 'd' THEN 'DOMAIN %I.%I' ELSE 'TYPE %I.%I' END,
              n.nspname, t.typname) AS target
FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
WHERE t.typtype IN ('b', 'd', 'e', 'r')  -- composites are relations; multiranges follow ranges
  AND {_USER_SCHEMA.format(alias="n")} AND {_not_in_extension("pg_type", "t.oid")}
  AND NOT EXISTS (SELECT 1 FROM pg_type e WHERE e.typarray = t.oid)  -- array types follow
ORDER BY t.oid
"""
_OWNED_OBJECTS = (_OWNED_SCHEMAS, _OWNED_RELATIONS, _OWNED_ROUTINES, _OWNED_TYPES)
"""What the owner role of a sandbox is given, in an order where every step can succeed (an
object's new owner needs CREATE on its schema)."""


def may_touch_roles(statement: str) -> bool:
    """Whether running ``statement`` may create, rename or drop roles (errs towards yes)."""
    return ROLE_STATEMENT.search(statement) is not None


def find_psql() -> Path | None:
    """The psql of the pgserver wheel, else the first one on ``PATH``."""
    binaries = wheel_binaries()
    if binaries is not None and (binaries / "psql").is_file():
        return binaries / "psql"
    found = shutil.which("psql")
    return Path(found) if found else None


_role_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


def _role_lock(server: str) -> asyncio.Lock:
    # One lock per server and event loop: asyncio locks cannot be shared between loops.
    locks = _role_locks.setdefault(asyncio.get_running_loop(), {})
    return locks.setdefault(server, asyncio.Lock())


@contextlib.contextmanager
def _as_sandbox_error(what: str) -> Iterator[None]:
    """Report server and connection failures of a lifecycle step as ``SandboxError``."""
    try:
        yield
    except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as error:
        raise SandboxError(f"{what}: {type(error).__name__}: {error}") from error


class ClusterPostgresSandbox(PostgresSandbox):
    """One database of the cluster: a writable sandbox, or the read-only view of a snapshot."""

    def __init__(
        self,
        provider: ClusterPostgresProvider,
        database: str,
        connection: PostgresConnectionInfo,
        *,
        view_of: ClusterPostgresSnapshot | None = None,
    ) -> None:
        self.name = database
        self.connection = connection
        self.read_only = view_of is not None
        self._provider = provider
        self._state: Literal["live", "freezing", "frozen", "destroying", "destroyed"] = "live"
        self._pool: asyncpg.Pool | None = None
        self._pool_lock = asyncio.Lock()
        self._owner: PostgresConnectionInfo | None = None
        self._owner_pool: asyncpg.Pool | None = None
        self._owner_lock = asyncio.Lock()

    def __repr__(self) -> str:
        kind = "view" if self.read_only else "sandbox"
        return f"<postgres {kind} {self.name} ({self._state})>"

    def _check_live(self) -> None:
        if self._state != "live":
            raise SandboxError(f"postgres sandbox {self.name} is {self._state}")

    async def _ensure_pool(self) -> asyncpg.Pool:
        async with self._pool_lock:
            self._check_live()
            if self._pool is None:
                self._pool = await admin.session_pool(
                    self._provider.pool_size, **admin.connect_arguments(self.connection)
                )
            return self._pool

    async def close_connections(self) -> None:
        """Close the pooled connections (cut them after ``CLOSE_TIMEOUT``)."""
        async with self._pool_lock:
            pool, self._pool = self._pool, None
        async with self._owner_lock:
            owner_pool, self._owner_pool = self._owner_pool, None
        for closing in (pool, owner_pool):
            if closing is not None:
                await admin.close_pool(closing, CLOSE_TIMEOUT)

    async def owner_connection(self) -> PostgresConnectionInfo:
        """How to connect to this sandbox as its owner role, made on first use.

        ``connection`` connects as the cluster's administrator, who could reach every other
        database, the snapshot templates and the server's host. The owner role is a plain login
        (no superuser, CREATEDB, CREATEROLE or replication) that may connect to this database
        only and owns the schemas, tables, views, materialized views, sequences, functions,
        procedures, aggregates, types and domains in it (objects of extensions excepted), so it
        can read and change everything a task put there and nothing else. It is dropped with the
        sandbox.

        One difference is visible from SQL after the first call: those objects' owner (and the
        owner's entries in their privileges) name the owner role instead of the role that
        created them. Writable sandboxes only.
        """
        if self.read_only:
            raise SandboxError(f"postgres view {self.name} is read-only and has no owner role")
        async with self._owner_lock:
            self._check_live()
            if self._owner is None:
                with _as_sandbox_error(f"cannot make the owner role of {self.name}"):
                    self._owner = await self._provider.new_owner(self.name)
            return self._owner

    @asynccontextmanager
    async def connect_as_owner(self) -> AsyncIterator[PostgresConnection]:
        """Like ``connect``, as the owner role (see ``owner_connection``)."""
        info = await self.owner_connection()
        async with self._owner_lock:
            self._check_live()
            if self._owner_pool is None:
                self._owner_pool = await admin.session_pool(
                    self._provider.pool_size, **admin.connect_arguments(info)
                )
            pool = self._owner_pool
        async with pool.acquire() as conn:
            try:
                yield conn
            finally:
                await _end_transaction(conn)

    @asynccontextmanager
    async def connect(self, statement: str | None = None) -> AsyncIterator[PostgresConnection]:
        """A fresh-session autocommit connection (see ``PostgresSandbox.connect``).

        A role-touching ``statement`` holds the cluster's role lock for the whole block, so do
        not open another such connection inside it.
        """
        pool = await self._ensure_pool()
        if self.read_only or statement is None or not may_touch_roles(statement):
            async with pool.acquire() as conn:
                try:
                    yield conn
                finally:
                    await _end_transaction(conn)
            return
        async with self._provider.role_lock():
            before = await self._provider.role_oids()
            try:
                async with pool.acquire() as conn:
                    try:
                        yield conn
                    finally:
                        await _end_transaction(conn)
            finally:
                await self._provider.attribute_roles(self.name, before)

    async def freeze(self) -> ClusterPostgresSnapshot:
        """Make this database the snapshot's template; this sandbox is consumed."""
        if self.read_only:
            raise SandboxError(f"postgres view {self.name} is read-only and cannot be frozen")
        self._check_live()
        self._state = "freezing"  # refuses new connections from here on
        try:
            with _as_sandbox_error(f"cannot freeze postgres sandbox {self.name}"):
                await self.close_connections()
                await self._provider.seal(self.name)
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
        with _as_sandbox_error(f"cannot destroy postgres sandbox {self.name}"):
            await self.close_connections()
            await self._provider.drop_database(self.name)
        self._state = "destroyed"
        self._provider.sandboxes.discard(self)

    async def _destroy_view(self) -> None:
        self._state = "destroying"
        await self.close_connections()
        await self._provider.drop_database(self.name)
        self._state = "destroyed"


async def _end_transaction(conn: PostgresConnection) -> None:
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
        with _as_sandbox_error(f"cannot clone postgres snapshot {self.name}"):
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
        with _as_sandbox_error(f"cannot destroy postgres snapshot {self.name}"):
            async with self._view_lock:
                if self._view is not None:
                    await self._view._destroy_view()
                    self._view = None
            await self._provider.drop_database(self.name)
        self._destroyed = True
        self._provider.snapshots.discard(self)


class ClusterPostgresProvider(PostgresProvider):
    """Creates Postgres sandboxes as databases of one cluster (embedded, external or Docker)."""

    def __init__(
        self,
        cluster: PostgresCluster,
        *,
        seed_runner: SeedRunner = "auto",
        seed_timeout: float = 600.0,
        pool_size: int = 4,
    ) -> None:
        """``cluster`` must be started; ``seed_timeout`` bounds one seed run in seconds."""
        self.cluster = cluster
        # The backend is the cluster's, so it is set per instance over the class-level name.
        vars(self)["backend"] = cluster.backend
        self.seed_runner: SeedRunner = seed_runner
        self.seed_timeout = seed_timeout
        self.pool_size = pool_size
        self.sandboxes: set[ClusterPostgresSandbox] = set()
        """Live writable sandboxes."""
        self.snapshots: set[ClusterPostgresSnapshot] = set()
        """Snapshots not yet destroyed."""
        self._templates: dict[tuple[str, str], str] = {}
        self._template_locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._template_databases: set[str] = set()
        self._role_owner: dict[int, str] = {}
        self._doomed_roles: set[int] = set()
        self._pool: asyncpg.Pool | None = None
        self._pool_lock = asyncio.Lock()
        self._superuser = False
        self._version = 0
        self._closed = False

    # --- administrative connections ---------------------------------------------------------

    @property
    def _server(self) -> str:
        info = self.cluster.admin
        return f"{info.host}:{info.port}"

    def role_lock(self) -> asyncio.Lock:
        """The lock serialising role-touching work on this provider's server (in this process)."""
        return _role_lock(self._server)

    @asynccontextmanager
    async def _admin(self) -> AsyncIterator[PostgresConnection]:
        async with self._pool_lock:
            if self._pool is None:
                info = self.cluster.admin
                where = f"{info.user}@{info.host}:{info.port}/{info.database}"
                with _as_sandbox_error(f"cannot connect to the {self.backend} cluster at {where}"):
                    self._pool = await asyncpg.create_pool(
                        **admin.connect_arguments(info),
                        min_size=1,
                        max_size=self.pool_size,
                        server_settings={"application_name": admin.APPLICATION_NAME},
                    )
                async with self._pool.acquire() as conn:
                    self._version = await admin.server_version(conn)
                    self._superuser = bool(
                        await conn.fetchval(
                            "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
                        )
                    )
                    if self.backend != "external":
                        # A cluster of our own: the roles made for judges and agents may
                        # connect to their own database only, not to the maintenance ones.
                        await conn.execute(
                            "REVOKE CONNECT, TEMPORARY ON DATABASE postgres, template1 FROM PUBLIC"
                        )
            pool = self._pool
        async with pool.acquire() as conn:
            yield conn

    # --- roles ------------------------------------------------------------------------------

    async def role_oids(self) -> set[int]:
        """The oids of every role of the cluster."""
        async with self._admin() as conn:
            return {row["oid"] for row in await conn.fetch("SELECT oid FROM pg_roles")}

    async def attribute_roles(self, owner: str, before: set[int]) -> None:
        """Give the roles created since ``before`` to database ``owner``; forget dropped ones."""
        async with self._admin() as conn:
            rows = await conn.fetch("SELECT oid, rolname FROM pg_roles")
            now = {row["oid"]: row["rolname"] for row in rows}
            comment = admin.quote_literal(admin.ownership_comment(owner=owner))
            for oid in now.keys() - before:
                self._role_owner[oid] = owner
                # The comment lets a later run collect the role if this one is killed.
                with contextlib.suppress(asyncpg.PostgresError):
                    await conn.execute(
                        f"COMMENT ON ROLE {admin.quote_ident(now[oid])} IS {comment}"
                    )
        for oid in before - now.keys():
            self._role_owner.pop(oid, None)
            self._doomed_roles.discard(oid)

    async def _drop_doomed_roles(self) -> list[str]:
        """Drop the roles whose database is gone; return why the others could not go."""
        problems: list[str] = []
        async with self._admin() as conn:
            for oid in sorted(self._doomed_roles):
                name = await conn.fetchval("SELECT rolname FROM pg_roles WHERE oid = $1", oid)
                if name is not None:
                    try:
                        await conn.execute(f"DROP ROLE IF EXISTS {admin.quote_ident(name)}")
                    except asyncpg.PostgresError as error:
                        # Still needed elsewhere (e.g. a live clone of a destroyed snapshot
                        # owns objects of it): retried after every later drop.
                        where = await conn.fetch(
                            "SELECT DISTINCT d.datname FROM pg_shdepend s"
                            " JOIN pg_database d ON d.oid = s.dbid"
                            " WHERE s.refclassid = 'pg_authid'::regclass AND s.refobjid = $1",
                            oid,
                        )
                        databases = ", ".join(row["datname"] for row in where) or "-"
                        problems.append(
                            f"role {name}: {error} (referenced in databases: {databases})"
                        )
                        continue
                self._doomed_roles.discard(oid)
                self._role_owner.pop(oid, None)
        return problems

    # --- databases --------------------------------------------------------------------------

    async def _create_database(self, template: str, tag: str) -> str:
        name = current_run().new_name(tag)
        async with self._admin() as conn:
            strategy = " STRATEGY FILE_COPY" if self._version >= 150000 else ""
            await conn.execute(
                f"CREATE DATABASE {admin.quote_ident(name)}"
                f" TEMPLATE {admin.quote_ident(template)}{strategy}"
            )
            try:
                # Only the runtime's roles may connect: the reader must not reach sandboxes.
                await conn.execute(f"REVOKE ALL ON DATABASE {admin.quote_ident(name)} FROM PUBLIC")
                comment = admin.ownership_comment(run=current_run().run_id)
                await conn.execute(
                    f"COMMENT ON DATABASE {admin.quote_ident(name)}"
                    f" IS {admin.quote_literal(comment)}"
                )
            except BaseException:
                await admin.drop_database(conn, name)
                raise
        return name

    async def drop_database(self, database: str) -> None:
        """Drop a database of this provider and the roles it created."""
        async with self._admin() as conn:
            await admin.drop_database(conn, database)
        self._doomed_roles.update(
            oid for oid, owner in self._role_owner.items() if owner == database
        )
        await self._drop_doomed_roles()

    async def seal(self, database: str) -> None:
        """Turn a database into a template: no connections, every session ended."""
        async with self._admin() as conn:
            await conn.execute(
                f"ALTER DATABASE {admin.quote_ident(database)} ALLOW_CONNECTIONS false"
            )
            await admin.terminate_backends(conn, database, CLOSE_TIMEOUT)
            await conn.execute(f"ALTER DATABASE {admin.quote_ident(database)} IS_TEMPLATE true")

    async def new_sandbox(self, template: str) -> ClusterPostgresSandbox:
        """A writable sandbox copied from ``template``."""
        if self._closed:
            raise SandboxError("the postgres provider is closed")
        name = await self._create_database(template, "db")
        sandbox = ClusterPostgresSandbox(self, name, self.cluster.admin.with_database(name))
        self.sandboxes.add(sandbox)
        return sandbox

    async def new_owner(self, database: str) -> PostgresConnectionInfo:
        """A new owner role for ``database``: see ``ClusterPostgresSandbox.owner_connection``."""
        name, password = current_run().new_name("owner"), secrets.token_hex(16)
        role = admin.quote_ident(name)
        async with self.role_lock(), self._admin() as conn:
            await conn.execute(
                f"CREATE ROLE {role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION"
                f" NOBYPASSRLS PASSWORD {admin.quote_literal(password)}"
            )
            oid = await conn.fetchval("SELECT oid FROM pg_roles WHERE rolname = $1", name)
            # Dropped with the database, like the roles its statements create.
            self._role_owner[oid] = database
            comment = admin.ownership_comment(owner=database)
            await conn.execute(f"COMMENT ON ROLE {role} IS {admin.quote_literal(comment)}")
            if not self._superuser:
                # Handing objects to the role, and ending its sessions, needs its privileges.
                await conn.execute(f"GRANT {role} TO CURRENT_USER")
            await conn.execute(
                f"GRANT CONNECT, CREATE, TEMPORARY ON DATABASE {admin.quote_ident(database)}"
                f" TO {role}"
            )
        await self._hand_over(database, name)
        return self.cluster.admin.model_copy(
            update={"user": name, "password": password, "database": database}
        )

    async def _hand_over(self, database: str, role: str) -> None:
        """Make ``role`` the owner of the user objects of ``database``."""
        quoted = admin.quote_ident(role)
        problems: list[str] = []
        conn = await admin.connect(self.cluster.admin.with_database(database))
        try:
            for query in _OWNED_OBJECTS:
                for row in await conn.fetch(query):
                    try:
                        await conn.execute(f"ALTER {row['target']} OWNER TO {quoted}")
                    except asyncpg.PostgresError as error:
                        problems.append(f"{row['target']}: {error}")
        finally:
            await conn.close(timeout=CLOSE_TIMEOUT)
        if problems:
            # e.g. objects of another role a non-superuser administrator cannot take over
            logger.warning(
                "owner role %s of %s does not own: %s", role, database, "; ".join(problems)
            )

    # --- templates and seeds ----------------------------------------------------------------

    async def create(self, task: Task, task_dir: Path) -> ClusterPostgresSandbox:
        """A sandbox holding the task's seed (``sql_seed``) or nothing (``empty``)."""
        if self._closed:
            raise SandboxError("the postgres provider is closed")
        with _as_sandbox_error(f"task {task.id}: cannot create a postgres sandbox"):
            return await self.new_sandbox(await self._template_for(task, task_dir))

    async def _template_for(self, task: Task, task_dir: Path) -> str:
        state = task.initial_state
        if isinstance(state, EmptyState):
            return FREE_DATABASE
        if not isinstance(state, SqlSeedState):
            raise SandboxError(
                f"task {task.id}: a postgres sandbox cannot start from a {state.kind} state"
            )
        path = task_dir / state.path
        try:
            script = await asyncio.to_thread(path.read_bytes)
        except OSError as error:
            raise SandboxError(f"task {task.id}: cannot read seed {path}: {error}") from error
        key = (task.id, hashlib.sha256(script).hexdigest())
        async with self._template_locks.setdefault(key, asyncio.Lock()):
            if key not in self._templates:
                self._templates[key] = await self._build_template(path, script)
            return self._templates[key]

    async def _build_template(self, path: Path, script: bytes) -> str:
        name = await self._create_database(FREE_DATABASE, "tpl")
        self._template_databases.add(name)
        try:
            # Seeds may create roles (pg_dumpall output): they belong to the template.
            async with self.role_lock():
                before = await self.role_oids()
                try:
                    await self._run_seed(name, path, script)
                finally:
                    await self.attribute_roles(name, before)
            await self.seal(name)
        except BaseException:
            await self.drop_database(name)
            self._template_databases.discard(name)
            raise
        return name

    async def _run_seed(self, database: str, path: Path, script: bytes) -> None:
        runner = self.seed_runner
        psql = find_psql() if runner != "asyncpg" else None
        if runner == "psql" and psql is None:
            raise SandboxError("seed_runner='psql' but no psql was found")
        if psql is not None:
            await self._run_seed_psql(psql, database, path, script)
        else:
            await self._run_seed_asyncpg(database, path, script)

    async def _run_seed_psql(self, psql: Path, database: str, path: Path, script: bytes) -> None:
        info = self.cluster.admin
        environment = {
            **os.environ,
            "PGHOST": info.host,
            "PGPORT": str(info.port),
            "PGUSER": info.user,
            "PGDATABASE": database,
            "PGAPPNAME": admin.APPLICATION_NAME,
            "PGOPTIONS": "-c client_min_messages=warning",
            "PGCONNECT_TIMEOUT": str(int(admin.CONNECT_TIMEOUT)),
        }
        if info.password:
            environment["PGPASSWORD"] = info.password
        # pg_dump from 17.6 on fences dumps with \restrict, which older psql rejects; the
        # fence guards against hostile dumps, and seeds are part of the dataset.
        script = _RESTRICT_LINE.sub(b"", script)
        process = await asyncio.create_subprocess_exec(
            str(psql),
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-f",
            "-",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
        )
        try:
            _, errors = await asyncio.wait_for(process.communicate(script), self.seed_timeout)
        except TimeoutError:
            raise SandboxError(
                f"seed {path} did not finish within {self.seed_timeout:.0f} s"
            ) from None
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        if process.returncode != 0:
            message = errors.decode(errors="replace").replace("<stdin>", str(path)).strip()
            raise SandboxError(
                f"seed {path} failed: {message or f'psql exit {process.returncode}'}"
            )

    async def _run_seed_asyncpg(self, database: str, path: Path, script: bytes) -> None:
        try:
            text = script.decode()
        except UnicodeDecodeError as error:
            raise SandboxError(f"seed {path} is not UTF-8: {error}") from error
        conn = await admin.connect(self.cluster.admin.with_database(database))
        try:
            await asyncio.wait_for(conn.execute(text), self.seed_timeout)
        except TimeoutError:
            raise SandboxError(
                f"seed {path} did not finish within {self.seed_timeout:.0f} s"
            ) from None
        except asyncpg.PostgresError as error:
            position = getattr(error, "position", None)
            where = f" (at line {text[: int(position)].count(chr(10)) + 1})" if position else ""
            raise SandboxError(f"seed {path} failed{where}: {error}") from error
        finally:
            await conn.close(timeout=CLOSE_TIMEOUT)

    # --- the read-only view -----------------------------------------------------------------

    @property
    def _reader_reads_all(self) -> bool:
        """Whether readers get ``pg_read_all_data`` rather than grants on each view's objects."""
        return self._superuser and self._version >= 140000

    async def _new_reader(self, database: str) -> tuple[str, str]:
        """A reader role for the view ``database``, dropped with it.

        Each view has its own reader, so that a judge cannot see or end the sessions of judges
        of other views (a role may signal its own backends).
        """
        name, password = current_run().new_name("reader"), secrets.token_hex(16)
        role = admin.quote_ident(name)
        # Lock before connection, everywhere: role-lock holders need an admin connection.
        async with self.role_lock(), self._admin() as conn:
            bypass = " BYPASSRLS" if self._superuser else ""
            await conn.execute(
                f"CREATE ROLE {role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION"
                f"{bypass} PASSWORD {admin.quote_literal(password)}"
            )
            oid = await conn.fetchval("SELECT oid FROM pg_roles WHERE rolname = $1", name)
            self._role_owner[oid] = database
            comment = admin.ownership_comment(owner=database)
            await conn.execute(f"COMMENT ON ROLE {role} IS {admin.quote_literal(comment)}")
            if self._reader_reads_all:
                # Reads every table without a grant showing up in the view's ACLs.
                await conn.execute(f"GRANT pg_read_all_data TO {role}")
            if not self._superuser:
                # Ending the reader's sessions (dropping a view) needs its privileges.
                await conn.execute(f"GRANT {role} TO CURRENT_USER")
        return name, password

    async def new_view(self, snapshot: ClusterPostgresSnapshot) -> ClusterPostgresSandbox:
        """The read-only view of ``snapshot``: a copy only its own reader role may reach."""
        if self._closed:
            raise SandboxError("the postgres provider is closed")
        name = await self._create_database(snapshot.name, "view")
        try:
            reader, password = await self._new_reader(name)
            await self._grant_reader(name, reader)
        except BaseException:
            await self.drop_database(name)
            raise
        return ClusterPostgresSandbox(
            self,
            name,
            self.cluster.admin.model_copy(
                update={"user": reader, "password": password, "database": name}
            ),
            view_of=snapshot,
        )

    async def _grant_reader(self, database: str, reader: str) -> None:
        role = admin.quote_ident(reader)
        conn = await admin.connect(self.cluster.admin.with_database(database))
        try:
            schemas = [
                row["nspname"]
                for row in await conn.fetch(
                    "SELECT nspname FROM pg_namespace"
                    " WHERE nspname !~ '^pg_' AND nspname <> 'information_schema'"
                )
            ]
            for schema in schemas:
                quoted = admin.quote_ident(schema)
                if not self._reader_reads_all:
                    await conn.execute(f"GRANT USAGE ON SCHEMA {quoted} TO {role}")
                    await conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {quoted} TO {role}")
                    await conn.execute(
                        f"GRANT SELECT ON ALL SEQUENCES IN SCHEMA {quoted} TO {role}"
                    )
                if await conn.fetchval(
                    "SELECT has_schema_privilege($1, $2, 'CREATE')", reader, schema
                ):
                    # Old-style schemas let PUBLIC create; the shared view must stay unchanged.
                    await conn.execute(f"REVOKE CREATE ON SCHEMA {quoted} FROM PUBLIC")
        finally:
            await conn.close()
        async with self._admin() as pooled:
            await pooled.execute(
                f"ALTER ROLE {role} IN DATABASE {admin.quote_ident(database)}"
                " SET default_transaction_read_only = on"
            )
            await pooled.execute(
                f"GRANT CONNECT ON DATABASE {admin.quote_ident(database)} TO {role}"
            )

    # --- closing ----------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Destroy every sandbox, view, snapshot and template, then the roles. Idempotent."""
        self._closed = True
        problems: list[str] = []
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
        for template in sorted(self._template_databases):
            try:
                await self.drop_database(template)
                self._template_databases.discard(template)
            except Exception as error:
                problems.append(f"template {template}: {error}")
        self._templates.clear()
        if self._pool is not None or self._doomed_roles:
            try:
                self._doomed_roles.update(self._role_owner)
                problems.extend(await self._drop_doomed_roles())
            except Exception as error:
                problems.append(f"roles: {error}")
        async with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            await admin.close_pool(pool, CLOSE_TIMEOUT)
        if problems:
            raise SandboxError("postgres provider did not close cleanly: " + "; ".join(problems))
