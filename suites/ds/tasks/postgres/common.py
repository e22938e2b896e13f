"""Pieces every Postgres task of the DS suite uses.

* Scripted runs as data: a run is a list of ``Step`` (a tool call, the thought recorded with it
  and whether the script expects the server to answer with an error) and a final message.
  ``scripted`` turns such a list into a policy; a call whose error status is not the expected one
  stops the recording, so a run cannot silently drift from the story it was written to tell.
* SQL literals for the seeds, and ``insert_rows`` for multi-row INSERT statements.
* Fingerprints: the verifiers compare a table with what it must hold through a digest of its
  rows computed in SQL (``checks.table_fingerprint``), and the task modules compute the same
  digest in Python from the generated data (``fingerprint``).

The verifiers' own helpers are in ``checks`` and ``roles``; nothing here ends up in a
``verify.py``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from suites.ds.spec import AgentSession, Policy

Value = int | str | Decimal | date | None
"""A value of a generated row."""


@dataclass(frozen=True)
class Step:
    """One tool call of a scripted run."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    think: str | None = None
    error: bool = False
    """Whether the server is expected to answer with an error."""


class ScriptDriftError(RuntimeError):
    """A scripted call did (or did not) fail against the script's expectation."""


def sql(statement: str, think: str | None = None, *, error: bool = False) -> Step:
    """An ``execute_sql`` call."""
    return Step("execute_sql", {"sql": statement}, think, error)


def list_schemas(think: str | None = None) -> Step:
    """A ``list_schemas`` call."""
    return Step("list_schemas", {}, think)


def list_objects(schema: str, kind: str = "table", think: str | None = None) -> Step:
    """A ``list_objects`` call."""
    return Step("list_objects", {"schema_name": schema, "object_type": kind}, think)


def details(schema: str, name: str, kind: str = "table", think: str | None = None) -> Step:
    """A ``get_object_details`` call."""
    return Step(
        "get_object_details",
        {"schema_name": schema, "object_name": name, "object_type": kind},
        think,
    )


def explain(statement: str, think: str | None = None) -> Step:
    """An ``explain_query`` call (estimated plan, no hypothetical indexes)."""
    return Step("explain_query", {"sql": statement}, think)


def scripted(steps: Sequence[Step], final: str) -> Policy:
    """A policy that makes ``steps`` in order and ends with ``final``."""

    async def run(session: AgentSession) -> str:
        for number, step in enumerate(steps, start=1):
            if step.think:
                session.think(step.think)
            result = await session.call(step.tool, **step.arguments)
            if result.is_error != step.error:
                expected = "an error" if step.error else "success"
                raise ScriptDriftError(
                    f"step {number} ({step.tool}) expected {expected}, got: {result.text[:300]}"
                )
        return final

    return run


# ---------------------------------------------------------------------------------------------
# Seeds
# ---------------------------------------------------------------------------------------------


def literal(value: Value) -> str:
    """``value`` as an SQL literal."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        raise TypeError("booleans are not used in the seeds")
    if isinstance(value, int | Decimal):
        return str(value)
    if isinstance(value, date):
        return f"'{value.isoformat()}'"
    return "'" + value.replace("'", "''") + "'"


def insert_rows(
    table: str, columns: Sequence[str], rows: Iterable[Sequence[Value]], chunk: int = 500
) -> str:
    """Multi-row INSERT statements for ``rows`` (``chunk`` rows per statement)."""
    statements = []
    batch: list[str] = []
    head = f"INSERT INTO {table} ({', '.join(columns)}) VALUES\n"

    def flush() -> None:
        if batch:
            statements.append(head + ",\n".join(batch) + ";\n")
            batch.clear()

    for row in rows:
        batch.append("    (" + ", ".join(literal(value) for value in row) + ")")
        if len(batch) >= chunk:
            flush()
    flush()
    return "\n".join(statements)


def cents(amount: int) -> Decimal:
    """An amount in cents as a two-decimal ``Decimal``."""
    return (Decimal(amount) / 100).quantize(Decimal("0.01"))


# ---------------------------------------------------------------------------------------------
# Fingerprints
# ---------------------------------------------------------------------------------------------

NULL_MARK = "~"
"""How a NULL is written in a fingerprint."""


def _text(value: Value) -> str:
    if value is None:
        return NULL_MARK
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def fingerprint(rows: Iterable[Sequence[Value]]) -> tuple[int, str]:
    """Row count and digest of ``rows`` (already in key order), as ``checks.table_fingerprint``
    computes them: values as PostgreSQL prints them, ``|`` between values, a newline between
    rows."""
    lines = ["|".join(_text(value) for value in row) for row in rows]
    return len(lines), hashlib.md5("\n".join(lines).encode()).hexdigest()
