"""The cluster-global roles of Postgres sandboxes: made, tied to their database, and dropped.

Owns the roles the runtime makes (a *seed role* per template, a *sandbox role* per writable
sandbox, a *reader role* per read-only view), which objects each may act on (its database's
*lineage*), telling which SQL may create, rename or drop roles (``may_touch_roles``), and dropping
a database's roles with it, together with every role they created. Creates and drops no database.

**Who owns what.** A seed runs as its template's seed role, so the template's objects belong to
it. A sandbox copied from a template or a snapshot gets its own sandbox role, which owns the
sandbox's database (and so its ``public`` schema, through ``pg_database_owner``) and is a member
(inheriting; from 16 on without ``SET ROLE``) of every role of its lineage: the seed role, and
the sandbox roles of the snapshots it descends from. It can therefore change and drop every object
of its copy, while each of those roles can only connect to its own database. A sealed database (a
template, a snapshot) goes back to the administrator and its role stops logging in. Nothing is
re-owned when a sandbox is made: its role and grants cost one round trip, and the database is
created ``OWNER`` it.

**What the runtime's roles may do.** None is a superuser or has CREATEDB, REPLICATION or
BYPASSRLS; seed and sandbox roles have CREATEROLE on PostgreSQL 16 and later, where that only lets
a role create roles and manage the ones it created (``ADMIN OPTION``, which Postgres records for
the creator); they get ``createrole_self_grant = 'set, inherit'`` so that they can ``SET ROLE`` to
the roles they create, as an administrator could. Before 16, CREATEROLE could alter any
non-superuser role and grant membership in ``pg_execute_server_program`` or
``pg_read_server_files``, so there it is withheld: seeds and replayed SQL cannot create roles.

**Which roles go with a database.** The runtime's own roles are tagged with an ownership comment
(for ``sandboxes.postgres.leftovers``) and dropped with the database they were made for. A role
created by dataset code is found through the creator's ``ADMIN OPTION`` (recursively) when its
creator is dropped, and dropped first; one still referenced elsewhere (a live clone of a destroyed
snapshot) stays doomed and is retried after every later drop.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Iterable
from typing import TYPE_CHECKING

import asyncpg

from sandboxes.postgres import admin
from sandboxes.postgres.sandbox import PostgresConnectionInfo
from sandboxes.runs import current_run

if TYPE_CHECKING:
    from sandboxes.postgres.sandbox import PostgresConnection

ROLE_STATEMENT = re.compile(
    r"\b(?:role|user|do|execute|function|procedure|call|owned|group(?!\s+by\b))\b", re.IGNORECASE
)
"""SQL that may create, rename or drop roles (directly, or through code it runs)."""

CREATEROLE_VERSION = 160000
"""The first server version whose CREATEROLE is confined to the roles a role created."""

TEMP_FILE_LIMIT = "1GB"
"""The ``temp_file_limit`` of every role the runtime makes, where it may set one."""

CREATEROLE_WITHHELD = (
    "the runtime's roles have no CREATEROLE on PostgreSQL before 16, where it would let dataset"
    " SQL alter other roles and grant itself pg_execute_server_program; use a PostgreSQL 16+"
    " server to replay role management"
)
"""Added to the errors of seeds and replayed SQL that try to manage roles on such servers."""

_CREATED_BY = """
WITH RECURSIVE created(oid) AS (
    SELECT m.roleid FROM pg_auth_members m WHERE m.member = ANY($1::oid[]) AND m.admin_option
    UNION
    SELECT m.roleid FROM pg_auth_members m JOIN created c ON m.member = c.oid
    WHERE m.admin_option
)
SELECT oid FROM created WHERE oid <> ALL($1::oid[])
"""
"""Roles that the given roles created (they hold their creator's ADMIN OPTION), recursively."""


def may_touch_roles(statement: str) -> bool:
    """Whether running ``statement`` may create, rename or drop roles (errs towards yes)."""
    return ROLE_STATEMENT.search(statement) is not None


SUPERUSER_SWITCH = re.compile(
    r"\bSET\s+(?:SESSION\s+|LOCAL\s+)?(?:ROLE|SESSION\s+AUTHORIZATION)\s+"
    r"\"?(?P<role>postgres|supabase_admin)\"?(?![\w$])",
    re.IGNORECASE,
)
"""SQL that makes its session act as the recording server's superuser (MCPMark's ``postgres``,
Supabase's ``supabase_admin``)."""

SUPERUSER_REFUSED = (
    "refused on replay: the recorded SQL acts as the recording server's superuser ({switch}); "
    "{reason}; the statement was not run"
)
"""The answer replay gives instead of running a recorded superuser step (``reason``: why this
sandbox may not run it)."""


def superuser_switch(statement: str) -> str | None:
    """The clause by which ``statement`` switches to a superuser role, None when it does not."""
    found = SUPERUSER_SWITCH.search(statement)
    return None if found is None else " ".join(found.group(0).split())


def superuser_roles(statement: str) -> set[str]:
    """The superuser roles ``statement`` switches to (``postgres``, ``supabase_admin``)."""
    return {found.group("role").lower() for found in SUPERUSER_SWITCH.finditer(statement)}


def explain_role_error(message: str, version: int) -> str:
    """``message`` with the reason role management is refused, when that is why it failed."""
    if version and version < CREATEROLE_VERSION and "permission denied to create role" in message:
        return f"{message} ({CREATEROLE_WITHHELD})"
    return message


async def created_roles(conn: PostgresConnection, creators: Iterable[int]) -> list[int]:
    """Oids of the roles ``creators`` (role oids) created, and those these created, and so on;
    always empty before PostgreSQL 16 (no CREATEROLE for the runtime's roles)."""
    oids = list(creators)
    if not oids:
        return []
    return [row["oid"] for row in await conn.fetch(_CREATED_BY, oids)]


class SandboxRoles:
    """The roles of one provider's databases: made for them, and dropped with them."""

    def __init__(self, pool: admin.AdminPool) -> None:
        self._admin = pool
        self._owner: dict[int, str] = {}
        self._doomed: set[int] = set()
        self._dropping = asyncio.Lock()
        """One drop pass at a time. Dropping a creator leaves the roles it created behind, so a
        pass drops only roles whose creations it has looked up (see ``_drop_doomed``)."""
        self._lineage: dict[str, tuple[str, ...]] = {}
        self._making_server_roles = asyncio.Lock()

    @property
    def doomed(self) -> bool:
        """Whether roles wait to be dropped."""
        return bool(self._doomed)

    def lineage(self, database: str) -> tuple[str, ...]:
        """The roles whose objects ``database`` holds (its own role last); empty when unknown."""
        return self._lineage.get(database, ())

    def inherit_lineage(self, database: str, source: str) -> None:
        """``database`` holds what ``source`` held (a read-only view of a snapshot)."""
        self._lineage[database] = self.lineage(source)

    # --- making roles ------------------------------------------------------------------------

    def _temp_file_limit(self, role: str) -> list[str]:
        # Bounds the temporary files one session's sorts and hashes may write (the scratch space
        # may be RAM); only a superuser may set it, so with a weaker DSN the time limit bounds it.
        if not self._admin.superuser:
            return []
        return [f"ALTER ROLE {role} SET temp_file_limit = {admin.quote_literal(TEMP_FILE_LIMIT)}"]

    async def _new_login_role(
        self, tag: str, database: str, *, creates_roles: bool, member_of: tuple[str, ...] = ()
    ) -> tuple[str, str]:
        """A new login role (name, password) belonging to ``database`` (dropped with it)."""
        name, password = current_run().new_name(tag), secrets.token_hex(16)
        role = admin.quote_ident(name)
        comment = admin.ownership_comment(owner=database)
        async with self._admin.connection() as conn:
            modern = self._admin.version >= CREATEROLE_VERSION  # known once connected
            createrole = "CREATEROLE" if creates_roles and modern else "NOCREATEROLE"
            statements = [
                f"CREATE ROLE {role} LOGIN NOSUPERUSER NOCREATEDB {createrole} NOREPLICATION"
                f" NOBYPASSRLS PASSWORD {admin.quote_literal(admin.scram_secret(password))}",
                # The comment lets a later run collect the role if this one is killed.
                f"COMMENT ON ROLE {role} IS {admin.quote_literal(comment)}",
            ]
            if not self._admin.superuser:
                # Giving it a database, handing objects to it, ending its sessions and
                # dropping what it created need its privileges.
                inherit = " WITH INHERIT TRUE" if modern else ""
                statements.append(f"GRANT {role} TO CURRENT_USER{inherit}")
            if member_of:
                options = " WITH INHERIT TRUE, SET FALSE" if modern else ""
                parents = ", ".join(admin.quote_ident(parent) for parent in member_of)
                statements.append(f"GRANT {parents} TO {role}{options}")
            if createrole == "CREATEROLE":
                statements.append(f"ALTER ROLE {role} SET createrole_self_grant = 'set, inherit'")
            statements.extend(self._temp_file_limit(role))
            # One implicit transaction: the role is made whole or not at all.
            await conn.execute(";\n".join(statements))
            oid = await conn.fetchval("SELECT oid FROM pg_roles WHERE rolname = $1", name)
        self._owner[oid] = database
        return name, password

    async def new_seed_role(self, template: str) -> PostgresConnectionInfo:
        """The seed role of ``template`` (made before the database, which it will own while the
        seed runs), as connection info for the template."""
        name, password = await self._new_login_role("seed", template, creates_roles=True)
        self._lineage[template] = (name,)
        return self._admin.cluster.admin.model_copy(
            update={"user": name, "password": password, "database": template}
        )

    async def new_sandbox_role(self, database: str, source: str) -> PostgresConnectionInfo:
        """The sandbox role of ``database`` (made before the database, which it will own), a
        copy of ``source``: it inherits the privileges of ``source``'s lineage."""
        parents = self.lineage(source)
        name, password = await self._new_login_role(
            "owner", database, creates_roles=True, member_of=parents
        )
        self._lineage[database] = (*parents, name)
        return self._admin.cluster.admin.model_copy(
            update={"user": name, "password": password, "database": database}
        )

    async def ensure_server_roles(self, names: Iterable[str]) -> list[str]:
        """Make the named roles where the cluster lacks them: roles the recording's server had
        before any task began (Supabase's ``anon``, ``authenticated``, ``service_role``), so that
        replayed grants and policies naming them work. Each is made as such a server makes it,
        without login or privileges; they are the server's, not a database's, so they stay (a
        runtime's own cluster goes with its run). Returns the names made."""
        made: list[str] = []
        async with self._making_server_roles, self._admin.connection() as conn:
            for name in names:
                if await conn.fetchval("SELECT 1 FROM pg_roles WHERE rolname = $1", name):
                    continue
                try:
                    await conn.execute(
                        f"CREATE ROLE {admin.quote_ident(name)} NOLOGIN NOSUPERUSER NOCREATEDB"
                        " NOCREATEROLE NOREPLICATION NOBYPASSRLS"
                    )
                except asyncpg.DuplicateObjectError:
                    continue  # made meanwhile by another provider on the same server
                made.append(name)
        return made

    async def retire(self, role: str) -> None:
        """Stop ``role`` from logging in (its database is sealed); it keeps its objects."""
        async with self._admin.connection() as conn:
            await conn.execute(f"ALTER ROLE {admin.quote_ident(role)} NOLOGIN")

    # --- dropping roles ----------------------------------------------------------------------

    async def drop_with(self, database: str) -> list[str]:
        """Drop the roles of ``database`` (just dropped) and those still waiting; return why
        some could not go yet."""
        self._doomed.update(oid for oid, owner in self._owner.items() if owner == database)
        self._lineage.pop(database, None)
        return await self._drop_doomed()

    async def drop_all(self) -> list[str]:
        """Drop every role of this provider; return why some could not go."""
        self._doomed.update(self._owner)
        self._lineage.clear()
        return await self._drop_doomed()

    async def _drop_doomed(self) -> list[str]:
        """Drop the doomed roles and what they created, newest first; return why the others
        could not go. A creator stays while one of its creations does: dropping a role needs the
        ADMIN OPTION its creator holds (and the administrator has through it)."""
        problems: list[str] = []
        async with self._dropping, self._admin.connection() as conn:
            # The roles doomed now: a destroy that dooms more while this pass awaits runs a pass
            # of its own, which finds what those roles created before dropping them.
            doomed = set(self._doomed)
            for oid in await created_roles(conn, doomed):
                self._owner.setdefault(oid, "")
                doomed.add(oid)
            self._doomed |= doomed
            creators: dict[int, set[int]] = {}
            for row in await conn.fetch(
                "SELECT roleid, member FROM pg_auth_members"
                " WHERE admin_option AND member = ANY($1::oid[])",
                list(doomed),
            ):
                creators.setdefault(row["roleid"], set()).add(row["member"])
            kept: set[int] = set()
            for oid in sorted(doomed, reverse=True):
                if oid in kept:
                    problems.append(f"role oid {oid}: kept while a role it created remains")
                    kept |= creators.get(oid, set())
                    continue
                name = await conn.fetchval("SELECT rolname FROM pg_roles WHERE oid = $1", oid)
                if name is not None:
                    try:
                        await conn.execute(f"DROP ROLE IF EXISTS {admin.quote_ident(name)}")
                    except asyncpg.PostgresError as error:
                        # Still needed elsewhere (e.g. a live clone of a destroyed snapshot
                        # grants to it): retried after every later drop, with its creators.
                        kept |= creators.get(oid, set())
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
        comment = admin.ownership_comment(owner=database)
        async with self._admin.connection() as conn:
            bypass = " BYPASSRLS" if self._admin.superuser else ""  # known once connected
            statements = [
                f"CREATE ROLE {role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION"
                f"{bypass} PASSWORD {admin.quote_literal(admin.scram_secret(password))}",
                f"COMMENT ON ROLE {role} IS {admin.quote_literal(comment)}",
            ]
            if self._reader_reads_all:
                # Reads every table without a grant showing up in the view's ACLs.
                statements.append(f"GRANT pg_read_all_data TO {role}")
            if not self._admin.superuser:
                # Ending the reader's sessions (dropping a view) needs its privileges.
                statements.append(f"GRANT {role} TO CURRENT_USER")
            statements.extend(self._temp_file_limit(role))
            await conn.execute(";\n".join(statements))
            oid = await conn.fetchval("SELECT oid FROM pg_roles WHERE rolname = $1", name)
        self._owner[oid] = database
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
