"""The postgres kind: one database of a Postgres cluster, served by the SQL MCP server.

Owns the kind's record (``kind.PostgresKind``, registered as ``postgres``, served as ``sql``)
and the typed accessor ``as_postgres_sandbox``. The sandboxes and clusters are
``sandboxes.postgres``'s and the tools ``mcp_servers.sql``'s; this package only ties them to the
rest of the runtime.
"""

from environments.postgres.kind import KIND, PostgresKind, as_postgres_sandbox

__all__ = ["KIND", "PostgresKind", "as_postgres_sandbox"]
