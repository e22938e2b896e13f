"""The rows a judge's SQL call answers with: JSON values, capped in rows and bytes while read.

Owns running a script's last statement so that its answer stays small whatever it selects:
at most ``max_rows`` rows, no value longer than ``max_value_bytes`` and no answer longer than
``max_answer_bytes``, with the real row count and a list of what was cut.

The caps hold while the rows are read, not after: when the last statement is a query (or a
write with RETURNING) whose columns may hold long values, it runs wrapped in a SELECT that sends
each long value's size and first bytes instead of the value, so a 100 MB value never crosses
the connection. Its columns are named from the parse (``inspection.output_names``) when it can
tell them, so that only the wrapped statement is prepared; otherwise it is described first.

Rows come through a cursor in batches sized so that one batch carries at most
``BATCH_ANSWERS`` answers' worth of bytes; once the answer is full the rest is only counted
(``MOVE``), never sent. Statements that cannot be wrapped (SHOW, EXPLAIN, FETCH, MERGE ...
RETURNING, SQL the parser refuses) are read in small batches and their values cut once read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

import asyncpg

from mcp_servers.sql.agent_tools import json_value
from mcp_servers.sql.errors import SqlFailure
from mcp_servers.sql.inspection import Script, Statement, output_names
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

NUMERIC_BYTES = 131072 + 16383 + 2
"""The longest text of a ``numeric`` (digits before and after the point, sign and point): what
a numeric value counts for when sizing batches."""

_MOVE_STEP = 2**31 - 1
"""The largest row count ``MOVE FORWARD`` takes."""

SMALL_TYPES = frozenset(
    {
        *("bool", "int2", "int4", "int8", "float4", "float8", "oid", "money", "char", "name"),
        "numeric",  # at most ~147 kB of digits: bounded, cut once read
        *("date", "time", "timetz", "timestamp", "timestamptz", "interval", "uuid"),
        *("xid", "xid8", "cid", "tid", "pg_lsn", "inet", "cidr", "macaddr", "macaddr8"),
        *("point", "lseg", "box", "circle", "line", "void", "regclass", "regtype", "regrole"),
        *("regnamespace", "regproc", "regoper", "regconfig", "regdictionary", "regcollation"),
    }
)
"""Built-in types whose values are short (a few dozen bytes; numeric a bounded number of
digits): not wrapped, their values cut once read should one still be too long."""

SHAPES_KEPT = 256
"""Statements whose long-valued columns a session remembers (see ``run_capped``)."""

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


def wrappable(statement: Statement) -> bool:
    """Whether a statement's rows can be capped on the server: a query (not SELECT INTO, no
    writing CTE), or an INSERT, UPDATE or DELETE with RETURNING (no writing CTE of its own)."""
    if statement.facts.writes:
        return False
    if statement.kind == "SelectStmt":
        return "intoClause" not in statement.fields
    return (
        statement.kind in ("InsertStmt", "UpdateStmt", "DeleteStmt")
        and "returningClause" in statement.fields
    )


def _wrapper(statement: Statement, text: str, count: int, capped: list[int], cap: int) -> _Wrapper:
    """``text`` (a ``wrappable`` statement of ``count`` columns) wrapped so that a capped
    column longer than ``cap`` bytes (as text) comes as NULL, with an extra column (one per
    capped column, after the statement's own) holding ``"<size> <first cap characters>"``.

    The measure works on any type (its text form: a no-op for text) and keeps each column's
    type. Every name is schema-qualified: a judge's ``search_path`` must not choose what runs
    here. The statement is not evaluated twice where that could matter: PostgreSQL keeps a
    subquery whose columns call volatile functions apart.
    """
    values = ", ".join(f"aj_v{index}" for index in range(count))
    texts = {index: f"q.aj_v{index}::pg_catalog.text" for index in capped}
    longer = {
        index: f"pg_catalog.octet_length({texts[index]}) OPERATOR(pg_catalog.>) {cap}"
        for index in capped
    }
    columns = [
        f"CASE WHEN {longer[index]} THEN NULL ELSE q.aj_v{index} END"
        if index in longer
        else f"q.aj_v{index}"
        for index in range(count)
    ]
    columns.extend(
        f"CASE WHEN {longer[index]} THEN pg_catalog.octet_length({texts[index]})::pg_catalog.text"
        f" OPERATOR(pg_catalog.||) ' ' OPERATOR(pg_catalog.||)"
        f" pg_catalog.left({texts[index]}, {cap}) END"
        for index in capped
    )
    select = "SELECT " + ", ".join(columns)
    if statement.kind == "SelectStmt":
        head = f"{select} FROM (\n"
        tail = f"\n) AS q({values})"
    else:
        # A statement that writes may only be a CTE of the top-level WITH.
        head = f"WITH q({values}) AS (\n"
        tail = f"\n) {select} FROM q"
    return _Wrapper(head + text + tail, len(head))


# ---------------------------------------------------------------------------------------------
# Running a script
# ---------------------------------------------------------------------------------------------


def _last_statement(script: str, parsed: Script | None) -> tuple[int, int, Statement | None]:
    """Where the last statement starts and ends (before its semicolon), and its parse (None
    when the parser refused the SQL)."""
    if parsed is not None:
        if not parsed.statements:
            raise SqlFailure("the SQL text contains no statement")
        last = parsed.statements[-1]
        return last.start, last.end, last
    spans = split_statements(script)
    if not spans:
        raise SqlFailure("the SQL text contains no statement")
    return spans[-1][0], spans[-1][1], None


async def _prepare(conn: PostgresConnection, sql: str) -> Any:
    """``sql`` prepared, with the text codecs its columns need installed first."""
    prepared = await conn.prepare(sql)
    if await configure_codecs(conn, prepared.get_attributes()):
        prepared = await conn.prepare(sql)
    if prepared.get_parameters():
        raise SqlFailure(
            "the SQL has $1-style parameters, which this tool cannot bind; "
            "write the values into the SQL instead"
        )
    return prepared


async def run_capped(
    session: SqlSession,
    conn: PostgresConnection,
    script: str,
    limits: AnswerLimits,
    parsed: Script | None = None,
) -> CappedRows:
    """Run ``script`` in the open transaction: all statements but the last in one simple query,
    the last one through a cursor within ``limits``.

    ``parsed`` is the script's parse (statement boundaries, the last statement's kind and
    column names); without it the boundaries come from ``split_statements`` and nothing is
    wrapped. When the parse names the columns, only the wrapped statement is prepared: with
    every column capped the first time, then only the columns whose type may hold long values
    (``SqlSession.shapes`` remembers them; the types are checked again on every call, before
    anything runs). Otherwise the statement is described first.
    """
    last_start, last_end, statement = _last_statement(script, parsed)
    text = script[last_start:last_end]
    offset = 0
    try:
        if last_start:
            await conn.execute(script[:last_start])
        offset = last_start
        if not conn.is_in_transaction():  # the script committed (unrestricted mode)
            await conn.execute("BEGIN")
        if statement is not None and wrappable(statement):
            names = output_names(statement)
            if names is not None:
                shape = _Shape(statement, text, names, script, last_start)
                read = await _read_shaped(session, conn, shape, limits)
                if read is not None:
                    return read
        prepared = await _prepare(conn, script[last_start:])
        attributes = prepared.get_attributes()
        if not attributes:
            await prepared.fetch()
            return CappedRows(None, [], 0, prepared.get_statusmsg())
        names = [attribute.name for attribute in attributes]
        capped = [index for index, attribute in enumerate(attributes) if not _small(attribute)]
        if not capped or statement is None or not wrappable(statement):
            return await _read(
                conn, prepared, names, attributes, [] if not capped else None, limits
            )
        wrapper = _wrapper(statement, text, len(attributes), capped, limits.max_value_bytes)
        offset = last_start - wrapper.offset
        reader = await _prepare(conn, wrapper.sql)
        return await _read(conn, reader, names, attributes, capped, limits)
    except asyncpg.PostgresError as error:
        raise session.failure(error, script, offset) from None


@dataclass(frozen=True)
class _Shape:
    """The last statement of a script, with the column names its parse gives."""

    statement: Statement
    text: str
    names: list[str]
    script: str
    start: int
    """Where ``text`` starts in ``script``."""


async def _read_shaped(
    session: SqlSession, conn: PostgresConnection, shape: _Shape, limits: AnswerLimits
) -> CappedRows | None:
    """Read a statement whose columns the parse names, wrapped with the columns remembered as
    long-valued (all of them the first time); None when the wrapper does not have the columns
    counted (the caller describes the statement instead)."""
    key = hash(shape.text)
    count = len(shape.names)
    capped = list(session.shapes.get(key, range(count)))
    for _ in range(2):
        wrapper = _wrapper(shape.statement, shape.text, count, capped, limits.max_value_bytes)
        try:
            reader = await _prepare(conn, wrapper.sql)
            attributes = reader.get_attributes()
            if len(attributes) != count + len(capped):
                return None
            values = attributes[:count]
            needed = [index for index, attribute in enumerate(values) if not _small(attribute)]
            if set(needed) <= set(capped):
                session.shapes.pop(key, None)
                session.shapes[key] = tuple(needed)
                while len(session.shapes) > SHAPES_KEPT:
                    session.shapes.pop(next(iter(session.shapes)))
                return await _read(conn, reader, shape.names, values, capped, limits)
        except asyncpg.PostgresError as error:
            raise session.failure(error, shape.script, shape.start - wrapper.offset) from None
        capped = needed  # the types changed since: wrap what they need now
    return None


async def _read(
    conn: PostgresConnection,
    reader: Any,
    names: list[str],
    attributes: Sequence[asyncpg.Attribute],
    capped: list[int] | None,
    limits: AnswerLimits,
) -> CappedRows:
    """Read the rows of ``reader`` within ``limits``: ``names`` and ``attributes`` of the
    statement's columns, ``capped`` those the wrapper caps (None when the statement is not
    wrapped and values are cut once read)."""
    names = unique_names(names)
    zone = session_zone(conn)
    count = len(attributes)
    if capped is None:
        batch = UNWRAPPED_BATCH_ROWS
    else:
        worst = sum(
            limits.max_value_bytes
            if index in capped
            else NUMERIC_BYTES
            if attribute.type.name == "numeric"
            else _SMALL_VALUE_BYTES
            for index, attribute in enumerate(attributes)
        )
        batch = BATCH_ANSWERS * limits.max_answer_bytes // max(worst, 1)
    batch = max(1, min(batch, limits.max_rows))
    extra = {index: count + position for position, index in enumerate(capped or [])}
    result = CappedRows(names, [], 0)
    used = 2  # the brackets of the rows' JSON array
    cursor = await reader.cursor()
    while True:
        records = await cursor.fetch(batch)
        result.total += len(records)
        for record in records:
            if result.bytes_full or len(result.rows) >= limits.max_rows:
                continue
            row, cuts = _row(record, names, attributes, extra, limits, zone)
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
    limits: AnswerLimits,
    zone: tzinfo,
) -> tuple[dict[str, Any], list[tuple[str, int]]]:
    """One row as JSON, and the (column, full size) of each value cut in it. ``extra`` maps a
    wrapped column to where its size and first characters are; other values are cut once
    read."""
    row: dict[str, Any] = {}
    cuts: list[tuple[str, int]] = []
    cap = limits.max_value_bytes
    for index, name in enumerate(names):
        where = extra.get(index)
        if where is not None and values[where] is not None:
            size, _, first = values[where].partition(" ")
            row[name] = _prefix(first, cap)
            cuts.append((name, int(size)))
            continue
        cell, full = _cut_after(json_cell(values[index], attributes[index], zone), cap)
        if full is not None:
            cuts.append((name, full))
        row[name] = cell
    return row, cuts


def _cut_after(cell: Any, limit: int) -> tuple[Any, int | None]:
    """A value read whole, cut to ``limit`` bytes of its JSON text when longer (and its size)."""
    if isinstance(cell, str):
        if len(cell) * 4 <= limit:  # at most 4 bytes a character
            return cell, None
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
