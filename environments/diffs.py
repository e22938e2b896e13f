"""Readable diffs of a recorded and a replayed tool output, for the replay report.

Owns how a diverged step's difference is shown: a unified diff with one line of context, cut to
``DIFF_LINES`` lines. Lines longer than ``LINE_LIMIT`` characters (single-line JSON or row lists
are common) are not cut at their start: when a removed line is paired with an added one, both
show an excerpt around their first differing character, followed by a ``?`` line with a caret
under it and the character position, so two long lines never look identical in the report.
"""

from __future__ import annotations

import difflib
from itertools import takewhile

DIFF_LINES = 24
"""Lines of unified diff kept per diverged step (hint lines not counted)."""

LINE_LIMIT = 300
"""Characters of one diff line shown; longer lines become an excerpt."""

CONTEXT_BEFORE = 80
"""Characters shown before the first difference of two long lines."""

_ELLIPSIS = "…"


def short_diff(recorded: str, replayed: str) -> str:
    """A unified diff of two normalised outputs, recorded (-) against replayed (+), cut to
    ``DIFF_LINES`` lines, with long changed lines shown around their first difference."""
    lines = list(
        difflib.unified_diff(
            recorded.split("\n"),
            replayed.split("\n"),
            "recorded",
            "replayed",
            lineterm="",
            n=1,
        )
    )
    omitted = len(lines) - DIFF_LINES
    if omitted > 0:
        lines = lines[:DIFF_LINES]
    shown = _render(lines)
    if omitted > 0:
        shown.append(f"... {omitted} more diff lines")
    return "\n".join(shown)


def _render(lines: list[str]) -> list[str]:
    """The diff lines with long lines cut, pairing each block of ``-`` lines with the ``+``
    lines that follow it."""
    out: list[str] = []
    position = 0
    while position < len(lines):
        line = lines[position]
        if not line.startswith("-") or line.startswith("--- "):
            out.append(_clip(line))
            position += 1
            continue
        removed = list(takewhile(lambda text: text.startswith("-"), lines[position:]))
        rest = lines[position + len(removed) :]
        added = list(takewhile(lambda text: text.startswith("+"), rest))
        position += len(removed) + len(added)
        pairs = list(zip(removed, added, strict=False))
        for old, new in pairs:
            out.extend(_changed_pair(old[1:], new[1:]))
        out.extend(_clip(text) for text in removed[len(pairs) :])
        out.extend(_clip(text) for text in added[len(pairs) :])
    return out


def _clip(line: str) -> str:
    if len(line) <= LINE_LIMIT:
        return line
    return f"{line[:LINE_LIMIT]}{_ELLIPSIS} ({len(line) - 1:,} characters)"


def _changed_pair(old: str, new: str) -> list[str]:
    """A removed and an added line; when either is long, excerpts around the first difference
    and a ``?`` line pointing at it."""
    if len(old) < LINE_LIMIT and len(new) < LINE_LIMIT:
        return [f"-{old}", f"+{new}"]
    first = first_difference(old, new)
    begin = max(0, first - CONTEXT_BEFORE)
    lead = _ELLIPSIS if begin else ""
    old_part, new_part = _excerpt(old, begin), _excerpt(new, begin)
    caret = " " * (len(lead) + first - begin)
    where = (
        f"first difference at character {first + 1:,} "
        f"(recorded {len(old):,} characters, replayed {len(new):,})"
    )
    return [f"-{lead}{old_part}", f"+{lead}{new_part}", f"?{caret}^ {where}"]


def _excerpt(line: str, begin: int) -> str:
    end = begin + LINE_LIMIT
    return line[begin:end] + (_ELLIPSIS if end < len(line) else "")


def first_difference(old: str, new: str) -> int:
    """The index of the first character where ``old`` and ``new`` differ (the shorter one's
    length when one is a prefix of the other)."""
    for index, (a, b) in enumerate(zip(old, new, strict=False)):
        if a != b:
            return index
    return min(len(old), len(new))
