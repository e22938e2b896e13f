"""The rows a judge's SQL call answers with: JSON values, capped in rows and bytes while read.

Owns running a script's last statement so that its answer stays small whatever it selects:
at most ``max_rows`` rows, no value longer than ``max_value_bytes`` and no answer longer than
``max_answer_bytes``, with the real row count and a list of what was cut.

The caps hold while the rows are read, not after: the statement is described first, and when
it is a query (or a write with RETURNING) whose columns may hold long values it runs wrapped in
a SELECT that sends each long value's first bytes and its size instead of the value, so a
100 MB value never crosses the connection. Rows come through a cursor in batches sized so that
one batch carries at most ``BATCH_ANSWERS`` answers' worth of bytes; once the answer is full
the rest is only counted (``MOVE``), never sent. Statements that cannot be wrapped (SHOW,
EXPLAIN, FETCH, MERGE ... RETURNING, SQL the parser refuses) are read in small batches and their
values cut once read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

import asyncpg
from pglast import ast

from mcp_servers.sql.agent_tools import json_value
from mcp_servers.sql.errors import SqlFailure
from mcp_servers.sql.inspection import Script, writes_in
from mcp_servers.sql.statements import split_statements
from mcp_servers.sql.values import configure_codecs, convert_value, session_zone

if TYPE_CHECKING:
    from mcp_servers.sql.access import SqlSession
    from sandboxes.postgres.sandbox import PostgresConnection

DEFAULT_MAX_VALUE_BYTES = 64 * 1024
"""Bytes of one value an answer shows at most unless the server is configured otherwise."""

DEFAULT_MAX_ANSWER_BYTES = 1024 * 1024
"""Bytes of rows one answer holds at most unless the server is configured otherwise."""

BATCH_ANSWERS = 4
"""One batch of rows carries at worst (every value as long as the cap allows) this many
answers' worth of bytes: few round trips for small rows, a bounded transfer for large ones."""

UNWRAPPED_BATCH_ROWS = 50
"""Rows per batch of a statement whose values cannot be capped before they are sent."""

_SMALL_VALUE_BYTES = 64
"""What a value of a fixed-size type counts for when sizing batches."""

_MOVE_STEP = 2**31 - 1
"""The largest row count ``MOVE FORWARD`` takes."""

SMALL_TYPES = frozenset(
    {
        *("bool", "int2", "int4", "int8", "float4", "float8", "oid", "money", "char", "name"),
        *("date", "time", "timetz", "timestamp", "timestamptz", "interval", "uuid"),
        *("xid", "xid8", "cid", "tid", "pg_lsn", "inet", "cidr", "macaddr", "macaddr8"),
        *("point", "lseg", "box", "circle", "line", "void", "regclass", "regtype", "regrole"),
        *("regnamespace", "regproc", "regoper", "regconfig", "regdictionary", "regcollation"),
    }
)
"""Built-in types whose values are a few dozen bytes at most: never wrapped."""

CUT_LISTED = 20
"""Cut values an answer lists one by one (it counts them all)."""


@dataclass(frozen=True)
class AnswerLimits:
    """The caps of one server's answers."""

    max_rows: int
    max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES

    def __post_init__(self) -> None:
        for name in ("max_rows", "max_value_bytes", "max_answer_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")


@dataclass(frozen=True)
class CutValue:
    """A value shown only in part: where, and how many bytes it has in all."""

    row: int
    column: str
    size: int


@dataclass
class CappedRows:
    """The last statement's outcome: its columns and first rows, or its command status."""

    columns: list[str] | None
    """Column names (made unique); None when the statement returns no rows description."""
    rows: list[dict[str, Any]]
    """The rows the caps let through, values JSON-safe."""
    total: int
    """How many rows the statement returned in all."""
    status: str | None = None
    """The command tag (``UPDATE 3``) of a statement without rows description."""
    cut: list[CutValue] = field(default_factory=list)
    """Values cut to ``max_value_bytes``, in row order."""
    bytes_full: bool = False
    """Whether rows were left out because the answer reached ``max_answer_bytes``."""


# ---------------------------------------------------------------------------------------------
# JSON values
# ---------------------------------------------------------------------------------------------


def json_safe(value: Any) -> Any:
    """A converted value as JSON: numbers, booleans, strings, lists and objects only."""
    value = json_value(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(value, list):
        return [json_safe(item) for item in value]
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    return value


def unique_names(names: list[str]) -> list[str]:
    """Column names with repeats suffixed (``a``, ``a_2``) so rows keep every value."""
    seen: dict[str, int] = {}
    result = []
    for name in names:
        count = seen.get(name, 0) + 1
        seen[name] = count
        candidate = name if count == 1 else f"{name}_{count}"
        while count > 1 and candidate in seen:
            count += 1
            candidate = f"{name}_{count}"
        if candidate != name:
            seen[candidate] = 1
        result.append(candidate)
    return result


def json_cell(value: Any, attribute: asyncpg.Attribute, zone: tzinfo) -> Any:
    """One value of a result column as JSON."""
    kind, name = attribute.type.kind, attribute.type.name
    try:
        converted = convert_value(
            value, attribute.type.oid, kind, name, attribute.type.schema, zone
        )
    except SqlFailure as refusal:  # +-infinity dates and timestamps
        return "-infinity" if "-infinity" in str(refusal) else "infinity"
    return json_safe(converted)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _prefix(text: str, limit: int) -> str:
    """The first ``limit`` bytes of ``text`` (UTF-8), not splitting a character."""
    return text.encode()[:limit].decode(errors="ignore")


# ---------------------------------------------------------------------------------------------
# The wrapper that caps values on the server
# ---------------------------------------------------------------------------------------------


def _small(attribute: asyncpg.Attribute) -> bool:
    return attribute.type.schema == "pg_catalog" and attribute.type.name in SMALL_TYPES


@dataclass(frozen=True)
class _Wrapper:
    sql: str
    offset: int
    """Where the statement starts in ``sql`` (to place the server's error positions)."""


def _wrapper(
    node: ast.Node | None, statement: str, count: int, capped: list[int], cap: int
) -> _Wrapper | None:
    """``statement`` wrapped so that its capped columns come as (NULL, first ``cap``
    characters, size) when longer than ``cap`` bytes; None when it cannot be wrapped.

    Every name is schema-qualified: a judge's ``search_path`` must not choose what runs here.
    """
    values = ", ".join(f"aj_v{index}" for index in range(count))
    texts = "".join(f", q.aj_v{index}::pg_catalog.text AS aj_t{index}" for index in capped)
    longer = {
        index: f"pg_catalog.octet_length(s.aj_t{index}) OPERATOR(pg_catalog.>) {cap}"
        for index in capped
    }
    columns = [
        f"CASE WHEN {longer[index]} THEN NULL ELSE s.aj_v{index} END"
        if index in longer
        else f"s.aj_v{index}"
        for index in range(count)
    ]
    for index in capped:
        columns.append(f"CASE WHEN {longer[index]} THEN pg_catalog.left(s.aj_t{index}, {cap}) END")
        columns.append(f"CASE WHEN {longer[index]} THEN pg_catalog.octet_length(s.aj_t{index}) END")
    select = "SELECT " + ", ".join(columns)
    # OFFSET 0 keeps the inner SELECT apart, so each value becomes text once.
    if isinstance(node, ast.SelectStmt) and node.intoClause is None and not writes_in(node):
        head = f"{select} FROM (SELECT q.*{texts} FROM (\n"
        tail = f"\n) AS q({values}) OFFSET 0) AS s"
    elif (
        isinstance(node, ast.InsertStmt | ast.UpdateStmt | ast.DeleteStmt)
        and node.returningClause is not None
        and (node.withClause is None or not writes_in(node.withClause))
    ):
        # A statement that writes may only be a CTE of the top-level WITH.
        head = f"WITH q({values}) AS (\n"
        tail = f"\n) {select} FROM (SELECT q.*{texts} FROM q OFFSET 0) AS s"
    else:
        return None
    return _Wrapper(head + statement + tail, len(head))


# ---------------------------------------------------------------------------------------------
# Running a script
# ---------------------------------------------------------------------------------------------


def _last_statement(script: str, parsed: Script | None) -> tuple[int, int, ast.Node | None]:
    """Where the last statement starts and ends (before its semicolon), and its parse (None
    when the parser refused the SQL)."""
    if parsed is not None:
        if not parsed.statements:
            raise SqlFailure("the SQL text contains no statement")
        last = parsed.statements[-1]
        return last.start, last.end, last.node
    spans = split_statements(script)
    if not spans:
        raise SqlFailure("the SQL text contains no statement")
    return spans[-1][0], spans[-1][1], None


async def run_capped(
    session: SqlSession,
    conn: PostgresConnection,
    script: str,
    limits: AnswerLimits,
    parsed: Script | None = None,
) -> CappedRows:
    """Run ``script`` in the open transaction: all statements but the last in one simple query,
    the last one described, then read through a cursor within ``limits``.

    ``parsed`` is the script's parse (statement boundaries and the last statement's kind);
    without it the boundaries come from ``split_statements`` and nothing is wrapped.
    """
    last_start, last_end, node = _last_statement(script, parsed)
    offset = 0
    try:
        if last_start:
            await conn.execute(script[:last_start])
        offset = last_start
        last = script[last_start:]
        if not conn.is_in_transaction():  # the script committed (unrestricted mode)
            await conn.execute("BEGIN")
        prepared = await conn.prepare(last)
        if await configure_codecs(conn, prepared.get_attributes()):
            prepared = await conn.prepare(last)
        if prepared.get_parameters():
            raise SqlFailure(
                "the SQL has $1-style parameters, which this tool cannot bind; "
                "write the values into the SQL instead"
            )
        attributes = prepared.get_attributes()
        if not attributes:
            await prepared.fetch()
            return CappedRows(None, [], 0, prepared.get_statusmsg())
        capped = [index for index, attribute in enumerate(attributes) if not _small(attribute)]
        wrapper = (
            _wrapper(
                node, script[last_start:last_end], len(attributes), capped, limits.max_value_bytes
            )
            if capped
            else None
        )
        reader = prepared
        if wrapper is not None:
            offset = last_start - wrapper.offset
            last = wrapper.sql
            reader = await conn.prepare(last)
        return await _read(conn, reader, attributes, capped if wrapper else None, limits)
    except asyncpg.PostgresError as error:
        raise session.failure(error, script, offset) from None


async def _read(
    conn: PostgresConnection,
    reader: Any,
    attributes: Sequence[asyncpg.Attribute],
    capped: list[int] | None,
    limits: AnswerLimits,
) -> CappedRows:
    """Read the rows of ``reader`` within ``limits``; ``capped``: the wrapped columns (None
    when the statement is not wrapped and values are cut after they arrive)."""
    names = unique_names([attribute.name for attribute in attributes])
    zone = session_zone(conn)
    count = len(attributes)
    if capped is None:
        batch = UNWRAPPED_BATCH_ROWS
    else:
        worst = sum(
            limits.max_value_bytes if index in capped else _SMALL_VALUE_BYTES
            for index in range(count)
        )
        batch = BATCH_ANSWERS * limits.max_answer_bytes // max(worst, 1)
    batch = max(1, min(batch, limits.max_rows))
    extra = {index: count + 2 * position for position, index in enumerate(capped or [])}
    result = CappedRows(names, [], 0)
    used = 2  # the brackets of the rows' JSON array
    cursor = await reader.cursor()
    while True:
        records = await cursor.fetch(batch)
        result.total += len(records)
        for record in records:
            if result.bytes_full or len(result.rows) >= limits.max_rows:
                continue
            row, cuts = _row(record, names, attributes, extra, capped is None, limits, zone)
            size = len(_dumps(row).encode()) + 1
            if used + size > limits.max_answer_bytes:
                result.bytes_full = True
                continue
            used += size
            result.cut.extend(CutValue(len(result.rows), name, full) for name, full in cuts)
            result.rows.append(row)
        if len(records) < batch:
            return result
        if result.bytes_full or len(result.rows) >= limits.max_rows:
            break
    # The answer is full: count the rest on the server without sending it.
    while (moved := await cursor.forward(_MOVE_STEP)) == _MOVE_STEP:
        result.total += moved
    result.total += moved
    return result


def _row(
    values: asyncpg.Record,
    names: list[str],
    attributes: Sequence[asyncpg.Attribute],
    extra: dict[int, int],
    cut_after: bool,
    limits: AnswerLimits,
    zone: tzinfo,
) -> tuple[dict[str, Any], list[tuple[str, int]]]:
    """One row as JSON, and the (column, full size) of each value cut in it. ``extra`` maps a
    wrapped column to where its cut text and size are; ``cut_after``: cut values read whole."""
    row: dict[str, Any] = {}
    cuts: list[tuple[str, int]] = []
    for index, name in enumerate(names):
        where = extra.get(index)
        if where is not None and values[where + 1] is not None:
            row[name] = _prefix(values[where], limits.max_value_bytes)
            cuts.append((name, int(values[where + 1])))
            continue
        cell = json_cell(values[index], attributes[index], zone)
        if cut_after:
            cell, full = _cut_after(cell, limits.max_value_bytes)
            if full is not None:
                cuts.append((name, full))
        row[name] = cell
    return row, cuts


def _cut_after(cell: Any, limit: int) -> tuple[Any, int | None]:
    """A value read whole, cut to ``limit`` bytes of its JSON text when longer (and its size)."""
    if isinstance(cell, str):
        encoded = cell.encode()
        if len(encoded) <= limit:
            return cell, None
        return encoded[:limit].decode(errors="ignore"), len(encoded)
    if isinstance(cell, list | dict):
        text = _dumps(cell)
        encoded = text.encode()
        if len(encoded) <= limit:
            return cell, None
        return encoded[:limit].decode(errors="ignore"), len(encoded)
    return cell, None


def json_rows(
    records: Sequence[asyncpg.Record],
    attributes: Sequence[asyncpg.Attribute],
    zone: tzinfo,
) -> tuple[list[str], list[dict[str, Any]]]:
    """Records of a prepared statement as JSON-safe row objects (no caps)."""
    names = unique_names([attribute.name for attribute in attributes])
    rows = [
        {
            name: json_cell(value, attribute, zone)
            for name, attribute, value in zip(names, attributes, record.values(), strict=True)
        }
        for record in records
    ]
    return names, rows


def answer_notes(result: CappedRows, limits: AnswerLimits) -> dict[str, Any]:
    """What an answer says about the rows and values it leaves out (empty when nothing is)."""
    notes: dict[str, Any] = {}
    sentences: list[str] = []
    omitted = result.total - len(result.rows)
    if omitted > 0:
        notes["rows_omitted"] = omitted
        why = (
            f"the answer reached this server's limit of {limits.max_answer_bytes} bytes"
            if result.bytes_full
            else f"this server returns at most {limits.max_rows} rows"
        )
        sentences.append(
            f"Only the first {len(result.rows)} of {result.total} rows are shown; {omitted} "
            f"row{'s were' if omitted > 1 else ' was'} omitted ({why}). Narrow the query with "
            "WHERE, LIMIT/OFFSET, fewer columns or aggregates to see the rest."
        )
    if result.cut:
        notes["values_cut"] = len(result.cut)
        notes["cut"] = [
            {"row": cut.row, "column": cut.column, "bytes": cut.size}
            for cut in result.cut[:CUT_LISTED]
        ]
        sentences.append(
            f"{len(result.cut)} value{'s' if len(result.cut) > 1 else ''} longer than "
            f"{limits.max_value_bytes} bytes {'are' if len(result.cut) > 1 else 'is'} cut to "
            f"{'their' if len(result.cut) > 1 else 'its'} first {limits.max_value_bytes} bytes "
            "(as text; 'cut' lists row, column and full size). Select substr(...) or "
            "length(...) to see other parts."
        )
    if sentences:
        notes["notice"] = " ".join(sentences)
    return notes
