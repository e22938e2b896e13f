"""The ``external`` Postgres backend: a server the user runs, given as a DSN.

Owns parsing the DSN and checking, on ``start``, that the server answers and that the role may
create databases and roles. The server itself is never started, stopped or reconfigured.

**What the DSN's role is used for, and what it needs.** The runtime uses it only to create,
seal and drop its own databases and roles, all named ``aj_<run id>_...``: a seed role per
template, a sandbox role per writable sandbox, a reader role per read-only view
(``sandboxes.postgres.roles``). Seeds, replayed agent SQL, the judges' SQL servers and verifiers
run as those roles, never as the DSN's, and verifiers are given only their sandbox role's
credentials. The role needs:

- ``LOGIN`` and ``CONNECT`` on the DSN's database (``postgres`` by default);
- ``CREATEDB`` and ``CREATEROLE``, or ``SUPERUSER``. Nothing else: no ``REPLICATION`` or
  ``BYPASSRLS``, no membership in ``pg_*`` roles, no ownership of anything of the user's.

A non-superuser ``CREATEDB CREATEROLE`` role works on PostgreSQL 16+, where CREATEROLE only
administers the roles it created: the runtime makes its role a member of each role it creates
(``GRANT ... TO CURRENT_USER``, to hand databases to them, take them back, end their sessions
and drop what they created); those memberships go with the roles. What it cannot do, a superuser
does: let readers bypass row-level security (``BYPASSRLS``) and read through
``pg_read_all_data``, and make ``pg_toast`` visible to the runtime's roles (so schema listings
match recordings made as a superuser). On servers before 16 the runtime's roles get no
CREATEROLE (there it would let dataset SQL alter any role and grant itself
``pg_execute_server_program``), so seeds and replayed SQL cannot create roles.

What stays reachable: roles are cluster-wide, so the runtime's roles (and those dataset code
creates) can log in to any database that grants ``CONNECT`` to ``PUBLIC`` (the default for new
databases) and do there what ``PUBLIC`` may; replayed SQL cannot, as it runs in its sandbox's
session, but a verifier holding its credentials could. Revoke ``CONNECT`` from ``PUBLIC`` on
databases that matter, or give the runtime a server of its own.
"""

from __future__ import annotations

import getpass
import os
import re
import shlex
from typing import ClassVar
from urllib.parse import parse_qs, unquote, urlsplit

from sandboxes.base import SandboxError
from sandboxes.postgres import admin
from sandboxes.postgres.sandbox import PostgresCluster, PostgresConnectionInfo

DEFAULT_PORT = 5432


def _url_fields(dsn: str) -> dict[str, str]:
    parts = urlsplit(dsn)
    try:
        port = parts.port
    except ValueError as error:
        raise SandboxError(f"invalid port in Postgres DSN: {error}") from error
    fields = {
        "user": unquote(parts.username or ""),
        "password": unquote(parts.password or ""),
        "host": unquote(parts.hostname or ""),
        "port": str(port or ""),
        "dbname": unquote(parts.path.strip("/")),
    }
    fields = {key: value for key, value in fields.items() if value}
    # Query parameters (host=/socket/dir, port=...) win, as in libpq.
    fields.update({key: values[-1] for key, values in parse_qs(parts.query).items()})
    return fields


def _keyword_fields(dsn: str) -> dict[str, str]:
    try:
        words = shlex.split(dsn)
    except ValueError as error:
        raise SandboxError(f"cannot parse Postgres DSN: {error}") from error
    fields: dict[str, str] = {}
    for word in words:
        key, separator, value = word.partition("=")
        if not separator:
            raise SandboxError(f"cannot parse Postgres DSN: {word!r} is not key=value")
        fields[key.strip()] = value
    return fields


def parse_dsn(dsn: str) -> PostgresConnectionInfo:
    """Read a ``postgresql://`` URL or a libpq ``key=value`` string.

    Missing parts default as libpq does where it is sensible: port 5432, database ``postgres``,
    the user from ``PGUSER`` or the login name, the password from ``PGPASSWORD``.
    """
    is_url = re.match(r"^postgres(ql)?://", dsn) is not None
    fields = _url_fields(dsn) if is_url else _keyword_fields(dsn)
    try:
        port = int(fields.get("port", DEFAULT_PORT))
    except ValueError as error:
        raise SandboxError(f"invalid port in Postgres DSN: {fields['port']!r}") from error
    return PostgresConnectionInfo(
        host=fields.get("host", "localhost"),
        port=port,
        user=fields.get("user") or os.environ.get("PGUSER") or getpass.getuser(),
        password=fields.get("password", os.environ.get("PGPASSWORD", "")),
        database=fields.get("dbname") or fields.get("database") or "postgres",
    )


class ExternalPostgresCluster(PostgresCluster):
    """A Postgres server the runtime does not own; its role needs CREATEDB and CREATEROLE (or
    SUPERUSER), see the module's docstring."""

    backend: ClassVar[str] = "external"

    def __init__(self, dsn: str | PostgresConnectionInfo) -> None:
        """``dsn``: a ``postgresql://`` URL, a ``key=value`` string, or connection info."""
        self._admin = dsn if isinstance(dsn, PostgresConnectionInfo) else parse_dsn(dsn)

    @property
    def admin(self) -> PostgresConnectionInfo:
        """The DSN's role on the DSN's database."""
        return self._admin

    def _where(self) -> str:
        info = self._admin
        return f"{info.user}@{info.host}:{info.port}/{info.database}"

    async def start(self) -> None:
        """Check that the server answers and the role may create databases and roles."""
        try:
            conn = await admin.connect(self._admin)
        except (OSError, TimeoutError) as error:
            raise SandboxError(f"cannot reach Postgres at {self._where()}: {error}") from error
        except Exception as error:
            # asyncpg reports authentication and unknown-database failures as its own errors.
            raise SandboxError(
                f"cannot connect to Postgres at {self._where()}: {type(error).__name__}: {error}"
            ) from error
        try:
            row = await conn.fetchrow(
                "SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles"
                " WHERE rolname = current_user"
            )
        finally:
            await conn.close()
        if row is None or not (row["rolsuper"] or (row["rolcreatedb"] and row["rolcreaterole"])):
            raise SandboxError(
                f"Postgres role {self._admin.user!r} at {self._where()} cannot create sandboxes:"
                " it needs SUPERUSER, or both CREATEDB and CREATEROLE"
                f" (ALTER ROLE {admin.quote_ident(self._admin.user)} CREATEDB CREATEROLE)"
            )

    async def stop(self) -> None:
        """Nothing to do: the server belongs to the user."""
