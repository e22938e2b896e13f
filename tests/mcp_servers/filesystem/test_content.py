"""The single-pass head/tail readers against the reference's own chunked loops, and the linear
edit matcher and bounded diff."""

from __future__ import annotations

import codecs
import itertools
import math
import random
from dataclasses import dataclass

import pytest

from mcp_servers.filesystem.content import (
    apply_edits,
    decode_utf8,
    head_text,
    line_count,
    tail_start,
    tail_text,
)
from mcp_servers.filesystem.diff import diff_lines, unified_diff
from mcp_servers.filesystem.errors import ToolError


def reference_head(data: bytes, count: float) -> str:
    """The reference server's ``head``: 1 KiB chunks, a growing buffer split on each newline."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines: list[str] = []
    buffer = ""
    offset = 0
    while len(lines) < count:
        chunk = data[offset : offset + 1024]
        if not chunk:
            break
        offset += len(chunk)
        buffer += decoder.decode(chunk)
        cut = buffer.rfind("\n")
        if cut != -1:
            for line in buffer[:cut].split("\n"):
                lines.append(line)
                if len(lines) >= count:
                    break
            buffer = buffer[cut + 1 :]
    buffer += decoder.decode(b"", final=True)
    if buffer and len(lines) < count:
        lines.append(buffer)
    return "\n".join(lines)


def reference_tail(data: bytes, count: float) -> str:
    """The reference server's ``tail``: 1 KiB chunks backwards until ``count`` newlines."""
    if not data:
        return ""
    position = len(data)
    newlines = 0
    while position > 0 and newlines < count:
        size = min(1024, position)
        position -= size
        newlines += data[position : position + size].count(b"\n")
    pieces = decode_utf8(data[position:]).replace("\r\n", "\n").split("\n")
    begin = math.trunc(-count)
    begin = max(len(pieces) + begin, 0) if begin < 0 else begin
    return "\n".join(pieces[begin:])


PIECES = [b"a", b"\n", b"\r\n", b"\xc3\xa9", b"\xe2\x82", b"\xac", b"\xff", b"x" * 700, b"\n\n"]
COUNTS = [1, 2, 3, 0.5, 1.5, 2.7, 5, 40, 1e9, -1, 0.2]


def samples(seed: int, number: int) -> list[bytes]:
    generator = random.Random(seed)
    return [
        b"".join(generator.choice(PIECES) for _ in range(generator.choice([0, 1, 4, 30, 400])))
        for _ in range(number)
    ]


@pytest.mark.parametrize("count", COUNTS)
def test_head_and_tail_of_a_whole_file_match_the_reference_loops(count: float) -> None:
    for data in samples(int(count * 10) % 97, 300):
        if count > 0:
            assert head_text(data, count) == (reference_head(data, count), True), data
        assert tail_text(data, count) == (reference_tail(data, count), True), data


@pytest.mark.parametrize("count", COUNTS)
def test_reading_from_one_end_gives_the_same_lines_once_the_bytes_hold_them(
    count: float,
) -> None:
    """What a bounded read hands over (a prefix, or a suffix ending at a 1 KiB step from the end
    holding the lines) answers exactly as the whole file does; too short a part says so."""
    answered = {"head": 0, "tail": 0}
    for data in samples(int(count * 10) % 89 + 1, 200):
        for cut in (1, 1024, 4096):
            if cut >= len(data):
                continue
            prefix = data[:cut]
            text, held = head_text(prefix, count, complete=False)
            if held:
                answered["head"] += 1
                assert text == reference_head(data, count)
            suffix = data[len(data) - cut :]
            text, held = tail_text(suffix, count, complete=False)
            if held:
                answered["tail"] += 1
                assert text == reference_tail(data, count)
            else:
                assert tail_start(suffix, count, complete=False) is None
    assert answered["tail"] > 0 or count > 1000
    assert answered["head"] > 0 or count > 1000


def test_a_part_without_enough_lines_is_reported_and_its_cut_character_dropped() -> None:
    data = "é".encode() * 10
    text, held = head_text(data[:5], 2, complete=False)  # ends inside the third "é"
    assert (text, held) == ("éé", False)
    text, held = tail_text(data[3:], 2, complete=False)  # starts inside the second "é"
    assert (text, held) == ("é" * 8, False)
    assert head_text(b"one\ntwo\nthree", 2, complete=False) == ("one\ntwo", True)


def test_line_counts_follow_the_reference_loop_condition() -> None:
    assert [line_count(value) for value in (3, 2.5, 0.1, 0, -2)] == [3, 3, 1, 0, 0]
    assert line_count(math.inf) > 10**15


def test_head_of_a_huge_count_does_not_overflow() -> None:
    assert head_text(b"a\nb", 1e300) == ("a\nb", True)


@dataclass
class Edit:
    old_text: str
    new_text: str


def test_whitespace_blind_edit_finds_the_first_run_after_a_false_start() -> None:
    # The first two lines start a match that fails at the third: the run found is the later one.
    content = "  a\n  a\n  x\n  a\n  b\nend"
    assert apply_edits(content, [Edit("a\nb", "c\nd")]) == "  a\n  a\n  x\n  c\nd\nend"
    overlapping = "a\na\na\nb"
    assert apply_edits(overlapping, [Edit(" a\n a\n b", "z")]) == "a\nz"
    with pytest.raises(ToolError, match="Could not find exact match"):
        apply_edits("a\na\na", [Edit(" a\n b", "z")])


def test_a_hostile_whitespace_blind_edit_is_linear() -> None:
    # Trying every start would compare 2,000 lines at each of 200,000 starts (4e8 steps).
    content = "\n".join(["a"] * 200_000)
    with pytest.raises(ToolError):
        apply_edits(content, [Edit("\n".join([" a"] * 2_000 + ["b"]), "z")])


def _applied(old_text: str, new_text: str, max_edit_length: int) -> str:
    """Rebuild the new text from the components of the diff of the old one."""
    rebuilt: list[str] = []
    for component in diff_lines(old_text, new_text, max_edit_length=max_edit_length):
        if not component.removed:
            rebuilt.extend(component.tokens)
    return "".join(rebuilt)


def test_the_diff_settles_for_a_coarse_script_past_the_edit_length_bound() -> None:
    old = "".join(f"same {index}\n" for index in range(5)) + "".join(
        f"old {index}\n" for index in range(50)
    )
    new = "".join(f"same {index}\n" for index in range(5)) + "".join(
        f"new {index}\n" for index in range(50)
    )
    coarse = diff_lines(old, new, max_edit_length=10)
    assert [(part.count, part.added, part.removed) for part in coarse] == [
        (5, False, False),
        (50, False, True),
        (50, True, False),
    ]
    assert _applied(old, new, 10) == new
    # Under the bound the shortest script is still the one jsdiff finds.
    assert diff_lines(old, new) == diff_lines(old, new, max_edit_length=10**6)
    patch = unified_diff(old, new, "/f.txt")
    assert patch.count("\n-old ") == 50
    assert patch.count("\n+new ") == 50


@pytest.mark.parametrize(("old", "new"), list(itertools.product(["", "a\n", "a\nb\n"], repeat=2)))
def test_coarse_scripts_rebuild_the_new_text(old: str, new: str) -> None:
    assert _applied(old, new, 0) == new
