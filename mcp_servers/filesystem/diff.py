"""Unified diffs as the ``diff`` npm package (jsdiff) writes them, for ``edit_file``.

Owns jsdiff's ``diffLines`` (Myers' algorithm with its tie-breaking) and ``createTwoFilesPatch``
with 4 context lines, down to the no-newline-at-end-of-file markers.

Myers' algorithm costs about the square of the number of changed lines. Past
``MAX_EDIT_LENGTH`` changed lines (far more than an edit of a text file makes, but a hostile edit
can ask for millions) the diff stops searching for the shortest script and reports the lines
between the common start and end as removed, then added: still a correct patch, found in linear
time.
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


MAX_EDIT_LENGTH = 1000
"""The most changed lines the shortest-script search looks for before it settles for a coarse
script (see the module's docstring)."""


def _coarse(old: list[str], new: list[str]) -> list[_Component]:
    """The common first and last lines kept, every line between them removed, then added."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    parts = [
        _Component(head, False, False, tokens=old[:head]),
        _Component(len(old) - head - tail, False, True, tokens=old[head : len(old) - tail]),
        _Component(len(new) - head - tail, True, False, tokens=new[head : len(new) - tail]),
        _Component(tail, False, False, tokens=old[len(old) - tail :]),
    ]
    return [part for part in parts if part.count]


def diff_lines(
    old_text: str, new_text: str, *, max_edit_length: int = MAX_EDIT_LENGTH
) -> list[_Component]:
    """jsdiff's ``diffLines``: Myers' algorithm with its exact tie-breaking (removals first),
    coarse past ``max_edit_length`` changed lines."""
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
    for edit_length in range(1, min(len(old) + len(new), max_edit_length) + 1):
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
    # Only reached past max_edit_length: a script of length len(old) + len(new) always exists.
    return _coarse(old, new)


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
