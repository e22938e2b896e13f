"""Readable replay diffs: two long lines show where they differ, not the same first characters."""

from __future__ import annotations

import difflib

from environments.diffs import DIFF_LINES, LINE_LIMIT, short_diff


def _rows(count: int, changed: int | None = None) -> str:
    """A postgres-mcp-style one-line result of ``count`` rows; row ``changed`` has rank 99."""
    rows = [
        f"{{'track_id': {n}, 'name': 'Track number {n}', 'rank': {99 if n == changed else n}}}"
        for n in range(count)
    ]
    return "[" + ", ".join(rows) + "]"


def test_two_long_lines_show_an_excerpt_around_their_first_difference() -> None:
    recorded, replayed = _rows(200), _rows(200, changed=150)
    assert len(recorded) > 10 * LINE_LIMIT
    lines = short_diff(recorded, replayed).split("\n")
    minus = next(line for line in lines if line.startswith("-") and not line.startswith("---"))
    plus = next(line for line in lines if line.startswith("+") and not line.startswith("+++"))
    hint = next(line for line in lines if line.startswith("?"))
    # The shown parts differ, and they hold the changed row of each side.
    assert minus[1:] != plus[1:]
    assert "'name': 'Track number 150', 'rank': 150}" in minus
    assert "'name': 'Track number 150', 'rank': 99}" in plus
    assert len(minus) < 2 * LINE_LIMIT
    assert len(plus) < 2 * LINE_LIMIT
    # The caret points at the first differing character of the shown excerpts.
    column = hint.index("^")
    assert minus[:column][1:] == plus[:column][1:]
    assert minus[column] != plus[column]
    first = next(i for i, (a, b) in enumerate(zip(recorded, replayed, strict=False)) if a != b)
    assert f"first difference at character {first + 1:,}" in hint
    assert f"recorded {len(recorded):,} characters, replayed {len(replayed):,}" in hint


def test_a_difference_near_the_start_is_shown_from_the_start() -> None:
    recorded, replayed = _rows(100), _rows(100, changed=0)
    lines = short_diff(recorded, replayed).split("\n")
    minus = next(line for line in lines if line.startswith("-") and not line.startswith("---"))
    assert minus.startswith("-[{'track_id': 0")
    assert minus.endswith("…")


def test_a_line_that_only_grew_points_at_where_it_grew() -> None:
    recorded = _rows(50)
    replayed = recorded[:-1] + ", {'track_id': 50}]"
    hint = next(line for line in short_diff(recorded, replayed).split("\n") if line[0] == "?")
    assert f"first difference at character {len(recorded):,}" in hint


def test_short_lines_are_the_plain_unified_diff() -> None:
    recorded = "one\ntwo\nthree\nfour"
    replayed = "one\n2\nthree\nfour"
    expected = difflib.unified_diff(
        recorded.split("\n"), replayed.split("\n"), "recorded", "replayed", lineterm="", n=1
    )
    assert short_diff(recorded, replayed) == "\n".join(expected)


def test_a_long_line_without_a_partner_is_cut_and_says_how_long_it_was() -> None:
    long_row = "x" * (3 * LINE_LIMIT)
    diff = short_diff(f"a\n{long_row}\nb", "a\nb").split("\n")
    [removed] = [line for line in diff if line.startswith("-") and not line.startswith("---")]
    assert removed.startswith("-" + "x" * (LINE_LIMIT - 1))
    assert removed.endswith(f"… ({3 * LINE_LIMIT:,} characters)")
    assert not any(line.startswith("?") for line in diff)


def test_long_diffs_are_cut_to_a_fixed_number_of_lines() -> None:
    recorded = "\n".join(f"line {n}" for n in range(100))
    replayed = "\n".join(f"line {n}!" for n in range(100))
    lines = short_diff(recorded, replayed).split("\n")
    full = list(
        difflib.unified_diff(
            recorded.split("\n"), replayed.split("\n"), "recorded", "replayed", lineterm="", n=1
        )
    )
    assert len(lines) == DIFF_LINES + 1
    assert lines[-1] == f"... {len(full) - DIFF_LINES} more diff lines"
