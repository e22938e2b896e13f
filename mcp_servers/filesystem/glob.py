"""Glob matching as minimatch does it with ``dot: true`` (``search_files``, ``directory_tree``).

Owns the translation of a pattern (braces, classes, ``**``, extglobs, negation) into per-segment
matchers and matching a relative POSIX path against them. minimatch compiles to backtracking
regular expressions, which a hostile pattern turns into hours of work on one name; here the
segments that could backtrack that badly are matched by position sets instead (same answers,
polynomial time), ``**`` is memoised, and brace expansion is bounded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache


class GlobError(ValueError):
    """A pattern that cannot be matched within bounds (its braces expand too far)."""


MAX_ALTERNATIVES = 10_000
"""The most patterns one pattern's braces may expand to (``{1..9}{1..9}...`` grows fast)."""

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
                    expansions: list[str] = []
                    for option in options:
                        expansions.extend(_expand_braces(head + option + tail))
                        if len(expansions) > MAX_ALTERNATIVES:
                            raise GlobError(
                                f"the pattern's braces expand to more than {MAX_ALTERNATIVES}"
                                " patterns"
                            )
                    return expansions
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
            if abs(high - low) >= MAX_ALTERNATIVES:
                raise GlobError(f"the range {{{body}}} has more than {MAX_ALTERNATIVES} values")
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


BACKTRACKING_STARS = 2
"""Segments with more ``*`` than this, or with an extglob, are matched by ``_Simulation``:
a backtracking regular expression would take time exponential in their nesting, or of the
order of ``len(name) ** stars`` (``*a*a*a*a*a*a*b`` against a long name runs for hours)."""


@dataclass(frozen=True, eq=False)
class _Literal:
    char: str


@dataclass(frozen=True, eq=False)
class _AnyChar:
    pass


@dataclass(frozen=True, eq=False)
class _AnyRun:
    pass


@dataclass(frozen=True, eq=False)
class _OneOf:
    pattern: re.Pattern[str]


@dataclass(frozen=True, eq=False)
class _Extglob:
    kind: str
    alternatives: tuple[tuple[_Node, ...], ...]


_Node = _Literal | _AnyChar | _AnyRun | _OneOf | _Extglob


def _parse_segment(segment: str) -> tuple[_Node, ...]:
    """The nodes of one segment, read as ``_segment_regex`` translates it."""
    out: list[_Node] = []
    index = 0
    while index < len(segment):
        character = segment[index]
        if character in "+@!*?" and segment.startswith("(", index + 1):
            closing = _closing_paren(segment, index + 1)
            if closing is not None:
                options = _split_alternatives(segment[index + 2 : closing])
                out.append(_Extglob(character, tuple(_parse_segment(option) for option in options)))
                index = closing + 1
                continue
        if character == "\\" and index + 1 < len(segment):
            out.append(_Literal(segment[index + 1]))
            index += 2
        elif character == "*":
            while index < len(segment) and segment[index] == "*":
                index += 1
            out.append(_AnyRun())
        elif character == "?":
            out.append(_AnyChar())
            index += 1
        elif character == "[":
            translated = _class_regex(segment, index)
            if translated is None:
                out.append(_Literal(character))
                index += 1
            else:
                out.append(_OneOf(_compile(translated[0])))
                index = translated[1]
        else:
            out.append(_Literal(character))
            index += 1
    return tuple(out)


class _Simulation:
    """Matches one name against parsed segment nodes by tracking the set of positions each node
    can end at (memoised per node and start), as the regular expression would match it, in
    time polynomial in the name's length whatever the pattern."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.size = len(text)
        # Where ``$`` matches: the end, or before a final newline.
        self.ends = {self.size} | ({self.size - 1} if text.endswith("\n") else set())
        self.memo: dict[tuple[int, int], frozenset[int]] = {}

    def sequence(self, nodes: tuple[_Node, ...], starts: set[int]) -> set[int]:
        current = starts
        for node in nodes:
            if not current:
                break
            current = self.step(node, current)
        return current

    def step(self, node: _Node, starts: set[int]) -> set[int]:
        text, size = self.text, self.size
        if isinstance(node, _Literal):
            return {at + 1 for at in starts if at < size and text[at] == node.char}
        if isinstance(node, _AnyChar):
            return {at + 1 for at in starts if at < size}
        if isinstance(node, _AnyRun):
            return set(range(min(starts), size + 1))
        if isinstance(node, _OneOf):
            return {at + 1 for at in starts if at < size and node.pattern.fullmatch(text[at])}
        reached: set[int] = set()
        for at in starts:
            reached |= self.extglob(node, at)
        return reached

    def alternatives(self, node: _Extglob, start: int) -> frozenset[int]:
        key = (id(node), start)
        if key not in self.memo:
            found: set[int] = set()
            for option in node.alternatives:
                found |= self.sequence(option, {start})
            self.memo[key] = frozenset(found)
        return self.memo[key]

    def closure(self, node: _Extglob, starts: set[int]) -> set[int]:
        """Every end of zero or more further repetitions from ``starts``."""
        reached = set(starts)
        pending = list(starts)
        while pending:
            for end in self.alternatives(node, pending.pop()):
                if end not in reached:
                    reached.add(end)
                    pending.append(end)
        return reached

    def extglob(self, node: _Extglob, start: int) -> frozenset[int]:
        key = (~id(node), start)
        if key in self.memo:
            return self.memo[key]
        once = self.alternatives(node, start)
        if node.kind == "@":
            reached: set[int] = set(once)
        elif node.kind == "?":
            reached = {start} | once
        elif node.kind == "*":
            reached = self.closure(node, {start})
        elif node.kind == "+":
            reached = self.closure(node, set(once))
        else:  # "!": anything from here, unless an alternative matches the rest of the name
            reached = set() if once & self.ends else set(range(start, self.size + 1))
        self.memo[key] = frozenset(reached)
        return self.memo[key]


@dataclass(frozen=True)
class _Segment:
    """One compiled segment: a regular expression where backtracking stays cheap, else nodes
    for ``_Simulation``."""

    regex: re.Pattern[str] | None
    nodes: tuple[_Node, ...]

    def matches(self, name: str) -> bool:
        if self.regex is not None:
            return self.regex.fullmatch(name) is not None
        simulation = _Simulation(name)
        return simulation.size in simulation.sequence(self.nodes, {0})


def _compile_segment(segment: str) -> _Segment:
    nodes = _parse_segment(segment)
    risky = sum(isinstance(node, _AnyRun) for node in nodes) > BACKTRACKING_STARS or any(
        isinstance(node, _Extglob) for node in nodes
    )
    if risky:
        return _Segment(None, nodes)
    return _Segment(_compile(_segment_regex(segment)), nodes)


def _compile(regex: str) -> re.Pattern[str]:
    try:
        return re.compile(regex, re.DOTALL)
    except re.error as error:  # e.g. a class range running backwards
        raise GlobError(f"{error}") from None


@lru_cache(maxsize=512)
def _compile_glob(pattern: str) -> tuple[tuple[_Segment | None, ...], ...]:
    compiled = []
    for alternative in _expand_braces(pattern):
        segments: list[_Segment | None] = []
        for segment in alternative.split("/"):
            if segment == "**":
                if segments and segments[-1] is None:
                    continue
                segments.append(None)
            else:
                segments.append(_compile_segment(segment))
        compiled.append(tuple(segments))
    return tuple(compiled)


def _match_segments(parts: list[str], pattern: tuple[_Segment | None, ...]) -> bool:
    """Whether the path's ``parts`` match the segments, ``**`` spanning any number of parts.

    Memoised on positions, and each ``**`` answered from a table of "some later start
    matches", so several ``**`` cost parts x segments, not parts to the power of their count.
    """

    @cache
    def match(part: int, index: int) -> bool:
        while index < len(pattern):
            segment = pattern[index]
            if segment is None:  # a ``**`` segment
                if index == len(pattern) - 1:
                    return part < len(parts)
                return later(index + 1)[part]
            if part >= len(parts) or not segment.matches(parts[part]):
                return False
            part += 1
            index += 1
        return part == len(parts)

    @cache
    def later(index: int) -> list[bool]:
        """For each part: whether the segments from ``index`` match from it or a later part."""
        found = [False] * (len(parts) + 2)
        for start in range(len(parts), -1, -1):
            found[start] = found[start + 1] or match(start, index)
        return found

    return match(0, 0)


def glob_match(path: str, pattern: str) -> bool:
    """Whether a relative POSIX ``path`` matches a minimatch ``pattern`` (``dot: true``).

    Covers ``*``, ``?``, ``[...]`` (with ``!``/``^`` and POSIX classes), ``**`` as a whole
    segment, ``{a,b}`` and ``{1..3}``, extglobs ``+(..)``, ``*(..)``, ``?(..)``, ``@(..)`` and
    (approximately) ``!(..)``, a leading ``!`` negation and ``#`` comments. Raises
    ``GlobError`` for a pattern whose braces expand past ``MAX_ALTERNATIVES``.
    """
    if pattern.startswith("#"):
        return False
    negated = False
    while pattern.startswith("!") and not pattern.startswith("!("):
        negated = not negated
        pattern = pattern[1:]
    parts = path.split("/")
    matched = any(_match_segments(parts, compiled) for compiled in _compile_glob(pattern))
    return matched != negated
