"""Normalisation of tool outputs before a recorded and a replayed output are compared.

Replay re-executes every call; an output that differs only in what legitimately changes between
two executions of the same call on the same state must still count as a match. The rules, applied
to both sides, in order:

1. **Sandbox root.** The sandbox's absolute root (a host directory, or ``/sandbox`` in a
   container) becomes ``${SANDBOX_ROOT}``, the placeholder recorded trajectories use.
2. **Line endings and trailing blanks.** ``\\r\\n`` becomes ``\\n``; spaces at line ends and blank
   lines at the end are dropped.
3. **Date-times** (a date *with* a time of day: ISO 8601 with ``T`` or a space, optional
   fractions and zone; JavaScript ``Date`` strings; ``datetime.datetime(...)`` reprs) become
   ``<DATETIME>``. Bare dates (``2024-03-04``) are data and are kept.
4. **UUIDs** become ``<UUID>``.
5. **Object ids in names.** PostgreSQL (up to 17) names NOT NULL constraints after the schema
   and table OIDs (``2200_16384_1_not_null``); OIDs depend on the server, so they become
   ``<OID>_<OID>_1_not_null``.
6. **File times.** In ``get_file_info`` output the ``created``, ``modified`` and ``accessed``
   lines keep their name only (the replayed file's times are the replay's, by design).
7. **Order that nothing fixes.** Lines of ``list_directory`` and ``search_files`` output are
   sorted (the reference server returns them in directory order); ``directory_tree`` JSON is
   compared with children sorted by name and keys in any order; rows of an SQL result are sorted
   unless the statement that produced them has an ``ORDER BY``.
   The hosted SQL servers' row lists are sorted the same way: Supabase's ``execute_sql`` (rows
   as JSON inside its untrusted-data fence, compared decoded) and InsForge's ``run-raw-sql``
   (``rows`` of its JSON answer).
8. **Directory sizes.** A directory's size is the filesystem's business (tmpfs, ext4 and overlay
   report different ones), so in ``list_directory_with_sizes`` sorted by size the ``[DIR]``
   lines are taken out of the order and listed after the files, by name; and in
   ``get_file_info`` of a directory the ``size`` line keeps its name only.
9. **What is not the sandbox's state.** InsForge's ``get-instructions`` is documentation, the
   same whatever the state: its text is not compared. Its ``get-backend-metadata`` also
   describes the hosted service (auth providers, storage, functions, AI models, version) and
   the database's size on disk; those parts become marks, and the tables with their row counts
   are compared.

Generated ids from sequences are *not* masked: a replay into a fresh copy of the same template
hands out the same sequence values, so a difference there is a real divergence.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

from dataset.models import SANDBOX_ROOT_PLACEHOLDER
from mcp_servers.sql.statements import split_statements, sql_text

DATETIME_MARK = "<DATETIME>"
"""What every date-time becomes."""

UUID_MARK = "<UUID>"
"""What every UUID becomes."""

_DATETIME_PATTERNS = [
    re.compile(
        r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?\b"
    ),
    re.compile(
        r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
        r" \d{2} \d{4} \d{2}:\d{2}:\d{2} GMT[+-]\d{4}(?: \([^)]*\))?"
    ),
    re.compile(r"datetime\.datetime\([^()]*(?:\([^()]*\)[^()]*)*\)"),
]
_UUID_PATTERN = re.compile(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
_NOT_NULL_NAME = re.compile(r"\b\d+_\d+_(\d+_not_null)\b")
_FILE_TIME_LINE = re.compile(r"^(created|modified|accessed): .*$", re.MULTILINE)
_ORDER_BY = re.compile(r"\border\s+by\b", re.IGNORECASE)

SORTED_LINE_TOOLS = frozenset({"list_directory", "search_files"})
"""Tools whose output lines come in an order nothing guarantees."""

SQL_RESULT_TOOLS = frozenset({"execute_sql", "run-raw-sql", "apply_migration"})
"""Tools whose output may be a list of rows."""


_SIZE_LINE = re.compile(r"(?m)^size: \d+$")


def _directories_after_files(text: str) -> str:
    """Rule 8: the entries of a size-sorted listing with the ``[DIR]`` lines moved to the end."""
    lines = text.split("\n")
    end = lines.index("") if "" in lines else len(lines)
    entries, rest = lines[:end], lines[end:]
    directories = sorted(line for line in entries if line.startswith("[DIR]"))
    files = [line for line in entries if not line.startswith("[DIR]")]
    return "\n".join([*files, *directories, *rest])


def replace_root(text: str, root: str) -> str:
    """Rule 1: the sandbox's root path becomes the placeholder."""
    if not root or root == SANDBOX_ROOT_PLACEHOLDER:
        return text
    return text.replace(root.rstrip("/"), SANDBOX_ROOT_PLACEHOLDER)


def _mask(text: str) -> str:
    for pattern in _DATETIME_PATTERNS:
        text = pattern.sub(DATETIME_MARK, text)
    text = _NOT_NULL_NAME.sub(r"<OID>_<OID>_\1", text)
    return _UUID_PATTERN.sub(UUID_MARK, text)


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


def _sorted_json(value: Any) -> Any:
    if isinstance(value, dict):
        result = {key: _sorted_json(item) for key, item in sorted(value.items())}
        children = result.get("children")
        if isinstance(children, list):
            result["children"] = sorted(children, key=json.dumps)
        return result
    if isinstance(value, list):
        return [_sorted_json(item) for item in value]
    return value


HOSTED_MARK = "<HOSTED SERVICE>"
"""What the hosted service's own configuration becomes (rule 9)."""
_FENCED_ROWS = re.compile(r"(<untrusted-data-[^\n]*>\n)(.*)(\n</untrusted-data-)", re.DOTALL)
_INSFORGE_SQL_HEADING = "SQL query executed completed successfully:\n"
_INSFORGE_METADATA_HEADING = "Backend metadata:\n\n"
_HOSTED_PARTS = ("auth", "storage", "functions", "aiIntegration", "version")


def _sorted_rows(rows: Any) -> Any:
    if not isinstance(rows, list):
        return rows
    return sorted(rows, key=lambda row: json.dumps(row, ensure_ascii=False, sort_keys=True))


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
    """Rule 9: the hosted service's parts of InsForge's metadata become marks."""
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


def normalise_output(
    text: str, *, tool: str, arguments: dict[str, Any] | None = None, root: str = ""
) -> str:
    """Apply every rule above to one tool output (recorded or replayed)."""
    if tool == "get-instructions":
        return HOSTED_MARK
    text = replace_root(text, root).replace("\r\n", "\n")
    text = "\n".join(line.rstrip() for line in text.split("\n")).rstrip("\n")
    if tool == "get_file_info":
        text = _FILE_TIME_LINE.sub(lambda match: f"{match.group(1)}: {DATETIME_MARK}", text)
        if "\nisDirectory: true" in text:
            text = _SIZE_LINE.sub("size: <SIZE>", text)
    text = _mask(text)
    if tool in SORTED_LINE_TOOLS:
        text = "\n".join(sorted(text.split("\n")))
    elif tool == "list_directory_with_sizes" and (arguments or {}).get("sortBy") == "size":
        text = _directories_after_files(text)
    elif tool == "directory_tree":
        with contextlib.suppress(ValueError):
            text = json.dumps(_sorted_json(json.loads(text)), indent=2, sort_keys=True)
    elif tool == "get-backend-metadata":
        text = _insforge_metadata(text)
    elif tool in SQL_RESULT_TOOLS:
        statement = sql_text(arguments or {})
        if tool == "run-raw-sql":
            return _insforge_rows(text, statement)
        if text.startswith('"'):
            return _supabase_rows(text, statement)
        rows = split_top_level(text)
        if rows is not None and not _ORDER_BY.search(_last_statement(statement)):
            text = "[" + ", ".join(sorted(rows)) + "]"
    return text


def _last_statement(sql: str) -> str:
    """The statement whose rows a script returns (the SQL tools' own splitter: quotes, dollar
    quotes and comments may hold semicolons)."""
    spans = split_statements(sql)
    if not spans:
        return sql
    start, end = spans[-1]
    return sql[start:end]
