"""File content as the reference server reads, writes and edits it.

Owns UTF-8 encoding and decoding the Node way, the ``head`` / ``tail`` line readers and
``edit_file``'s matcher: exact text first, else whitespace-blind lines. Also owns the read limit
(``READ_LIMIT_BYTES``): tools read a file through the tree's bounded reads, so ``head_text`` and
``tail_text`` work on the bytes read from one end of a file and say whether those held the lines
asked for. Every function here is linear in its input; the reference's own chunked loops (which
re-scan a growing buffer) are replaced by single passes that give the same text.
"""

from __future__ import annotations

import codecs
import math
import re
import sys
from collections.abc import Iterable, Sequence
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


READ_LIMIT_BYTES = 4 * 1024 * 1024
"""The most bytes of file content one tool answer reads: a whole file, its first or last lines,
a media file, or all the files of one ``read_multiple_files`` call together. Listings are held
to the same number of bytes of answer text. A cut answer says so."""

_CHUNK = 1024
"""The reference's step when it reads a file backwards for ``tail``."""


def _js_slice_from(items: list[str], start: float) -> list[str]:
    """``Array.prototype.slice(start)`` with JavaScript's integer conversion."""
    begin = math.trunc(start)
    if begin < 0:
        begin = max(len(items) + begin, 0)
    return items[begin:]


def line_count(count: float) -> int:
    """How many newlines answer ``head``/``tail`` = ``count`` (the reference loops while it
    holds fewer than ``count``): 0 for a count that is not positive."""
    if not count > 0:
        return 0
    if math.isinf(count):
        return sys.maxsize
    return math.ceil(count)


def decode_start(data: bytes, *, complete: bool) -> str:
    """Decode the first bytes of a file; unless they are all of it, a character cut at their end
    is left out."""
    if complete:
        return decode_utf8(data)
    return codecs.getincrementaldecoder("utf-8")(errors="replace").decode(data)


def decode_end(data: bytes, *, complete: bool) -> str:
    """Decode the last bytes of a file; unless they are all of it, the tail of a character cut
    at their start is left out."""
    if not complete:
        skip = 0
        while skip < min(3, len(data)) and 0x80 <= data[skip] < 0xC0:
            skip += 1
        data = data[skip:]
    return decode_utf8(data)


def head_text(data: bytes, count: float, *, complete: bool = True) -> tuple[str, bool]:
    """The first ``count`` lines, as the reference's forward chunked reader returns them.

    ``data`` is the start of the file (all of it when ``complete``). Returns the text and whether
    ``data`` held all of it (when not, the text is what ``data`` holds).
    """
    wanted = line_count(count)
    if wanted == 0:
        return "", True
    text = decode_start(data, complete=complete)
    pieces = text.split("\n", min(wanted, len(text)))
    if len(pieces) > wanted:
        return "\n".join(pieces[:wanted]), True
    # Fewer newlines than lines asked for: every complete line, then the unfinished last one.
    lines = pieces[:-1] if not pieces[-1] else pieces
    return "\n".join(lines), complete


def tail_start(data: bytes, count: float, *, complete: bool) -> int | None:
    """Where in ``data`` (the end of a file; all of it when ``complete``) the reference's backward
    scan in 1 KiB steps stops: at the first step back from the end whose bytes hold ``count``
    newlines. None when the scan would go on before the start of ``data``."""
    position = len(data)
    newlines = 0
    while position > 0 and newlines < count:
        if position < _CHUNK and not complete:
            return None  # the file's step would reach before these bytes
        position -= min(_CHUNK, position)
        newlines += data.count(b"\n", position, position + _CHUNK)
    if newlines < count and not complete:
        return None
    return position


def tail_text(data: bytes, count: float, *, complete: bool = True) -> tuple[str, bool]:
    """The last ``count`` lines, as the reference's backward chunked reader returns them.

    ``data`` is the end of the file (all of it when ``complete``). Returns the text and whether
    ``data`` held all of it (when not, the text is the last lines ``data`` holds).
    """
    if not data:
        return "", True
    start = tail_start(data, count, complete=complete)
    held = start is not None
    text = decode_utf8(data[start:]) if start is not None else decode_end(data, complete=False)
    text = text.replace("\r\n", "\n")
    return "\n".join(_js_slice_from(text.split("\n"), -count)), held


def _first_run(lines: Sequence[str], wanted: Sequence[str]) -> int:
    """The index of the first run of ``lines`` equal to ``wanted``, or -1 (Knuth-Morris-Pratt:
    linear, where trying every start would cost ``len(lines) * len(wanted)``)."""
    if not wanted:
        return 0
    fallback = [0] * len(wanted)
    matched = 0
    for index in range(1, len(wanted)):
        while matched and wanted[index] != wanted[matched]:
            matched = fallback[matched - 1]
        if wanted[index] == wanted[matched]:
            matched += 1
        fallback[index] = matched
    matched = 0
    for index, line in enumerate(lines):
        while matched and line != wanted[matched]:
            matched = fallback[matched - 1]
        if line == wanted[matched]:
            matched += 1
        if matched == len(wanted):
            return index - matched + 1
    return -1


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
        start = _first_run(
            [line.strip(_JS_WHITESPACE) for line in content_lines],
            [line.strip(_JS_WHITESPACE) for line in old_lines],
        )
        if start < 0:
            raise ToolError(f"Could not find exact match for edit:\n{edit.old_text}")
        indent = _leading_whitespace(content_lines[start])
        replacement = []
        for position, line in enumerate(new.split("\n")):
            if position == 0:
                replacement.append(indent + line.lstrip(_JS_WHITESPACE))
                continue
            old_indent = (
                _leading_whitespace(old_lines[position]) if position < len(old_lines) else ""
            )
            new_indent = _leading_whitespace(line)
            if old_indent and new_indent:
                shift = max(0, len(new_indent) - len(old_indent))
                replacement.append(indent + " " * shift + line.lstrip(_JS_WHITESPACE))
            else:
                replacement.append(line)
        content_lines[start : start + len(old_lines)] = replacement
        modified = "\n".join(content_lines)
    return modified
