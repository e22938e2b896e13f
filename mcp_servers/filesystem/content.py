"""File content as the reference server reads, writes and edits it.

Owns UTF-8 encoding and decoding the Node way, the ``head`` / ``tail`` line readers (with their
chunked algorithms) and ``edit_file``'s matcher: exact text first, else whitespace-blind lines.
"""

from __future__ import annotations

import codecs
import math
import re
from collections.abc import Iterable
from typing import Protocol

from mcp_servers.filesystem.errors import ToolError


class Edit(Protocol):
    """One replacement of ``edit_file``: the text to find and the text to put there."""

    @property
    def old_text(self) -> str: ...

    @property
    def new_text(self) -> str: ...


_JS_WHITESPACE = (
    " \t\n\x0b\x0c\r\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def _leading_whitespace(text: str) -> str:
    return text[: len(text) - len(text.lstrip(_JS_WHITESPACE))]


def encode_utf8(text: str) -> bytes:
    """Encode like Node: lone surrogates become U+FFFD."""
    return re.sub("[\ud800-\udfff]", "\ufffd", text).encode("utf-8")


def decode_utf8(data: bytes) -> str:
    """Decode like Node: invalid bytes become U+FFFD."""
    return data.decode("utf-8", errors="replace")


_CHUNK = 1024


def _js_slice_from(items: list[str], start: float) -> list[str]:
    """``Array.prototype.slice(start)`` with JavaScript's integer conversion."""
    begin = math.trunc(start)
    if begin < 0:
        begin = max(len(items) + begin, 0)
    return items[begin:]


def tail_text(data: bytes, count: float) -> str:
    """The last ``count`` lines, found by reading 1 KiB chunks backwards as the reference does."""
    if not data:
        return ""
    position = len(data)
    newlines = 0
    while position > 0 and newlines < count:
        size = min(_CHUNK, position)
        position -= size
        newlines += data[position : position + size].count(b"\n")
    text = decode_utf8(data[position:]).replace("\r\n", "\n")
    return "\n".join(_js_slice_from(text.split("\n"), -count))


def head_text(data: bytes, count: float) -> str:
    """The first ``count`` lines, read in 1 KiB chunks as the reference does."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines: list[str] = []
    buffer = ""
    offset = 0
    while len(lines) < count:
        chunk = data[offset : offset + _CHUNK]
        if not chunk:
            break
        offset += len(chunk)
        buffer += decoder.decode(chunk)
        cut = buffer.rfind("\n")
        if cut != -1:
            complete = buffer[:cut].split("\n")
            buffer = buffer[cut + 1 :]
            for line in complete:
                lines.append(line)
                if len(lines) >= count:
                    break
    buffer += decoder.decode(b"", final=True)
    if buffer and len(lines) < count:
        lines.append(buffer)
    return "\n".join(lines)


def apply_edits(content: str, edits: Iterable[Edit]) -> str:
    """The reference's edit matcher: exact substring first, else whitespace-blind line runs."""
    modified = content
    for edit in edits:
        old = edit.old_text.replace("\r\n", "\n")
        new = edit.new_text.replace("\r\n", "\n")
        if old in modified:
            modified = modified.replace(old, new, 1)
            continue
        old_lines = old.split("\n")
        content_lines = modified.split("\n")
        for start in range(len(content_lines) - len(old_lines) + 1):
            window = content_lines[start : start + len(old_lines)]
            if all(
                a.strip(_JS_WHITESPACE) == b.strip(_JS_WHITESPACE)
                for a, b in zip(old_lines, window, strict=True)
            ):
                indent = _leading_whitespace(content_lines[start])
                replacement = []
                for position, line in enumerate(new.split("\n")):
                    if position == 0:
                        replacement.append(indent + line.lstrip(_JS_WHITESPACE))
                        continue
                    old_indent = (
                        _leading_whitespace(old_lines[position])
                        if position < len(old_lines)
                        else ""
                    )
                    new_indent = _leading_whitespace(line)
                    if old_indent and new_indent:
                        shift = max(0, len(new_indent) - len(old_indent))
                        replacement.append(indent + " " * shift + line.lstrip(_JS_WHITESPACE))
                    else:
                        replacement.append(line)
                content_lines[start : start + len(old_lines)] = replacement
                modified = "\n".join(content_lines)
                break
        else:
            raise ToolError(f"Could not find exact match for edit:\n{edit.old_text}")
    return modified
