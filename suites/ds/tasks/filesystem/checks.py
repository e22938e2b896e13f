"""The verifiers' side of the filesystem tasks: reading the tree a run left, the checks several
tasks share, and the entry point of their ``verify.py``.

Every function here may be copied into a ``verify.py`` (``suites.ds.verify_script`` takes the
ones a task's ``check`` reaches): they use only the standard library and ``report``, and take what
they compare as arguments.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeGuard

from suites.ds.tasks.checks import report


def read(path: Path) -> str | None:
    """The file's text, or None when it is missing or not UTF-8 text."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def files_under(root: Path, folder: str) -> dict[str, str | None]:
    """Every file below root/folder as {path relative to root: text}."""
    base = root / folder
    if not base.is_dir():
        return {}
    found = {}
    for path in sorted(base.rglob("*")):
        if path.is_file():
            found[path.relative_to(root).as_posix()] = read(path)
    return found


def unchanged(root: Path, expected: dict[str, str], what: str) -> bool:
    """Report that every file of ``expected`` (path relative to root: text) still has its text."""
    changed = sorted(name for name, text in expected.items() if read(root / name) != text)
    detail = (": changed or missing " + ", ".join(changed[:5])) if changed else ""
    return report(not changed, what + " unchanged (" + str(len(expected)) + " files)" + detail)


def written(text: str | None, name: str) -> TypeGuard[str]:
    """Report that the file ``name`` the task asks for exists (``text`` is what ``read`` gave)."""
    return report(text is not None, name + " exists")


def moved(
    root: Path, folder: str, moves: dict[str, str], stay: list[str], expected: dict[str, str]
) -> bool:
    """Report each file of ``moves`` (old path: new path) at its new path only, each of ``stay``
    in place, all with their ``expected`` text, and nothing else under ``folder``."""
    ok = True
    found = files_under(root, folder)
    for old, new in sorted(moves.items()):
        ok &= report(found.get(new) == expected[new] and old not in found, old + " -> " + new)
    for name in sorted(stay):
        ok &= report(found.get(name) == expected[name], name + " stays where it was, unchanged")
    extra = sorted(set(found) - set(expected))
    ok &= report(not extra, "no other files under " + folder + "/ " + str(extra[:5]))
    return ok


def answer_lines(
    root: Path, sources: dict[str, str], target: str, header: str | None, expected: list[str]
) -> bool:
    """Report ``sources`` unchanged and the non-blank lines of ``target``: ``header`` first (when
    given), then exactly ``expected`` in that order."""
    ok = unchanged(root, sources, "the source files")
    text = read(root / target)
    if not written(text, target):
        return False
    lines = [line for line in text.splitlines() if line.strip()]
    if header is not None:
        ok &= report(bool(lines) and lines[0] == header, "header " + header)
        lines = lines[1:]
    for want in expected:
        ok &= report(want in lines, "line " + want)
    ok &= report(len(lines) == len(expected), f"{len(expected)} lines (found {len(lines)})")
    ok &= report(lines == expected, "lines in the required order")
    return ok


def listed(
    root: Path, sources: dict[str, str], folder: str, target: str, expected: list[str]
) -> bool:
    """Report the searched ``folder`` unchanged (``sources``, no file added or removed) and
    ``target`` listing exactly ``expected``, one per line, in that order."""
    ok = unchanged(root, sources, "the searched files")
    same = set(files_under(root, folder)) == set(sources)
    ok &= report(same, "no file added or removed in " + folder + "/")
    text = read(root / target)
    if not written(text, target):
        return False
    lines = [line for line in text.splitlines() if line.strip()]
    for want in expected:
        ok &= report(want in lines, "lists " + want)
    wrong = sorted(set(lines) - set(expected))
    ok &= report(not wrong, "nothing else listed " + str(wrong[:5]))
    ok &= report(lines == expected, "one per line, sorted, no duplicates")
    return ok


def main(check: Callable[[Path], bool]) -> NoReturn:
    """Run ``check`` on the tree named by FILESYSTEM_TEST_DIR; exit 0 when it passes."""
    root = Path(os.environ["FILESYSTEM_TEST_DIR"])
    sys.exit(0 if check(root) else 1)
