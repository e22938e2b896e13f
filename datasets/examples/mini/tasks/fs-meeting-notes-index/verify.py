"""Verifier of fs-meeting-notes-index (MCPMark contract: exit code 0 means PASS).

Reads the sandbox root from FILESYSTEM_TEST_DIR and checks that index.md, at the top level of the
sandbox, lists every meeting note in notes/ as a Markdown link whose text is the note's title,
oldest note first. Every check is printed, so the output explains the verdict.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

# The notes the task starts with and their titles (first heading), oldest first.
NOTES = [
    ("notes/2024-03-04-kickoff.md", "Project Kickoff"),
    ("notes/2024-03-11-design-review.md", "Design Review: Storage Layer"),
    ("notes/2024-03-18-retro.md", "Sprint 1 Retrospective"),
]

# A Markdown link such as [Project Kickoff](notes/2024-03-04-kickoff.md); "./" is allowed.
LINK = re.compile(r"\[(?P<title>[^\]]+)\]\((?:\./)?(?P<target>[^)\s]+)\)")


def report(ok: bool, what: str) -> bool:
    print(f"[{'ok' if ok else 'FAIL'}] {what}")
    return ok


def first_heading(path: Path) -> str | None:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return None


def check(root: Path) -> bool:
    intact = all(
        (root / note).is_file() and first_heading(root / note) == title for note, title in NOTES
    )
    if not report(intact, f"the {len(NOTES)} notes are in place with their titles"):
        return False
    index = root / "index.md"
    if not report(index.is_file(), "index.md exists at the top level"):
        return False
    text = index.read_text(encoding="utf-8")
    links = [(match["target"], match["title"].strip()) for match in LINK.finditer(text)]
    positions = []
    for note, title in NOTES:
        found = (note, title) in links
        report(found, f"index.md links [{title}]({note})")
        if found:
            positions.append(links.index((note, title)))
    if len(positions) < len(NOTES):
        return False
    return report(positions == sorted(positions), "the notes are listed oldest first")


def main() -> int:
    root = os.environ.get("FILESYSTEM_TEST_DIR")
    if not root or not Path(root).is_dir():
        print("FILESYSTEM_TEST_DIR must name the sandbox folder")
        return 1
    passed = check(Path(root))
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
