"""Unified diffs as the ``diff`` npm package (jsdiff) writes them, for ``edit_file``.

Owns jsdiff's ``diffLines`` (Myers' algorithm with its tie-breaking) and ``createTwoFilesPatch``
with 4 context lines, down to the no-newline-at-end-of-file markers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class _Component:
    count: int
    added: bool
    removed: bool
    previous: _Component | None = None
    tokens: list[str] = field(default_factory=list)


@dataclass
class _DiffPath:
    old_pos: int
    last: _Component | None


def _tokenize_lines(text: str) -> list[str]:
    pieces = re.split(r"(\n|\r\n)", text)
    if not pieces[-1]:
        pieces.pop()
    tokens: list[str] = []
    for index, piece in enumerate(pieces):
        if index % 2:
            tokens[-1] += piece
        else:
            tokens.append(piece)
    return [token for token in tokens if token]


def _extend_common(path: _DiffPath, new: list[str], old: list[str], diagonal: int) -> int:
    old_pos = path.old_pos
    new_pos = old_pos - diagonal
    common = 0
    while (
        new_pos + 1 < len(new) and old_pos + 1 < len(old) and old[old_pos + 1] == new[new_pos + 1]
    ):
        new_pos += 1
        old_pos += 1
        common += 1
    if common:
        path.last = _Component(common, False, False, path.last)
    path.old_pos = old_pos
    return new_pos


def _extend_path(path: _DiffPath, *, added: bool, removed: bool, step: int) -> _DiffPath:
    last = path.last
    if last is not None and last.added == added and last.removed == removed:
        return _DiffPath(
            path.old_pos + step, _Component(last.count + 1, added, removed, last.previous)
        )
    return _DiffPath(path.old_pos + step, _Component(1, added, removed, last))


def _components(last: _Component | None, new: list[str], old: list[str]) -> list[_Component]:
    chain: list[_Component] = []
    while last is not None:
        chain.append(last)
        last = last.previous
    chain.reverse()
    new_pos = old_pos = 0
    for component in chain:
        if component.removed:
            component.tokens = old[old_pos : old_pos + component.count]
            old_pos += component.count
        else:
            component.tokens = new[new_pos : new_pos + component.count]
            new_pos += component.count
            if not component.added:
                old_pos += component.count
    return chain


def diff_lines(old_text: str, new_text: str) -> list[_Component]:
    """jsdiff's ``diffLines``: Myers' algorithm with its exact tie-breaking (removals first)."""
    old = _tokenize_lines(old_text)
    new = _tokenize_lines(new_text)
    unbounded = len(old) + len(new) + 10
    initial = _DiffPath(-1, None)
    new_pos = _extend_common(initial, new, old, 0)
    if initial.old_pos + 1 >= len(old) and new_pos + 1 >= len(new):
        return _components(initial.last, new, old)
    best: dict[int, _DiffPath | None] = {0: initial}
    lowest, highest = -unbounded, unbounded
    if initial.old_pos + 1 >= len(old):
        highest = -1
    if new_pos + 1 >= len(new):
        lowest = 1
    for edit_length in range(1, len(old) + len(new) + 1):
        diagonal = max(lowest, -edit_length)
        while diagonal <= min(highest, edit_length):
            remove_path = best.get(diagonal - 1)
            add_path = best.get(diagonal + 1)
            if remove_path is not None:
                best[diagonal - 1] = None
            can_add = add_path is not None and 0 <= add_path.old_pos - diagonal < len(new)
            can_remove = remove_path is not None and remove_path.old_pos + 1 < len(old)
            if not can_add and not can_remove:
                best[diagonal] = None
                diagonal += 2
                continue
            if not can_remove or (
                can_add
                and remove_path is not None
                and add_path is not None
                and remove_path.old_pos < add_path.old_pos
            ):
                assert add_path is not None
                path = _extend_path(add_path, added=True, removed=False, step=0)
            else:
                assert remove_path is not None
                path = _extend_path(remove_path, added=False, removed=True, step=1)
            new_pos = _extend_common(path, new, old, diagonal)
            if path.old_pos + 1 >= len(old) and new_pos + 1 >= len(new):
                return _components(path.last, new, old)
            best[diagonal] = path
            if path.old_pos + 1 >= len(old):
                highest = min(highest, diagonal - 1)
            if new_pos + 1 >= len(new):
                lowest = max(lowest, diagonal + 1)
            diagonal += 2
    return []  # unreachable: an edit script of length len(old) + len(new) always exists


def unified_diff(old_text: str, new_text: str, filename: str, context: int = 4) -> str:
    """``createTwoFilesPatch(filename, filename, old, new, 'original', 'modified')``."""
    changes = [*diff_lines(old_text, new_text), _Component(0, False, False)]
    hunks: list[tuple[int, int, int, int, list[str]]] = []
    old_start = new_start = 0
    current: list[str] = []
    old_line = new_line = 1
    for index, change in enumerate(changes):
        lines = change.tokens
        if change.added or change.removed:
            if not old_start:
                old_start, new_start = old_line, new_line
                if index > 0:
                    previous = changes[index - 1].tokens
                    current = [" " + line for line in previous[-context:]] if context > 0 else []
                    old_start -= len(current)
                    new_start -= len(current)
            current.extend(("+" if change.added else "-") + line for line in lines)
            if change.added:
                new_line += len(lines)
            else:
                old_line += len(lines)
        else:
            if old_start:
                if len(lines) <= context * 2 and index < len(changes) - 2:
                    current.extend(" " + line for line in lines)
                else:
                    size = min(len(lines), context)
                    current.extend(" " + line for line in lines[:size])
                    hunks.append(
                        (
                            old_start,
                            old_line - old_start + size,
                            new_start,
                            new_line - new_start + size,
                            current,
                        )
                    )
                    old_start = new_start = 0
                    current = []
            old_line += len(lines)
            new_line += len(lines)
    return _format_patch(filename, hunks)


def _format_patch(filename: str, hunks: list[tuple[int, int, int, int, list[str]]]) -> str:
    """jsdiff's ``formatPatch``: headers, hunks, and the no-newline-at-end markers."""
    output = [
        f"Index: {filename}",
        "=" * 67,
        f"--- {filename}\toriginal",
        f"+++ {filename}\tmodified",
    ]
    for old_first, old_count, new_first, new_count, hunk_lines in hunks:
        output.append(
            f"@@ -{old_first - 1 if old_count == 0 else old_first},{old_count}"
            f" +{new_first - 1 if new_count == 0 else new_first},{new_count} @@"
        )
        for line in hunk_lines:
            if line.endswith("\n"):
                output.append(line[:-1])
            else:
                output.extend([line, "\\ No newline at end of file"])
    return "\n".join(output) + "\n"
