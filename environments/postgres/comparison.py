"""How the postgres kind's recorded and replayed answers are compared, and which SQL only reads.

On top of the rules every kind shares (``environments.comparison``: root, line ends,
date-times, UUIDs), the SQL servers' answers (postgres-mcp, Supabase, InsForge) get:

- **Object ids in names.** PostgreSQL (up to 17) names NOT NULL constraints after the schema
  and table OIDs (``2200_16384_1_not_null``); OIDs depend on the server, so they become
  ``<OID>_<OID>_1_not_null``.
- **Order that nothing fixes.** Rows of an SQL result are sorted unless the statement that
  produced them has an ``ORDER BY``. The hosted servers' row lists are sorted the same way:
  Supabase's ``execute_sql`` (rows as JSON inside its untrusted-data fence, compared decoded)
  and InsForge's ``run-raw-sql`` (``rows`` of its JSON answer).
- **What is not the sandbox's state.** InsForge's ``get-instructions`` is documentation, the
  same whatever the state: its text is not compared. Its ``get-backend-metadata`` also
  describes the hosted service (auth providers, storage, functions, AI models, version) and
  the database's size on disk; those parts become marks, and the tables with their row counts
  are compared.

Generated ids from sequences are *not* masked: a replay into a fresh copy of the same template
hands out the same sequence values, so a difference there is a real divergence.

Whether SQL is a plain query (``is_query``: its replay's difference is then only in what the
agent was shown) is judged from its statements' first words (``SELECT``, ``VALUES``, ``TABLE``,
``SHOW``, ``EXPLAIN`` without ``ANALYZE``, ``WITH`` without a data-modifying verb); anything else
counts as a write.
"""

from __future__ import annotations

import json
import re
from typing import Any

from environments.comparison import common_lines, mask_datetimes, mask_uuids
from mcp_servers.sql.statements import split_statements, sql_text

SQL_RESULT_TOOLS = frozenset({"execute_sql", "run-raw-sql", "apply_migration"})
"""Tools whose output may be a list of rows."""

HOSTED_MARK = "<HOSTED SERVICE>"
"""What the hosted service's own configuration becomes."""

_NOT_NULL_NAME = re.compile(r"\b\d+_\d+_(\d+_not_null)\b")
_ORDER_BY = re.compile(r"\border\s+by\b", re.IGNORECASE)
_FENCED_ROWS = re.compile(r"(<untrusted-data-[^\n]*>\n)(.*)(\n</untrusted-data-)", re.DOTALL)
_INSFORGE_SQL_HEADING = "SQL query executed completed successfully:\n"
_INSFORGE_METADATA_HEADING = "Backend metadata:\n\n"
_HOSTED_PARTS = ("auth", "storage", "functions", "aiIntegration", "version")
_LEADING_COMMENTS = re.compile(r"^(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.DOTALL)
_QUERY_START = re.compile(r"^(SELECT|VALUES|TABLE|SHOW|EXPLAIN|WITH)\b", re.IGNORECASE)
_WRITING_WORD = re.compile(
    r"\b(INSERT|UPDATE|DELETE|MERGE|INTO|ANALY[SZ]E|COPY|NEXTVAL|SETVAL|LOCK|FOR\s+UPDATE|"
    r"FOR\s+SHARE)\b",
    re.IGNORECASE,
)


def is_query(sql: str) -> bool:
    """Whether every statement of ``sql`` only reads (judged from its words; see above)."""
    spans = split_statements(sql)
    if not spans:
        return False
    for start, end in spans:
        statement = _LEADING_COMMENTS.sub("", sql[start:end], count=1)
        if not _QUERY_START.match(statement) or _WRITING_WORD.search(statement):
            return False
    return True


def split_top_level(text: str) -> list[str] | None:
    """The elements of a Python-repr list (``[a, b, ...]``), or None if ``text`` is not one.

    Brackets inside quoted strings are ignored, so rows like ``{'name': 'a, [b]'}`` split right.
    """
    stripped = text.strip()
    if not (stripped.startswith("[") and stripped.endswith("]")):
        return None
    body = stripped[1:-1]
    elements: list[str] = []
    depth = 0
    quote: str | None = None
    start = 0
    index = 0
    while index < len(body):
        character = body[index]
        if quote:
            if character == "\\":
                index += 1
            elif character == quote:
                quote = None
        elif character in "'\"":
            quote = character
        elif character in "([{":
            depth += 1
        elif character in ")]}":
            depth -= 1
            if depth < 0:
                return None
        elif character == "," and depth == 0:
            elements.append(body[start:index].strip())
            start = index + 1
        index += 1
    if quote or depth:
        return None
    tail = body[start:].strip()
    if tail:
        elements.append(tail)
    return elements


def _sorted_rows(rows: Any) -> Any:
    if not isinstance(rows, list):
        return rows
    return sorted(rows, key=lambda row: json.dumps(row, ensure_ascii=False, sort_keys=True))


def _last_statement(sql: str) -> str:
    """The statement whose rows a script returns (the SQL tools' own splitter: quotes, dollar
    quotes and comments may hold semicolons)."""
    spans = split_statements(sql)
    if not spans:
        return sql
    start, end = spans[-1]
    return sql[start:end]


def _supabase_rows(text: str, statement: str) -> str:
    """Supabase's ``execute_sql``: the message decoded, its rows sorted unless ordered."""
    try:
        message = json.loads(text)
    except ValueError:
        return text
    if not isinstance(message, str):
        return text
    match = _FENCED_ROWS.search(message)
    if match is None or _ORDER_BY.search(_last_statement(statement)):
        return message
    try:
        rows = json.loads(match.group(2))
    except ValueError:
        return message
    body = json.dumps(_sorted_rows(rows), ensure_ascii=False, separators=(",", ":"))
    return message[: match.start(2)] + body + message[match.end(2) :]


def _insforge_rows(text: str, statement: str) -> str:
    """InsForge's ``run-raw-sql``: the rows of its answer sorted unless ordered."""
    if not text.startswith(_INSFORGE_SQL_HEADING) or _ORDER_BY.search(_last_statement(statement)):
        return text
    try:
        body = json.loads(text[len(_INSFORGE_SQL_HEADING) :])
    except ValueError:
        return text
    if not isinstance(body, dict):
        return text
    body["rows"] = _sorted_rows(body.get("rows"))
    return _INSFORGE_SQL_HEADING + json.dumps(body, ensure_ascii=False, indent=2)


def _insforge_metadata(text: str) -> str:
    """The hosted service's parts of InsForge's metadata become marks."""
    if not text.startswith(_INSFORGE_METADATA_HEADING):
        return text
    try:
        metadata = json.loads(text[len(_INSFORGE_METADATA_HEADING) :])
    except ValueError:
        return text
    if not isinstance(metadata, dict):
        return text
    for part in _HOSTED_PARTS:
        if part in metadata:
            metadata[part] = HOSTED_MARK
    database = metadata.get("database")
    if isinstance(database, dict) and "totalSizeInGB" in database:
        database["totalSizeInGB"] = HOSTED_MARK
    return _INSFORGE_METADATA_HEADING + json.dumps(metadata, ensure_ascii=False, indent=2)


def normalise_sql_output(
    text: str, *, tool: str, arguments: dict[str, Any] | None = None, root: str = ""
) -> str:
    """Every rule above, with the shared ones, for one answer (recorded or replayed)."""
    if tool == "get-instructions":
        return HOSTED_MARK
    text = mask_datetimes(common_lines(text, root))
    text = mask_uuids(_NOT_NULL_NAME.sub(r"<OID>_<OID>_\1", text))
    if tool == "get-backend-metadata":
        return _insforge_metadata(text)
    if tool not in SQL_RESULT_TOOLS:
        return text
    statement = sql_text(arguments or {})
    if tool == "run-raw-sql":
        return _insforge_rows(text, statement)
    if text.startswith('"'):
        return _supabase_rows(text, statement)
    rows = split_top_level(text)
    if rows is not None and not _ORDER_BY.search(_last_statement(statement)):
        text = "[" + ", ".join(sorted(rows)) + "]"
    return text
