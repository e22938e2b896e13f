"""Verifier of fs-kebab-names (MCPMark contract: exit code 0 means PASS).

Checks that every file of docs/ now has its kebab-case name (lowercase, runs of spaces and
underscores replaced by one hyphen) with unchanged content, that already-conforming names stay,
that docs/ holds no other files, and that README.md is unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

EXPECTED = {'docs/meeting-notes-2024.md': '# Meeting Notes 2024\n\n- item 24: owner ana\n- item 12: owner li\n- item 72: owner li\n- item 77: owner sam\n- item 95: owner sam\n- item 66: owner sam\n- item 16: owner ana\n', 'docs/project-plan-v2.md': '# Project Plan v2\n\n- item 63: owner ana\n- item 87: owner li\n- item 6: owner sam\n', 'docs/roadmap.md': '# ROADMAP\n\n- item 5: owner li\n- item 11: owner ana\n- item 60: owner sam\n- item 90: owner ana\n- item 23: owner sam\n- item 29: owner li\n- item 36: owner ana\n- item 20: owner li\n', 'docs/api-reference.md': '# api  reference\n\n- item 75: owner li\n- item 81: owner sam\n- item 32: owner ana\n- item 19: owner li\n- item 16: owner ana\n- item 66: owner sam\n- item 17: owner li\n', 'docs/onboarding-guide.txt': '# Onboarding Guide\n\n- item 1: owner ana\n- item 71: owner sam\n- item 71: owner ana\n- item 21: owner sam\n- item 90: owner ana\n- item 67: owner li\n', 'docs/release-notes-3.1.md': '# release notes 3.1\n\n- item 39: owner ana\n- item 95: owner ana\n- item 3: owner li\n- item 20: owner sam\n', 'docs/style-guide.md': '# style-guide\n\n- item 72: owner sam\n- item 22: owner li\n- item 65: owner ana\n', 'docs/q3-okrs.md': '# Q3 OKRs\n\n- item 54: owner sam\n- item 22: owner sam\n- item 59: owner sam\n- item 71: owner ana\n- item 84: owner ana\n- item 52: owner sam\n- item 56: owner ana\n- item 32: owner sam\n', 'docs/team-contacts.csv': '# team  contacts\n\n- item 13: owner ana\n- item 39: owner ana\n- item 44: owner li\n- item 30: owner sam\n- item 38: owner li\n', 'docs/changelog.md': '# changelog\n\n- item 24: owner li\n- item 47: owner li\n- item 83: owner sam\n- item 14: owner ana\n- item 44: owner li\n- item 82: owner sam\n- item 63: owner ana\n', 'docs/how-to-deploy.md': '# how to deploy\n\n- item 66: owner sam\n- item 81: owner ana\n- item 62: owner li\n', 'docs/index.md': '# Team docs\n\n- [Meeting Notes 2024](Meeting%20Notes%202024.md)\n- [Project_Plan v2](Project_Plan%20v2.md)\n- [ROADMAP](ROADMAP.md)\n- [api  reference](api%20%20reference.MD)\n- [Onboarding Guide](Onboarding%20Guide.txt)\n- [release_notes_3.1](release_notes_3.1.md)\n- [style-guide](style-guide.md)\n- [Q3 OKRs](Q3%20OKRs.md)\n- [team__contacts](team__contacts.csv)\n- [changelog](changelog.md)\n- [how_to_deploy](how_to_deploy.md)\n'}
MOVES = {'docs/Meeting Notes 2024.md': 'docs/meeting-notes-2024.md', 'docs/Project_Plan v2.md': 'docs/project-plan-v2.md', 'docs/ROADMAP.md': 'docs/roadmap.md', 'docs/api  reference.MD': 'docs/api-reference.md', 'docs/Onboarding Guide.txt': 'docs/onboarding-guide.txt', 'docs/release_notes_3.1.md': 'docs/release-notes-3.1.md', 'docs/Q3 OKRs.md': 'docs/q3-okrs.md', 'docs/team__contacts.csv': 'docs/team-contacts.csv', 'docs/how_to_deploy.md': 'docs/how-to-deploy.md'}
README = '# Team space\n\nDocuments live in docs/.\n'
STAY = ['docs/style-guide.md', 'docs/changelog.md', 'docs/index.md']


def report(ok: bool, what: str) -> bool:
    """Print ``[ok] what`` or ``[FAIL] what`` and return whether the check passed."""
    print(("[ok] " if ok else "[FAIL] ") + what)
    return bool(ok)


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


def check(root: Path) -> bool:
    ok = moved(root, "docs", MOVES, STAY, EXPECTED)
    ok &= unchanged(root, {"README.md": README}, "README.md")
    return ok


def main(check: Callable[[Path], bool]) -> NoReturn:
    """Run ``check`` on the tree named by FILESYSTEM_TEST_DIR; exit 0 when it passes."""
    root = Path(os.environ["FILESYSTEM_TEST_DIR"])
    sys.exit(0 if check(root) else 1)


if __name__ == "__main__":
    main(check)
