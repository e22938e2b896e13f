"""SQL failures with the text psycopg gives them: libpq's error message without the severity.

Owns ``SqlFailure`` and the rendering of a server error: the message, libpq's ``LINE n:``
excerpt with its caret, then the ``DETAIL``, ``HINT``, ``QUERY`` and ``CONTEXT`` lines.
"""

from __future__ import annotations

import unicodedata
from typing import Any

import asyncpg


class SqlFailure(Exception):  # noqa: N818 - internal carrier of a message, not an error type
    """A failed statement; ``str()`` is the message psycopg would have raised."""


_DISPLAY_SIZE = 60
_MIN_RIGHT_CUT = 10


def _display_width(character: str) -> int:
    if unicodedata.combining(character) or unicodedata.category(character) == "Cc":
        return 1
    return 2 if unicodedata.east_asian_width(character) in ("W", "F") else 1


def _error_position(query: str, position: int) -> list[str]:  # noqa: PLR0912 - libpq's algorithm
    """libpq's ``LINE n: ...`` excerpt and caret line for a 1-based character position."""
    location = position - 1
    if location < 0:
        return []
    text = list(query)
    columns: list[int] = []
    line = 1
    begin = 0
    end = -1
    column = 0
    index = 0
    for index, character in enumerate(text):
        columns.append(column)
        if character == "\t":
            text[index] = " "
        elif character in "\r\n":
            if index < location:
                if character == "\r" or index == 0 or text[index - 1] != "\r":
                    line += 1
                begin = index + 1
            else:
                end = index
                break
        column += _display_width(character)
    else:
        index = len(text)
    if end < 0:
        end = index
        columns.append(column)
    if location > index:
        return []
    cut_left = cut_right = False
    if columns[end] - columns[begin] > _DISPLAY_SIZE:
        if columns[begin] + _DISPLAY_SIZE >= columns[location] + _MIN_RIGHT_CUT:
            while columns[end] - columns[begin] > _DISPLAY_SIZE:
                end -= 1
            cut_right = True
        else:
            while columns[location] + _MIN_RIGHT_CUT < columns[end]:
                end -= 1
                cut_right = True
            while columns[end] - columns[begin] > _DISPLAY_SIZE:
                begin += 1
                cut_left = True
    prefix = f"LINE {line}: " + ("..." if cut_left else "")
    excerpt = prefix + "".join(text[begin:end]) + ("..." if cut_right else "")
    caret = " " * (len(prefix) + columns[location] - columns[begin]) + "^"
    return [excerpt, caret]


def parse_error_text(message: str, query: str, position: int) -> str:
    """A syntax error found before the SQL reached the server, worded as the server would: the
    message, then the ``LINE n:`` excerpt and caret at ``position`` (1-based, in characters)."""
    return "\n".join([message, *_error_position(query, position)])


def postgres_error_text(error: asyncpg.PostgresError, query: str, offset: int) -> str:
    """What ``str()`` of the matching psycopg exception says."""
    fields: dict[str, Any] = error.as_dict()
    lines = [str(fields.get("message", ""))]
    position = fields.get("position")
    internal_query = fields.get("internal_query")
    if position:
        lines += _error_position(query, offset + int(position))
    elif fields.get("internal_position") and internal_query:
        lines += _error_position(internal_query, int(fields["internal_position"]))
    for label, key in (("DETAIL", "detail"), ("HINT", "hint"), ("QUERY", "internal_query")):
        if fields.get(key):
            lines.append(f"{label}:  {fields[key]}")
    if fields.get("context"):
        lines.append(f"CONTEXT:  {fields['context']}")
    return "\n".join(lines).strip()
