"""The cluster-global roles of Postgres sandboxes: made, attributed, tagged and dropped.

Owns telling which SQL may create, rename or drop roles (``may_touch_roles``), the lock that
serialises role-touching work on one server, attributing the roles a sandbox's statements or a
seed create to the database that created them, the owner role of a writable sandbox and the
reader role of a read-only view (made, tagged with an ownership comment, given their rights), and
dropping a database's roles with it. Creates and drops no database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import secrets
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

from sandboxes.postgres import admin
from sandboxes.postgres.sandbox import PostgresConnectionInfo
from sandboxes.runs import current_run

ROLE_STATEMENT = re.compile(
    r"\b(?:role|user|do|execute|function|procedure|call|owned|group(?!\s+by\b))\b", re.IGNORECASE
)
"""SQL that may create, rename or drop roles (directly, or through code it runs)."""

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


_role_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


def role_lock(server: str) -> asyncio.Lock:
    """The lock serialising role-touching work on ``server`` (``host:port``) in this process."""
    # One lock per server and event loop: asyncio locks cannot be shared between loops.
    locks = _role_locks.setdefault(asyncio.get_running_loop(), {})
    return locks.setdefault(server, asyncio.Lock())


class SandboxRoles:
    """The roles of one provider's databases: which database each belongs to, and dropping them.

    A role belongs to the database whose statements (or seed) created it, or for which it was
    made (an owner or a reader role); it is dropped with that database. A role still referenced
    elsewhere when its database goes stays doomed and is retried after every later drop.
    """

    def __init__(self, pool: admin.AdminPool) -> None:
        self._admin = pool
        self._owner: dict[int, str] = {}
        self._doomed: set[int] = set()

    @property
    def doomed(self) -> bool:
        """Whether roles wait to be dropped."""
        return bool(self._doomed)

    def lock(self) -> asyncio.Lock:
        """The lock serialising role-touching work on this provider's server (in this process)."""
        return role_lock(self._admin.server)

    async def oids(self) -> set[int]:
        """The oids of every role of the cluster."""
        async with self._admin.connection() as conn:
            return {row["oid"] for row in await conn.fetch("SELECT oid FROM pg_roles")}

    async def attribute(self, owner: str, before: set[int]) -> None:
        """Give the roles created since ``before`` to database ``owner``; forget dropped ones."""
        async with self._admin.connection() as conn:
            rows = await conn.fetch("SELECT oid, rolname FROM pg_roles")
            now = {row["oid"]: row["rolname"] for row in rows}
            comment = admin.quote_literal(admin.ownership_comment(owner=owner))
            for oid in now.keys() - before:
                self._owner[oid] = owner
                # The comment lets a later run collect the role if this one is killed.
                with contextlib.suppress(asyncpg.PostgresError):
                    await conn.execute(
                        f"COMMENT ON ROLE {admin.quote_ident(now[oid])} IS {comment}"
                    )
        for oid in before - now.keys():
            self._owner.pop(oid, None)
            self._doomed.discard(oid)

    @asynccontextmanager
    async def attributed_to(self, database: str) -> AsyncIterator[None]:
        """Hold the role lock for the block; the roles it creates belong to ``database``.

        Do not enter it again inside the block (the lock is not reentrant).
        """
        async with self.lock():
            before = await self.oids()
            try:
                yield
            finally:
                await self.attribute(database, before)

    async def drop_with(self, database: str) -> None:
        """Drop the roles of ``database`` (just dropped) and those still waiting."""
        self._doomed.update(oid for oid, owner in self._owner.items() if owner == database)
        await self._drop_doomed()

    async def drop_all(self) -> list[str]:
        """Drop every role of this provider; return why some could not go."""
        self._doomed.update(self._owner)
        return await self._drop_doomed()

    async def _drop_doomed(self) -> list[str]:
        """Drop the roles whose database is gone; return why the others could not go."""
        problems: list[str] = []
        async with self._admin.connection() as conn:
            for oid in sorted(self._doomed):
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
                self._doomed.discard(oid)
                self._owner.pop(oid, None)
        return problems

    async def _tag(self, conn: asyncpg.Connection, name: str, database: str) -> None:
        """Attribute the new role ``name`` to ``database`` and mark it as the runtime's."""
        oid = await conn.fetchval("SELECT oid FROM pg_roles WHERE rolname = $1", name)
        self._owner[oid] = database
        comment = admin.ownership_comment(owner=database)
        await conn.execute(
            f"COMMENT ON ROLE {admin.quote_ident(name)} IS {admin.quote_literal(comment)}"
        )

    # --- the owner role of a writable sandbox -----------------------------------------------

    async def new_owner(self, database: str) -> PostgresConnectionInfo:
        """A new owner role for ``database``: see ``ClusterPostgresSandbox.owner_connection``."""
        name, password = current_run().new_name("owner"), secrets.token_hex(16)
        role = admin.quote_ident(name)
        async with self.lock(), self._admin.connection() as conn:
            await conn.execute(
                f"CREATE ROLE {role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION"
                f" NOBYPASSRLS PASSWORD {admin.quote_literal(password)}"
            )
            # Dropped with the database, like the roles its statements create.
            await self._tag(conn, name, database)
            if not self._admin.superuser:
                # Handing objects to the role, and ending its sessions, needs its privileges.
                await conn.execute(f"GRANT {role} TO CURRENT_USER")
            await conn.execute(
                f"GRANT CONNECT, CREATE, TEMPORARY ON DATABASE {admin.quote_ident(database)}"
                f" TO {role}"
            )
        await self._hand_over(database, name)
        return self._admin.cluster.admin.model_copy(
            update={"user": name, "password": password, "database": database}
        )

    async def _hand_over(self, database: str, role: str) -> None:
        """Make ``role`` the owner of the user objects of ``database``."""
        quoted = admin.quote_ident(role)
        problems: list[str] = []
        conn = await admin.connect(self._admin.cluster.admin.with_database(database))
        try:
            for query in _OWNED_OBJECTS:
                for row in await conn.fetch(query):
                    try:
                        await conn.execute(f"ALTER {row['target']} OWNER TO {quoted}")
                    except asyncpg.PostgresError as error:
                        problems.append(f"{row['target']}: {error}")
        finally:
            await conn.close(timeout=admin.CLOSE_TIMEOUT)
        if problems:
            # e.g. objects of another role a non-superuser administrator cannot take over
            logger.warning(
                "owner role %s of %s does not own: %s", role, database, "; ".join(problems)
            )

    # --- the reader role of a read-only view ------------------------------------------------

    @property
    def _reader_reads_all(self) -> bool:
        """Whether readers get ``pg_read_all_data`` rather than grants on each view's objects."""
        return self._admin.superuser and self._admin.version >= 140000

    async def new_reader(self, database: str) -> tuple[str, str]:
        """A reader role (name, password) for the view ``database``, dropped with it.

        Each view has its own reader, so that a judge cannot see or end the sessions of judges
        of other views (a role may signal its own backends). ``grant_reader`` gives it its rights.
        """
        name, password = current_run().new_name("reader"), secrets.token_hex(16)
        role = admin.quote_ident(name)
        # Lock before connection, everywhere: role-lock holders need an admin connection.
        async with self.lock(), self._admin.connection() as conn:
            bypass = " BYPASSRLS" if self._admin.superuser else ""
            await conn.execute(
                f"CREATE ROLE {role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION"
                f"{bypass} PASSWORD {admin.quote_literal(password)}"
            )
            await self._tag(conn, name, database)
            if self._reader_reads_all:
                # Reads every table without a grant showing up in the view's ACLs.
                await conn.execute(f"GRANT pg_read_all_data TO {role}")
            if not self._admin.superuser:
                # Ending the reader's sessions (dropping a view) needs its privileges.
                await conn.execute(f"GRANT {role} TO CURRENT_USER")
        return name, password

    async def grant_reader(self, database: str, reader: str) -> None:
        """Let ``reader`` connect to ``database`` and read, never write, everything in it."""
        role = admin.quote_ident(reader)
        conn = await admin.connect(self._admin.cluster.admin.with_database(database))
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
        async with self._admin.connection() as conn:
            await conn.execute(
                f"ALTER ROLE {role} IN DATABASE {admin.quote_ident(database)}"
                " SET default_transaction_read_only = on"
            )
            await conn.execute(f"GRANT CONNECT ON DATABASE {admin.quote_ident(database)} TO {role}")
