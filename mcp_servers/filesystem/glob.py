"""Glob matching as minimatch does it with ``dot: true`` (``search_files``, ``directory_tree``).

Owns the translation of a pattern (braces, classes, ``**``, extglobs, negation) into per-segment
regular expressions and matching a relative POSIX path against them.
"""

from __future__ import annotations

import re
from functools import lru_cache

_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "ascii": "\\x00-\\x7f",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\r\\n\\v\\f",
    "upper": "A-Z",
    "word": "\\w",
    "xdigit": "A-Fa-f0-9",
}


def _expand_braces(pattern: str) -> list[str]:
    """Brace expansion as minimatch does it: ``{a,b}`` alternatives and ``{1..3}`` ranges."""
    depth = 0
    start = -1
    index = 0
    while index < len(pattern):
        character = pattern[index]
        if character == "\\":
            index += 2
            continue
        if character == "{":
            if depth == 0:
                start = index
            depth += 1
        elif character == "}" and depth:
            depth -= 1
            if depth == 0:
                options = _brace_options(pattern[start + 1 : index])
                if options is not None:
                    head, tail = pattern[:start], pattern[index + 1 :]
                    return [
                        expanded
                        for option in options
                        for expanded in _expand_braces(head + option + tail)
                    ]
        index += 1
    return [pattern]


def _brace_options(body: str) -> list[str] | None:
    sequence = re.fullmatch(r"(-?\d+)\.\.(-?\d+)", body) or re.fullmatch(
        r"([A-Za-z])\.\.([A-Za-z])", body
    )
    if sequence:
        first, last = sequence.groups()
        if first.lstrip("-").isdigit():
            low, high = int(first), int(last)
            step = 1 if high >= low else -1
            return [str(number) for number in range(low, high + step, step)]
        step = 1 if ord(last) >= ord(first) else -1
        return [chr(code) for code in range(ord(first), ord(last) + step, step)]
    options: list[str] = []
    depth = 0
    current = ""
    index = 0
    while index < len(body):
        character = body[index]
        if character == "\\" and index + 1 < len(body):
            current += body[index : index + 2]
            index += 2
            continue
        if character == "{":
            depth += 1
        elif character == "}":
            depth -= 1
        if character == "," and depth == 0:
            options.append(current)
            current = ""
        else:
            current += character
        index += 1
    options.append(current)
    return options if len(options) > 1 else None


def _class_regex(segment: str, start: int) -> tuple[str, int] | None:
    """Translate the bracket expression at ``segment[start]``; None if it is not closed."""
    index = start + 1
    negate = index < len(segment) and segment[index] in "!^"
    if negate:
        index += 1
    parts: list[str] = []
    first = True
    while index < len(segment):
        character = segment[index]
        if character == "]" and not first:
            body = "".join(parts)
            return (f"[^/{body}]" if negate else f"[{body}]"), index + 1
        first = False
        if character == "[" and segment.startswith("[:", index):
            end = segment.find(":]", index + 2)
            name = segment[index + 2 : end] if end != -1 else ""
            if name in _POSIX_CLASSES:
                parts.append(_POSIX_CLASSES[name])
                index = end + 2
                continue
        if character == "\\" and index + 1 < len(segment):
            parts.append(re.escape(segment[index + 1]))
            index += 2
            continue
        if character == "-" and parts and index + 1 < len(segment) and segment[index + 1] != "]":
            parts.append("-")
        else:
            parts.append(re.escape(character))
        index += 1
    return None


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(segment):
        character = segment[index]
        if character in "+@!*?" and segment.startswith("(", index + 1):
            closing = _closing_paren(segment, index + 1)
            if closing is not None:
                alternatives = "|".join(
                    _segment_regex(option)
                    for option in _split_alternatives(segment[index + 2 : closing])
                )
                out.append(
                    {
                        "+": f"(?:{alternatives})+",
                        "*": f"(?:{alternatives})*",
                        "?": f"(?:{alternatives})?",
                        "@": f"(?:{alternatives})",
                        "!": f"(?:(?!(?:{alternatives})$)[^/]*?)",
                    }[character]
                )
                index = closing + 1
                continue
        if character == "\\" and index + 1 < len(segment):
            out.append(re.escape(segment[index + 1]))
            index += 2
        elif character == "*":
            while index < len(segment) and segment[index] == "*":
                index += 1
            out.append("[^/]*")
        elif character == "?":
            out.append("[^/]")
            index += 1
        elif character == "[":
            translated = _class_regex(segment, index)
            if translated is None:
                out.append(re.escape(character))
                index += 1
            else:
                out.append(translated[0])
                index = translated[1]
        else:
            out.append(re.escape(character))
            index += 1
    return "".join(out)


def _closing_paren(text: str, opening: int) -> int | None:
    depth = 0
    index = opening
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None


def _split_alternatives(body: str) -> list[str]:
    options: list[str] = []
    depth = 0
    current = ""
    for character in body:
        if character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
        if character == "|" and depth == 0:
            options.append(current)
            current = ""
        else:
            current += character
    options.append(current)
    return options


@lru_cache(maxsize=512)
def _compile_glob(pattern: str) -> tuple[tuple[re.Pattern[str] | None, ...], ...]:
    compiled = []
    for alternative in _expand_braces(pattern):
        segments: list[re.Pattern[str] | None] = []
        for segment in alternative.split("/"):
            if segment == "**":
                if segments and segments[-1] is None:
                    continue
                segments.append(None)
            else:
                segments.append(re.compile(_segment_regex(segment), re.DOTALL))
        compiled.append(tuple(segments))
    return tuple(compiled)


def _match_segments(
    parts: list[str], pattern: tuple[re.Pattern[str] | None, ...], part: int, index: int
) -> bool:
    while index < len(pattern):
        segment = pattern[index]
        if segment is None:  # a ``**`` segment
            if index == len(pattern) - 1:
                return part < len(parts)
            return any(
                _match_segments(parts, pattern, start, index + 1)
                for start in range(part, len(parts) + 1)
            )
        if part >= len(parts) or not segment.fullmatch(parts[part]):
            return False
        part += 1
        index += 1
    return part == len(parts)


def glob_match(path: str, pattern: str) -> bool:
    """Whether a relative POSIX ``path`` matches a minimatch ``pattern`` (``dot: true``).

    Covers ``*``, ``?``, ``[...]`` (with ``!``/``^`` and POSIX classes), ``**`` as a whole
    segment, ``{a,b}`` and ``{1..3}``, extglobs ``+(..)``, ``*(..)``, ``?(..)``, ``@(..)`` and
    (approximately) ``!(..)``, a leading ``!`` negation and ``#`` comments.
    """
    if pattern.startswith("#"):
        return False
    negated = False
    while pattern.startswith("!") and not pattern.startswith("!("):
        negated = not negated
        pattern = pattern[1:]
    parts = path.split("/")
    matched = any(_match_segments(parts, compiled, 0, 0) for compiled in _compile_glob(pattern))
    return matched != negated
