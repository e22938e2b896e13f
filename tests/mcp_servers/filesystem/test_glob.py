"""minimatch-compatible glob matching (``dot: true``)."""

from __future__ import annotations

import asyncio
import random
import re

import pytest

from mcp_servers.filesystem.glob import (
    GlobError,
    _parse_segment,
    _Segment,
    _segment_regex,
    glob_match,
)


def test_glob_match_follows_minimatch_with_dot() -> None:
    assert glob_match("b.md", "*.md")
    assert not glob_match("a/b.md", "*.md")
    assert glob_match("a/b.md", "**/*.md")
    assert glob_match(".hidden", "*")
    assert glob_match("a.ts", "*.{js,ts}")
    assert glob_match("f2", "f{1..3}")
    assert not glob_match("abc", "a[!b]c")
    assert glob_match("abd", "!abc")
    assert not glob_match("a", "a/**")
    assert glob_match("x/node_modules/y", "**/node_modules/**")


SEGMENT_ATOMS = ["a", "b", "*", "?", "[ab]", "[!a]", "+(a|b)", "*(a|ab)", "?(b)", "@(a|b*)"]
SEGMENT_ATOMS += ["!(a)", "!(a|b)", "\\*", ".", "*(*(a))", "+(a*|b)", "[[:alpha:]]"]
NAMES = ["", "a", "b", "ab", "ba", "aab", "abab", "a.b", "*", "x", "aaaa", "bbba", "a\n", "ä"]


def test_position_sets_answer_as_the_backtracking_translation_does() -> None:
    """The segment simulation agrees with the regular expression minimatch would build, on
    every name (short enough for the regular expression to answer)."""
    generator = random.Random(11)
    checked = 0
    for _ in range(4000):
        segment = "".join(generator.choice(SEGMENT_ATOMS) for _ in range(generator.randint(1, 4)))
        simulated = _Segment(None, _parse_segment(segment))
        expression = re.compile(_segment_regex(segment), re.DOTALL)
        for name in NAMES:
            assert simulated.matches(name) == (expression.fullmatch(name) is not None), (
                segment,
                name,
            )
            checked += 1
    assert checked == 4000 * len(NAMES)


async def test_patterns_that_backtrack_for_hours_answer_at_once() -> None:
    # Each of these runs for hours (or forever) as a backtracking regular expression on such a
    # name; the deadline only turns a regression into a failure instead of a hung suite.
    cases = [
        ("*(*(a))b", "a" * 250, False),
        ("*(*(a))b", "a" * 250 + "b", True),
        ("+(a|aa)b", "a" * 250, False),
        ("*a*a*a*a*a*a*b", "a" * 250, False),
        ("*a*a*a*a*a*a*b", "a" * 250 + "b", True),
        ("*(*(*(*(a|aa))))b", "a" * 250, False),
        ("**/a/**/a/**/a/**/b", "/".join(["a"] * 2000), False),
        ("**/a/**/a/**/a/**/b", "/".join(["a"] * 2000 + ["b"]), True),
    ]
    for pattern, path, expected in cases:
        answer = await asyncio.wait_for(asyncio.to_thread(glob_match, path, pattern), 60)
        assert answer is expected, (pattern, len(path))


def test_patterns_past_their_bounds_are_refused_with_the_reason() -> None:
    with pytest.raises(GlobError, match=r"the range \{1\.\.100000000\} has more than 10000"):
        glob_match("a", "{1..100000000}")
    with pytest.raises(GlobError, match="expand to more than 10000 patterns"):
        glob_match("a", "{a,b}" * 20)
    with pytest.raises(GlobError, match="bad character range"):
        glob_match("a", "[z-a]")
    assert glob_match("7", "{1..9}")
