"""The Postgres kind of sandbox, and the cluster interface its backends implement."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, ClassVar
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict

from sandboxes.base import Sandbox, SandboxProvider, Snapshot

if TYPE_CHECKING:
    from typing import TypeAlias

    import asyncpg
    from asyncpg.pool import PoolConnectionProxy

    PostgresConnection: TypeAlias = asyncpg.Connection | PoolConnectionProxy
    """A session on a database: a connection of its own, or one lent by a pool (which forwards
    every ``asyncpg.Connection`` method). Annotations only (asyncpg is not imported here)."""


class PostgresConnectionInfo(BaseModel):
    """Everything needed to connect to one database."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    host: str
    """Host name, IP address, or the directory of a Unix socket (starts with ``/``)."""
    port: int
    """TCP port, or the number in the Unix socket's file name."""
    user: str
    """Role to connect as."""
    password: str
    """Password of ``user`` ("": none, e.g. a server that trusts the client)."""
    database: str
    """Database name."""

    @property
    def dsn(self) -> str:
        """A ``postgresql://`` URL usable by asyncpg, psycopg and psql."""
        credentials = quote(self.user, safe="")
        if self.password:
            credentials += ":" + quote(self.password, safe="")
        if self.host.startswith("/"):
            return (
                f"postgresql://{credentials}@/{quote(self.database, safe='')}"
                f"?host={quote(self.host, safe='/')}&port={self.port}"
            )
        return f"postgresql://{credentials}@{self.host}:{self.port}/{quote(self.database, safe='')}"

    def verifier_environment(self) -> dict[str, str]:
        """The environment variables of the MCPMark verifier contract for this database."""
        return {
            "POSTGRES_HOST": self.host,
            "POSTGRES_PORT": str(self.port),
            "POSTGRES_USERNAME": self.user,
            "POSTGRES_PASSWORD": self.password,
            "POSTGRES_DATABASE": self.database,
            "DATABASE_URL": self.dsn,
        }

    def with_database(self, database: str) -> PostgresConnectionInfo:
        """The same server and role, another database."""
        return self.model_copy(update={"database": database})


class PostgresCluster(ABC):
    """A running Postgres server the runtime may create databases and roles in."""

    backend: ClassVar[str]
    """``embedded``, ``external`` or ``docker``."""

    @property
    @abstractmethod
    def admin(self) -> PostgresConnectionInfo:
        """A superuser (or CREATEDB + CREATEROLE) connection to the maintenance database: used
        only to make, seal and drop the runtime's own databases and roles."""

    @abstractmethod
    async def start(self) -> None:
        """Start the server (or check the external one is reachable). Idempotent."""

    @abstractmethod
    async def stop(self) -> None:
        """Stop a server the runtime started and delete its data; external: do nothing."""


class PostgresSandbox(Sandbox):
    """One database; ``connect`` connects to it as the sandbox's own role."""

    kind: ClassVar[str] = "postgres"
    connection: PostgresConnectionInfo
    """Writable sandboxes: the cluster's administrator, for the runtime's own work only (never
    hand it to dataset code or judges: use ``owner_connection``). Read-only views: their reader
    role, which can only read."""

    @abstractmethod
    def connect(
        self, statement: str | None = None
    ) -> AbstractAsyncContextManager[PostgresConnection]:
        """A connection to the sandbox database, as ``async with sandbox.connect(sql) as conn``:
        as the sandbox role of a writable sandbox (see ``owner_connection``), as the reader role
        of a read-only view.

        Each call behaves like a fresh MCP server call: autocommit, no session state left by
        earlier calls (settings, temporary tables, prepared statements), and a transaction left
        open when the block ends is rolled back. ``statement`` (the SQL text about to run, or
        ``None``) is a hint a backend may use; roles the connection creates belong to this
        sandbox and are dropped with it.
        """

    @abstractmethod
    async def owner_connection(self) -> PostgresConnectionInfo:
        """A connection as the sandbox role: it owns this database's objects and can reach
        nothing else (no superuser, no other database); made with the sandbox, dropped with it.
        What verifiers, replayed calls and the judges' writable SQL server use. Writable
        sandboxes only."""

    @abstractmethod
    def connect_as_owner(self) -> AbstractAsyncContextManager[PostgresConnection]:
        """Like ``connect``, as the role of ``owner_connection``."""

    def stand_ins(self) -> dict[str, str]:
        """The runtime's roles that own this database's objects where a recording made as the
        server's administrator shows the administrator, each with the name it stands in for
        (none by default)."""
        return {}

    def as_administrator(self, text: str) -> str:
        """``text`` (a tool's answer) with the names of ``stand_ins`` replaced by the names they
        stand in for: what an agent connected as the administrator would have been shown."""
        names = self.stand_ins()
        if not names:
            return text
        pattern = r"(?<![\w$])(?:" + "|".join(map(re.escape, names)) + r")(?![\w$])"
        return re.sub(pattern, lambda match: names[match.group()], text)

    @abstractmethod
    async def freeze(self) -> PostgresSnapshot:
        """Freeze the database into a template (see ``Sandbox.freeze``)."""


class PostgresSnapshot(Snapshot):
    """A frozen database (a template nobody connects to)."""

    kind: ClassVar[str] = "postgres"

    @abstractmethod
    async def clone(self, *, writable: bool = True) -> PostgresSandbox:
        """A private copy or the shared read-only view (see ``Snapshot.clone``)."""


class PostgresProvider(SandboxProvider):
    """Creates Postgres sandboxes in one cluster."""

    kind: ClassVar[str] = "postgres"
