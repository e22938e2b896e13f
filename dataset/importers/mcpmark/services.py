"""The MCP services MCPMark runs name, the tool server behind each, and how each reports failure.

Owns the table from ``meta.json``'s ``mcp`` value to the task family (where the task folders live),
the dataset's domain and subdomain, and the tool server implementation replay must answer as.
Also owns the per-server rule that says when an output the server did not flag was a failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Service:
    """One MCP service of MCPMark: where its tasks live and which tool server answered."""

    family: str
    """The service whose task folders and environments the run used (``tasks/<family>/...``)."""

    domain: str
    """The dataset domain of its tasks."""

    subdomain: str
    """The dataset subdomain of its tasks."""

    server: str
    """The tool server implementation (``Trajectory.tool_server``)."""


SERVICES: dict[str, Service] = {
    "filesystem": Service("filesystem", "ds", "filesystem", "filesystem"),
    "postgres": Service("postgres", "ds", "postgres", "postgres-mcp"),
    "supabase": Service("postgres", "ds", "postgres", "supabase"),
    "insforge": Service("postgres", "ds", "postgres", "insforge"),
}
"""``meta.json``'s ``mcp`` values this importer understands. MCPMark's ``postgres`` service
launches postgres-mcp (crystaldba); Supabase's and InsForge's servers work on Postgres too, so their
runs belong to the same tasks."""

SERVER_COLLATIONS: dict[str, str] = {
    "postgres-mcp": "en_US.utf8",
    "insforge": "en_US.utf8",
    "supabase": "C",
}
"""How the databases behind each server sorted text when MCPMark recorded its runs. Seen in
the recordings: postgres-mcp's and InsForge's ``ORDER BY name`` put "Abraham, Martin And John"
before "A Cor Do Sol" (glibc's ``en_US`` ignores spaces and punctuation at first; ICU's
``en-US`` would not), Supabase's put it after, as ``C`` does. Replay starts each run's database
under its server's collation (``--collation`` overrides)."""

SERVER_ROLES: dict[str, tuple[str, ...]] = {
    "supabase": ("anon", "authenticated", "service_role"),
}
"""Roles every database of a server has before a task begins, which agents' SQL names: a run
recorded on Supabase may grant to ``anon`` or write a policy for ``authenticated``, so its replay
starts where these roles exist (``SqlSeedState.server_roles``)."""

SERVICE_ALIASES = {"crystaldba": "postgres", "postgres-mcp": "postgres"}
"""Folder names of the community results that name a server rather than an ``mcp`` value."""

# postgres-mcp catches every exception of a tool and answers "Error: <message>" as ordinary
# content, with isError false. Its successful outputs are Python reprs of rows or objects
# ("[...]", "{...}") or "No results", so a result that starts with "Error: " is always a failure.
_UNFLAGGED_ERRORS: dict[str, re.Pattern[str]] = {"postgres-mcp": re.compile(r"^Error: ")}


def service_named(name: str | None) -> Service | None:
    """The service an ``mcp`` value (or a server folder name) stands for; None when unknown."""
    if not name:
        return None
    lowered = name.lower()
    return SERVICES.get(SERVICE_ALIASES.get(lowered, lowered))


def reads_as_unflagged_error(server: str | None, text: str) -> bool:
    """True when ``server`` reports failures as plain content and ``text`` is one of them."""
    rule = _UNFLAGGED_ERRORS.get(server or "")
    return rule is not None and rule.match(text) is not None
