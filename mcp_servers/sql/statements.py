"""Splitting a recorded SQL script into its statements, as the PostgreSQL lexer sees them.

Owns the statement boundaries replay needs for the agents' recorded SQL, which may not parse
and must still run as it ran: semicolons outside quotes, dollar quotes, (nested) comments,
``E''`` strings and the ``BEGIN ATOMIC`` bodies of SQL functions and procedures; and where a
recorded call carries its SQL (``sql_text``). Nothing here decides what a judge may run: that
is ``inspection``, on PostgreSQL's own parse.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_IDENTIFIER_START = re.compile(r"[A-Za-z_\u0080-\U0010ffff]")
_DOLLAR_TAG = re.compile(r"\$([A-Za-z_\u0080-\U0010ffff][A-Za-z_0-9\u0080-\U0010ffff]*)?\$")
_WORD = re.compile(r"[A-Za-z_\u0080-\U0010ffff][A-Za-z_0-9$\u0080-\U0010ffff]*")
_ROUTINE = re.compile(r"^CREATE(?: OR REPLACE)? (?:FUNCTION|PROCEDURE)\b")


@dataclass
class _Statement:
    start: int
    end: int
    words: list[str]


def split_statements(script: str) -> list[tuple[int, int]]:  # noqa: PLR0912 - one lexer loop
    """``(start, end)`` spans of the non-empty statements of ``script``, each ending after its
    semicolon (or at the end). Comments and whitespace between statements belong to the next
    one; statements made only of comments are dropped."""
    spans: list[_Statement] = []
    current = _Statement(0, 0, [])
    depth = 0
    index = 0
    length = len(script)
    while index < length:
        character = script[index]
        following = script[index + 1] if index + 1 < length else ""
        if character == "-" and following == "-":
            newline = script.find("\n", index)
            index = length if newline == -1 else newline + 1
        elif character == "/" and following == "*":
            index = _skip_block_comment(script, index)
        elif character == "'":
            escaped = _escape_string_prefix(script, index)
            current.words.append("'")
            index = _skip_quoted(script, index, "'", backslashes=escaped)
        elif character == '"':
            current.words.append('"')
            index = _skip_quoted(script, index, '"', backslashes=False)
        elif (
            character == "$"
            and (match := _DOLLAR_TAG.match(script, index))
            and not (index and _WORD.match(script[index - 1]))
        ):
            closing = script.find(match.group(0), match.end())
            current.words.append("$")
            index = length if closing == -1 else closing + len(match.group(0))
        elif character == ";":
            index += 1
            if depth == 0:
                current.end = index
                if current.words:
                    spans.append(current)
                current = _Statement(index, index, [])
        elif (word := _WORD.match(script, index)) is not None:
            upper = word.group(0).upper()
            current.words.append(upper)
            if _ROUTINE.match(" ".join(current.words)):
                if upper in ("BEGIN", "CASE"):
                    depth += 1
                elif upper == "END" and depth:
                    depth -= 1
            index = word.end()
        else:
            if not character.isspace():
                current.words.append(character)
            index += 1
    current.end = length
    if current.words:
        spans.append(current)
    return [(statement.start, statement.end) for statement in spans]


def _skip_block_comment(script: str, index: int) -> int:
    depth = 0
    while index < len(script):
        if script.startswith("/*", index):
            depth += 1
            index += 2
        elif script.startswith("*/", index):
            depth -= 1
            index += 2
            if depth == 0:
                return index
        else:
            index += 1
    return index


def _escape_string_prefix(script: str, index: int) -> bool:
    """Whether the quote at ``index`` opens an ``E'...'`` string (backslash escapes)."""
    if index == 0 or script[index - 1] not in "eE":
        return False
    return index < 2 or not _WORD.match(script[index - 2])


def _skip_quoted(script: str, index: int, quote: str, *, backslashes: bool) -> int:
    index += 1
    while index < len(script):
        character = script[index]
        if backslashes and character == "\\":
            index += 2
            continue
        if character == quote:
            if script.startswith(quote, index + 1):
                index += 2
                continue
            return index + 1
        index += 1
    return index


def sql_text(arguments: Mapping[str, Any]) -> str:
    """The SQL of a recorded call, whichever server's argument name carries it ("" if none)."""
    for name in ("sql", "query"):
        value = arguments.get(name)
        if isinstance(value, str):
            return value
    return ""
