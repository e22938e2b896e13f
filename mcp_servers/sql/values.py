"""Values as psycopg returns them, made from what ``asyncpg`` decodes.

Owns the conversion of result values to psycopg's defaults (``Range`` and ``Multirange``
look-alikes, intervals and ``real`` re-read from text, ``timestamptz`` in the session's zone,
anonymous records as tuples of strings, PostgreSQL text for types psycopg has no loader for) and
the text codecs installed on a connection to get there.
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
import weakref
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import asyncpg

from mcp_servers.sql.errors import SqlFailure

if TYPE_CHECKING:
    from sandboxes.postgres.sandbox import PostgresConnection


class Range:
    """Prints like psycopg's ``Range`` (``Range(1, 5, '[)')``, ``Range(empty=True)``)."""

    def __init__(
        self, lower: Any = None, upper: Any = None, bounds: str = "[)", *, empty: bool = False
    ):
        self.lower = lower
        self.upper = upper
        self.bounds = "" if empty else bounds

    def __repr__(self) -> str:
        if not self.bounds:
            return "Range(empty=True)"
        return f"Range({self.lower!r}, {self.upper!r}, {self.bounds!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Range) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))


class Multirange(list[Range]):
    """Prints like psycopg's ``Multirange`` (``Multirange([Range(1, 3, '[)')])``)."""

    def __repr__(self) -> str:
        return f"Multirange({list(self)!r})"


_BUILTIN_RANGES = {
    "int4range": "int4",
    "int8range": "int8",
    "numrange": "numeric",
    "daterange": "date",
    "tsrange": "timestamp",
    "tstzrange": "timestamptz",
}
_BUILTIN_MULTIRANGES = {
    name.replace("range", "multirange"): sub for name, sub in _BUILTIN_RANGES.items()
}


def _load_interval(text: str) -> timedelta:
    match = re.match(
        r"(?:([-+]?\d+) years? ?)?(?:([-+]?\d+) mons? ?)?(?:([-+]?\d+) days? ?)?"
        r"(?:([-+])?(\d+):(\d+):(\d+(?:\.\d+)?))?",
        text,
    )
    if not match or not match.group(0):
        raise SqlFailure(f"can't parse interval {text!r}")
    years, months, days, sign, hours, minutes, seconds = match.groups()
    total_days = 365 * int(years or 0) + 30 * int(months or 0) + int(days or 0)
    total_seconds = 0
    micros = 0
    if hours:
        total_seconds = 3600 * int(hours) + 60 * int(minutes)
        micros = round(float(seconds) * 1_000_000)
        if sign == "-":
            total_seconds, micros = -total_seconds, -micros
    return timedelta(days=total_days, seconds=total_seconds, microseconds=micros)


def _load_record(text: str) -> tuple[str | None, ...]:
    """psycopg's text ``record`` loader: a tuple of the fields' text (None for NULL)."""
    if text == "()":
        return ()
    body = text[1:-1]
    fields: list[str | None] = []
    last = None
    for last in re.finditer(r'(,)|"((?:[^"]|"")*)",?|([^",)]+),?', body):
        if last.group(1):
            fields.append(None)
        elif last.group(2) is not None:
            fields.append(re.sub(r'(["\\])\1', r"\1", last.group(2)))
        else:
            fields.append(last.group(3))
    if last is not None and last.group(0).endswith(","):
        fields.append(None)
    return tuple(fields)


def _text(value: str) -> str:
    return value


_TEXT_DECODERS: dict[str, Callable[[str], Any]] = {
    "float4": float,
    "interval": _load_interval,
    "record": _load_record,
    "json": json.loads,
    "jsonb": json.loads,
    "uuid": uuid.UUID,
    **dict.fromkeys(
        (
            *("bit", "varbit", "point", "lseg", "path", "box", "polygon", "line", "circle"),
            *("tid", "xid", "xid8", "cid", "txid_snapshot", "pg_snapshot", "pg_lsn"),
        ),
        _text,
    ),
}
"""Built-in types decoded from their text form (psycopg's loader, or text where it has none)."""


def text_decoder(type_name: str) -> Callable[[str], Any]:
    """How a value of a built-in type is read from its text form (the text itself by default)."""
    return _TEXT_DECODERS.get(type_name, _text)


_configured: weakref.WeakKeyDictionary[PostgresConnection, set[tuple[str, str]]] = (
    weakref.WeakKeyDictionary()
)


async def configure_codecs(
    connection: PostgresConnection, attributes: Sequence[asyncpg.Attribute]
) -> bool:
    """Install the text codecs a result needs; True when any was added (re-prepare then)."""
    try:
        done = _configured.setdefault(connection, set())
    except TypeError:
        done = set()
    added = False
    for attribute in attributes:
        kind, name, schema = attribute.type.kind, attribute.type.name, attribute.type.schema
        if kind == "array" and name.endswith("[]"):
            name = name[:-2]
            kind = "element"
        key = (schema, name)
        if key in done:
            continue
        done.add(key)
        if schema == "pg_catalog" and name in _TEXT_DECODERS:
            decoder = _TEXT_DECODERS[name]
        elif schema != "pg_catalog" and kind in ("composite", "element"):
            decoder = _text
        else:
            continue
        with contextlib.suppress(asyncpg.InterfaceError, ValueError):
            await connection.set_type_codec(
                name, schema=schema, encoder=str, decoder=decoder, format="text"
            )
            added = True
    return added


def session_zone(connection: PostgresConnection) -> tzinfo:
    name = getattr(connection.get_settings(), "TimeZone", None) or "UTC"
    try:
        return ZoneInfo(name)
    except (KeyError, ValueError, OSError):
        return UTC


def _quote_array_item(item: str) -> str:
    if item == "" or item.upper() == "NULL" or re.search(r'[{}",\\\s]', item):
        return '"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return item


def pg_text(value: Any) -> str:  # noqa: PLR0911 - one form per kind of value
    """PostgreSQL's text form of a value asyncpg decoded: what psycopg leaves as text, and what
    the Node.js servers' text codecs give."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, list | tuple) and not isinstance(value, asyncpg.Record):
        items = ("NULL" if item is None else _quote_array_item(pg_text(item)) for item in value)
        return "{" + ",".join(items) + "}"
    if isinstance(value, asyncpg.Range):
        if value.isempty:
            return "empty"
        lower = "" if value.lower is None else pg_text(value.lower)
        upper = "" if value.upper is None else pg_text(value.upper)
        return f"{'[' if value.lower_inc else '('}{lower},{upper}{']' if value.upper_inc else ')'}"
    if isinstance(value, asyncpg.Record):
        items = (
            "" if item is None else _quote_array_item(pg_text(item)) for item in value.values()
        )
        return "(" + ",".join(items) + ")"
    if isinstance(value, bytes):
        return "\\x" + value.hex()
    return str(value)


_VECTOR_OIDS = (22, 30)
"""``int2vector`` and ``oidvector``: asyncpg decodes them as lists, psycopg leaves them as text."""


def convert_value(  # noqa: PLR0911 - one answer per kind of column
    value: Any, oid: int, kind: str, name: str, schema: str, zone: tzinfo
) -> Any:
    """Turn one asyncpg value of the given column type into what psycopg would return."""
    if value is None:
        return None
    builtin = schema == "pg_catalog"
    if kind == "array":
        if not builtin:
            return pg_text(value)
        if oid in _VECTOR_OIDS:
            return " ".join(str(item) for item in value)
        element = name[:-2] if name.endswith("[]") else name
        return _convert_items(value, element, zone)
    if kind == "range":
        if builtin and name in _BUILTIN_RANGES:
            return _range(value, _BUILTIN_RANGES[name], zone)
        return pg_text(value)
    if kind == "multirange":
        if builtin and name in _BUILTIN_MULTIRANGES:
            return Multirange(_range(item, _BUILTIN_MULTIRANGES[name], zone) for item in value)
        return "{" + ",".join(pg_text(item) for item in value) + "}"
    return _convert_scalar(value, name, zone)


def _convert_items(value: Any, element: str, zone: tzinfo) -> Any:
    if isinstance(value, list):
        return [_convert_items(item, element, zone) for item in value]
    return None if value is None else _convert_scalar(value, element, zone)


def _refuse_infinity(value: Any, name: str) -> None:
    """psycopg cannot load +-infinity dates and timestamps (asyncpg maps them to min / max)."""
    if isinstance(value, datetime):
        naive = value.replace(tzinfo=None)
        kind = "timestamp"
        too_large, too_small = naive == datetime.max, naive == datetime.min
    elif isinstance(value, date):
        kind = "date"
        too_large, too_small = value == date.max, value == date.min
    else:
        return
    if too_large:
        raise SqlFailure(f"{kind} too large (after year 10K): 'infinity'")
    if too_small:
        raise SqlFailure(f"{kind} too small (before year 1): '-infinity'")


def _convert_scalar(value: Any, name: str, zone: tzinfo) -> Any:
    if name in ("date", "timestamp", "timestamptz"):
        _refuse_infinity(value, name)
    if name == "timestamptz" and isinstance(value, datetime):
        return value.astimezone(zone)
    if name == "char" and isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, asyncpg.Range):
        subtype = _BUILTIN_RANGES.get(name)
        return pg_text(value) if subtype is None else _range(value, subtype, zone)
    if isinstance(value, asyncpg.Record):
        return pg_text(value)
    return value


def _range(value: asyncpg.Range[Any], subtype: str, zone: tzinfo) -> Range:
    if value.isempty:
        return Range(empty=True)
    lower = None if value.lower is None else _convert_scalar(value.lower, subtype, zone)
    upper = None if value.upper is None else _convert_scalar(value.upper, subtype, zone)
    bounds = ("[" if value.lower_inc else "(") + ("]" if value.upper_inc else ")")
    return Range(lower, upper, bounds)
