"""Verifier of fs-index-page (MCPMark contract: exit code 0 means PASS).

Checks that site/index.md is '# Posts', a blank line, then one `- [title](../posts/file) (date)`
line per non-draft post, newest first, final newline; posts unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeGuard

ENTRIES = ['- [How we test migrations](../posts/how-we-test-migrations.md) (2023-12-30)', '- [Notes from PyCon](../posts/notes-from-pycon.md) (2023-09-09)', '- [Caching without tears](../posts/caching-without-tears.md) (2023-08-24)', '- [Why we moved to Postgres](../posts/why-we-moved-to-postgres.md) (2023-06-18)', '- [Hiring a second SRE](../posts/hiring-a-second-sre.md) (2023-06-15)', '- [A week of on-call](../posts/a-week-of-on-call.md) (2023-04-25)', '- [Shipping on Fridays](../posts/shipping-on-fridays.md) (2023-02-10)', '- [Release 1.2 notes](../posts/release-12-notes.md) (2023-01-08)']
EXPECTED = '# Posts\n\n- [How we test migrations](../posts/how-we-test-migrations.md) (2023-12-30)\n- [Notes from PyCon](../posts/notes-from-pycon.md) (2023-09-09)\n- [Caching without tears](../posts/caching-without-tears.md) (2023-08-24)\n- [Why we moved to Postgres](../posts/why-we-moved-to-postgres.md) (2023-06-18)\n- [Hiring a second SRE](../posts/hiring-a-second-sre.md) (2023-06-15)\n- [A week of on-call](../posts/a-week-of-on-call.md) (2023-04-25)\n- [Shipping on Fridays](../posts/shipping-on-fridays.md) (2023-02-10)\n- [Release 1.2 notes](../posts/release-12-notes.md) (2023-01-08)\n'
POSTS = {'posts/why-we-moved-to-postgres.md': '---\ntitle: Why we moved to Postgres\ndate: 2023-06-18\ndraft: false\n---\n\nWhy we moved to Postgres - a few paragraphs follow.\n', 'posts/a-week-of-on-call.md': '---\ntitle: A week of on-call\ndate: 2023-04-25\ndraft: false\n---\n\nA week of on-call - a few paragraphs follow.\n', 'posts/caching-without-tears.md': '---\ntitle: Caching without tears\ndate: 2023-08-24\ndraft: false\n---\n\nCaching without tears - a few paragraphs follow.\n', 'posts/release-12-notes.md': '---\ntitle: Release 1.2 notes\ndate: 2023-01-08\ndraft: false\n---\n\nRelease 1.2 notes - a few paragraphs follow.\n', 'posts/how-we-test-migrations.md': '---\ntitle: How we test migrations\ndate: 2023-12-30\ndraft: false\n---\n\nHow we test migrations - a few paragraphs follow.\n', 'posts/hiring-a-second-sre.md': '---\ntitle: Hiring a second SRE\ndate: 2023-06-15\ndraft: false\n---\n\nHiring a second SRE - a few paragraphs follow.\n', 'posts/notes-from-pycon.md': '---\ntitle: Notes from PyCon\ndate: 2023-09-09\ndraft: false\n---\n\nNotes from PyCon - a few paragraphs follow.\n', 'posts/feature-flags-revisited.md': '---\ntitle: Feature flags, revisited\ndate: 2023-01-16\ndraft: true\n---\n\nFeature flags, revisited - a few paragraphs follow.\n', 'posts/the-cost-of-retries.md': '---\ntitle: The cost of retries\ndate: 2023-02-25\ndraft: true\n---\n\nThe cost of retries - a few paragraphs follow.\n', 'posts/draft-pricing-experiments.md': '---\ntitle: Draft: pricing experiments\ndate: 2023-09-02\ndraft: true\n---\n\nDraft: pricing experiments - a few paragraphs follow.\n', 'posts/our-incident-template.md': '---\ntitle: Our incident template\ndate: 2023-09-13\ndraft: true\n---\n\nOur incident template - a few paragraphs follow.\n', 'posts/shipping-on-fridays.md': '---\ntitle: Shipping on Fridays\ndate: 2023-02-10\ndraft: false\n---\n\nShipping on Fridays - a few paragraphs follow.\n'}
STYLE = 'body { font-family: sans-serif; max-width: 40em; margin: auto; }\n'


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


def unchanged(root: Path, expected: dict[str, str], what: str) -> bool:
    """Report that every file of ``expected`` (path relative to root: text) still has its text."""
    changed = sorted(name for name, text in expected.items() if read(root / name) != text)
    detail = (": changed or missing " + ", ".join(changed[:5])) if changed else ""
    return report(not changed, what + " unchanged (" + str(len(expected)) + " files)" + detail)


def written(text: str | None, name: str) -> TypeGuard[str]:
    """Report that the file ``name`` the task asks for exists (``text`` is what ``read`` gave)."""
    return report(text is not None, name + " exists")


def check(root: Path) -> bool:
    ok = unchanged(root, POSTS, "posts/")
    ok &= unchanged(root, {"site/style.css": STYLE}, "site/style.css")
    text = read(root / "site" / "index.md")
    if not written(text, "site/index.md"):
        return False
    lines = text.splitlines()
    ok &= report(lines[:2] == ["# Posts", ""], "starts with '# Posts' and a blank line")
    entries = [line for line in lines[2:] if line.strip()]
    for want in ENTRIES:
        ok &= report(want in entries, "entry " + want)
    extra = sorted(set(entries) - set(ENTRIES))
    ok &= report(not extra, "no drafts or other lines " + str(extra[:3]))
    ok &= report(entries == ENTRIES, "newest first")
    ok &= report(text == EXPECTED, "no blank lines between entries, final newline")
    return ok


def main(check: Callable[[Path], bool]) -> NoReturn:
    """Run ``check`` on the tree named by FILESYSTEM_TEST_DIR; exit 0 when it passes."""
    root = Path(os.environ["FILESYSTEM_TEST_DIR"])
    sys.exit(0 if check(root) else 1)


if __name__ == "__main__":
    main(check)
