"""Running SQL as the Node.js servers behind Supabase's and InsForge's tools did (node-postgres).

Owns what those servers saw of a script and how they printed it:

* **Execution.** A script goes to the server as one simple query: every statement in one
  implicit transaction, each with its own result (command tag, row count, rows, fields); a
  failure rolls the whole script back and reports the server's primary message only (no
  ``LINE``/``DETAIL`` lines, unlike libpq). Reproduced statement by statement inside ``BEGIN``
  (a script with a single statement that cannot run in a transaction block runs on its own).
* **Values.** node-postgres reads the text form of every column through ``pg-types``:
  ``int2``/``int4``/``oid`` and floats become numbers, ``bool`` booleans, ``json``/``jsonb``
  parsed, dates and timestamps JavaScript ``Date`` objects (serialised in UTC with
  milliseconds), intervals objects of their non-zero parts, ``bytea`` a ``Buffer``, arrays of
  those types arrays; everything else (``numeric``, ``int8``, text, uuid, unknown types such as
  ``name[]``) stays PostgreSQL text. Supabase's pg-meta overrides ``int8`` (a number when it is a
  safe integer) and leaves dates, timestamps and intervals as text (``TypeStyle``).
* **JSON.** ``js_json`` prints a value as ``JSON.stringify`` does (number formatting included).

It also tells, as ``driver`` does for postgres-mcp, whether the script's transaction wrote.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import TYPE_CHECKING, Any

import asyncpg

from mcp_servers.sql.driver import transaction_wrote
from mcp_servers.sql.statements import split_statements
from mcp_servers.sql.values import pg_text

if TYPE_CHECKING:
    from sandboxes.postgres.sandbox import PostgresConnection


class TypeStyle(Enum):
    """Which set of type parsers the server's node-postgres had."""

    NODE = "node"
    """``pg-types`` defaults (InsForge)."""
    PG_META = "pg-meta"
    """Supabase's pg-meta: ``int8`` as a number when safe; dates, timestamps, intervals as text."""


class NodeFailure(Exception):  # noqa: N818 - carries the server's message, like SqlFailure
    """A failed script; ``str()`` is the server's primary message, as node-postgres gives it."""


@dataclass
class StatementResult:
    """One statement's result as node-postgres builds it."""

    command: str | None
    """The command tag's verb (``INSERT``, ``SELECT``, ``CREATE``...)."""
    row_count: int | None
    """The count in the command tag (inserted, updated, selected rows); None when it has none."""
    fields: list[tuple[str, int]] = field(default_factory=list)
    """``(name, type oid)`` of each column; empty for a statement without a row description."""
    rows: list[dict[str, Any]] = field(default_factory=list)
    """The rows, values parsed as the server's type parsers do."""


@dataclass
class NodeOutcome:
    """Every statement's result, in order, and whether the transaction wrote."""

    results: list[StatementResult]
    wrote: bool | None = None


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------

_NUMBER_TYPES = frozenset({21, 23, 26, 700, 701})
"""int2, int4, oid, float4, float8: ``parseInt`` / ``parseFloat``."""
_DATE_TYPES = frozenset({1082, 1114, 1184})
"""date, timestamp, timestamptz: JavaScript dates."""
_ARRAY_ELEMENTS = {
    1000: 16,
    1005: 21,
    1007: 23,
    1016: 20,
    1028: 26,
    1021: 700,
    1022: 701,
    1231: 1700,
    1014: 25,
    1015: 25,
    1009: 25,
    1008: 25,
    1041: 25,
    651: 25,
    1040: 25,
    2951: 25,
    1183: 25,
    1270: 25,
    1115: 1114,
    1182: 1082,
    1185: 1184,
    1187: 1186,
    199: 114,
    3807: 3802,
    1001: 17,
}
"""Array types ``pg-types`` parses, with the element type it parses their items as (text types
as 25); arrays of any other type stay PostgreSQL text (``name[]`` prints as ``{a,b}``)."""
_BINARY_IS_ENOUGH = frozenset(
    {"bool", "int2", "int4", "int8", "oid", "float4", "float8", "text", "varchar", "bpchar"}
    | {"name", "uuid", "json", "jsonb", "bytea"}
)
"""Types whose asyncpg value carries everything node-postgres would make of their text."""


_TIMESTAMP = re.compile(
    r"^(\d{4,})-(\d\d)-(\d\d)(?:[ T](\d\d):(\d\d):(\d\d)(?:\.(\d+))?)?"
    r"(?:([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?|Z)?( BC)?$"
)


def js_date(text: str) -> str | None:
    """A date or timestamp's text as ``JSON.stringify`` prints the ``Date`` pg-types makes of
    it (a zone-less value read as UTC); None (JSON ``null``) for infinities."""
    match = _TIMESTAMP.match(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, sign, zh, zm, zs, bc = match.groups()
    if bc or int(year) > 9999:
        return None
    millis = int((fraction or "0")[:3].ljust(3, "0"))
    moment = datetime(
        int(year),
        int(month),
        int(day),
        int(hour or 0),
        int(minute or 0),
        int(second or 0),
        millis * 1000,
        tzinfo=UTC,
    )
    if sign:
        offset = timedelta(hours=int(zh), minutes=int(zm or 0), seconds=int(zs or 0))
        moment = moment - offset if sign == "+" else moment + offset
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


_INTERVAL_PART = re.compile(r"([+-]?\d+) (year|mon|day)s?")
_INTERVAL_TIME = re.compile(r"([+-])?(\d+):(\d\d):(\d\d)(?:\.(\d+))?")


def js_interval(text: str) -> dict[str, int | float]:
    """An interval's text as ``postgres-interval`` parses it: its non-zero parts."""
    parts: dict[str, int | float] = {}
    names = {"year": "years", "mon": "months", "day": "days"}
    for amount, unit in _INTERVAL_PART.findall(text):
        if int(amount):
            parts[names[unit]] = int(amount)
    clock = _INTERVAL_TIME.search(text)
    if clock:
        sign = -1 if clock.group(1) == "-" else 1
        for name, value in (
            ("hours", clock.group(2)),
            ("minutes", clock.group(3)),
            ("seconds", clock.group(4)),
        ):
            if int(value):
                parts[name] = sign * int(value)
        if clock.group(5):
            millis = float("0." + clock.group(5)) * 1000
            if millis:
                parts["milliseconds"] = sign * (int(millis) if millis.is_integer() else millis)
    return parts


def _js_float(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None  # NaN and Infinity print as null


def _parse_scalar(value: Any, oid: int, style: TypeStyle) -> Any:  # noqa: PLR0911 - one per type
    if oid == 16:
        return value if isinstance(value, bool) else value == "t"
    if oid == 20:
        if style is TypeStyle.PG_META:
            number = int(value)
            return number if abs(number) <= 2**53 - 1 else str(number)
        return str(value)
    if oid in _NUMBER_TYPES:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value if math.isfinite(value) else None
        return int(value) if oid in (21, 23, 26) else _js_float(str(value))
    if oid in (114, 3802):
        return json.loads(value) if isinstance(value, str) else value
    if oid == 17:
        data = value if isinstance(value, bytes) else bytes.fromhex(str(value)[2:])
        return {"type": "Buffer", "data": list(data)}
    text = pg_text(value)
    if style is TypeStyle.NODE:
        if oid in _DATE_TYPES:
            return js_date(text)
        if oid == 1186:
            return js_interval(text)
        if oid == 600:
            x, y = text.strip("()").split(",")
            return {"x": _js_float(x), "y": _js_float(y)}
        if oid == 718:
            centre, radius = text.strip("<>").rsplit(",", 1)
            x, y = centre.strip("()").split(",")
            return {"x": _js_float(x), "y": _js_float(y), "radius": _js_float(radius)}
    return text


def node_value(value: Any, oid: int, style: TypeStyle) -> Any:
    """One column value as the server's node-postgres returned it."""
    if value is None:
        return None
    element = _ARRAY_ELEMENTS.get(oid)
    if element is not None and isinstance(value, list):
        return _parse_items(value, element, style)
    if isinstance(value, list):
        return pg_text(value)
    return _parse_scalar(value, oid, style)


def _parse_items(value: list[Any], element: int, style: TypeStyle) -> list[Any]:
    if style is TypeStyle.PG_META and element in (*_DATE_TYPES, 1186):
        element = 25
    return [
        _parse_items(item, element, style)
        if isinstance(item, list)
        else None
        if item is None
        else _parse_scalar(item, element, style)
        for item in value
    ]


# ---------------------------------------------------------------------------------------------
# JSON as JavaScript prints it
# ---------------------------------------------------------------------------------------------


def _shortest_digits(number: float) -> tuple[str, int]:
    """The shortest digits that read back as ``number`` (> 0) and the place of the decimal
    point: ``number == 0.<digits> * 10 ** point``."""
    mantissa, _, exponent = repr(number).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    point = len(digits) + int(exponent or 0) - len(fraction)
    return digits.rstrip("0") or "0", point


def js_number(number: float) -> str:
    """``Number.prototype.toString``: shortest round-trip digits, JavaScript's exponent rules."""
    if not math.isfinite(number):
        return "null"
    if number == 0:
        return "0"
    digits, point = _shortest_digits(abs(number))
    count = len(digits)
    if count <= point <= 21:
        text = digits + "0" * (point - count)
    elif 0 < point <= 21:
        text = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        text = "0." + "0" * (-point) + digits
    else:
        power = point - 1
        body = digits[0] + ("." + digits[1:] if count > 1 else "")
        text = f"{body}e{'+' if power >= 0 else '-'}{abs(power)}"
    return ("-" if number < 0 else "") + text


def js_json(value: Any, indent: int | None = None) -> str:
    """``JSON.stringify(value, null, indent)``."""
    return _stringify(value, indent, 0)


def _stringify(value: Any, indent: int | None, depth: int) -> str:  # noqa: PLR0911 - per type
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        items = [
            f"{json.dumps(str(key), ensure_ascii=False)}:{' ' if indent else ''}"
            f"{_stringify(item, indent, depth + 1)}"
            for key, item in value.items()
        ]
        return _wrap("{", "}", items, indent, depth)
    if isinstance(value, list | tuple):
        return _wrap(
            "[", "]", [_stringify(item, indent, depth + 1) for item in value], indent, depth
        )
    return json.dumps(str(value), ensure_ascii=False)


def _wrap(opening: str, closing: str, items: list[str], indent: int | None, depth: int) -> str:
    if not items:
        return opening + closing
    if not indent:
        return opening + ",".join(items) + closing
    inner = "\n" + " " * (indent * (depth + 1))
    outer = "\n" + " " * (indent * depth)
    return opening + inner + ("," + inner).join(items) + outer + closing


# ---------------------------------------------------------------------------------------------
# Execution
# ---------------------------------------------------------------------------------------------

_OUTSIDE_TRANSACTIONS = re.compile(
    r"^\s*(?:VACUUM|CREATE\s+DATABASE|DROP\s+DATABASE|ALTER\s+SYSTEM|CREATE\s+TABLESPACE|"
    r"DROP\s+TABLESPACE|(?:CREATE|DROP)\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY|REINDEX\b.*\bCONCURRENTLY)",
    re.IGNORECASE | re.DOTALL,
)
_TAG = re.compile(r"^([A-Za-z]+(?: [A-Za-z]+)*?)(?: (\d+))?(?: (\d+))?$")


def command_of(status: str | None) -> tuple[str | None, int | None]:
    """node-postgres's reading of a command tag: the verb, and the last number (rows)."""
    if not status:
        return None, None
    match = _TAG.match(status.strip())
    if match is None:
        return status.split(" ")[0], None
    verb, first, second = match.groups()
    count = second if second is not None else first
    return verb.split(" ")[0], None if count is None else int(count)


async def _text_codecs(
    connection: PostgresConnection, attributes: tuple[asyncpg.Attribute, ...]
) -> list[tuple[str, str]]:
    """Read every column whose asyncpg value loses its text form as PostgreSQL text."""
    installed: list[tuple[str, str]] = []
    for attribute in attributes:
        kind, name, schema = attribute.type.kind, attribute.type.name, attribute.type.schema
        if kind == "array" and name.endswith("[]"):
            name = name[:-2]
        if schema == "pg_catalog" and name in _BINARY_IS_ENOUGH:
            continue
        if (schema, name) in installed:
            continue
        with contextlib.suppress(asyncpg.InterfaceError, asyncpg.PostgresError, ValueError):
            await connection.set_type_codec(
                name, schema=schema, encoder=str, decoder=str, format="text"
            )
            installed.append((schema, name))
    return installed


async def _statement(
    connection: PostgresConnection,
    statement: str,
    params: list[Any] | None,
    style: TypeStyle,
) -> StatementResult:
    prepared = await connection.prepare(statement)
    if prepared.get_parameters() and params is None:
        await connection.execute(statement)  # the server's own "there is no parameter $1"
    installed = await _text_codecs(connection, prepared.get_attributes())
    try:
        if installed:
            prepared = await connection.prepare(statement)
        records = await prepared.fetch(*(params or []))
        attributes = prepared.get_attributes()
        command, count = command_of(prepared.get_statusmsg())
    finally:
        for schema, name in installed:
            with contextlib.suppress(asyncpg.InterfaceError, asyncpg.PostgresError, ValueError):
                await connection.reset_type_codec(name, schema=schema)
    fields = [(attribute.name, attribute.type.oid) for attribute in attributes]
    rows = [
        {
            name: node_value(value, oid, style)
            for (name, oid), value in zip(fields, record.values(), strict=True)
        }
        for record in records
    ]
    return StatementResult(command, count, fields, rows)


async def run_node_script(
    connection: PostgresConnection,
    script: str,
    style: TypeStyle,
    params: list[Any] | None = None,
    *,
    finish: Callable[[PostgresConnection], Awaitable[None]] | None = None,
) -> NodeOutcome:
    """Run ``script`` as node-postgres sends it (one simple query, or one parameterised
    statement when ``params`` is given). ``finish`` runs in the same transaction after the
    script (a server's own bookkeeping). Raises ``NodeFailure`` with the primary message."""
    spans = split_statements(script)
    statements = [script[start:end] for start, end in spans] or [script]
    alone = len(statements) == 1 and _OUTSIDE_TRANSACTIONS.match(statements[0]) is not None
    began = False
    try:
        if not alone:
            await connection.execute("BEGIN")
            began = True
        results = [
            await _statement(connection, statement, params, style) for statement in statements
        ]
        if finish is not None:
            await finish(connection)
        wrote = await transaction_wrote(connection) if began else None
        if began and connection.is_in_transaction():
            await connection.execute("COMMIT")
        return NodeOutcome(results, wrote)
    except asyncpg.PostgresError as error:
        raise NodeFailure(str(error.as_dict().get("message", error))) from None
    except (asyncpg.InterfaceError, ValueError, TypeError) as error:
        raise NodeFailure(str(error)) from None
    finally:
        if began and connection.is_in_transaction():
            with contextlib.suppress(Exception):
                await connection.execute("ROLLBACK")
