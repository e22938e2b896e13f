"""Verifier of fs-readme-assemble (MCPMark contract: exit code 0 means PASS).

Checks that README.md is exactly the sections listed in order.txt, in that order, each without
trailing newlines, joined by one blank line and ending with a newline; unlisted sections absent;
sections and order.txt unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeGuard

EXPECTED = "# shopctl\n\nA command-line tool to manage the shop's catalog and orders.\n\n## Installation\n\n    pip install shopctl\n\nPython 3.11 or newer.\n\n## Configuration\n\nshopctl reads ~/.config/shopctl.toml. Set `api_url` and `token`.\n\n## Usage\n\n    shopctl orders list --open\n    shopctl catalog sync\n\n## License\n\nMIT. See LICENSE.\n"
ORDER = ['intro.md', 'install.md', 'configuration.md', 'usage.md', 'license.md']
SOURCES = {'sections/intro.md': "# shopctl\n\nA command-line tool to manage the shop's catalog and orders.\n", 'sections/install.md': '## Installation\n\n    pip install shopctl\n\nPython 3.11 or newer.\n\n', 'sections/configuration.md': '## Configuration\n\nshopctl reads ~/.config/shopctl.toml. Set `api_url` and `token`.\n', 'sections/usage.md': '## Usage\n\n    shopctl orders list --open\n    shopctl catalog sync\n', 'sections/faq.md': '## FAQ\n\nQ: Does it work offline?\nA: No.\n', 'sections/changelog.md': '## Changelog\n\n- 1.2: catalog sync\n- 1.1: first public release\n', 'sections/license.md': '## License\n\nMIT. See LICENSE.\n', 'order.txt': 'intro.md\ninstall.md\nconfiguration.md\nusage.md\nlicense.md\n'}
UNLISTED = ['changelog.md', 'faq.md']


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
    ok = unchanged(root, SOURCES, "sections/ and order.txt")
    text = read(root / "README.md")
    if not written(text, "README.md"):
        return False
    positions = []
    for name in ORDER:
        part = SOURCES["sections/" + name].rstrip("\n")
        positions.append(text.find(part))
        ok &= report(part in text, "contains sections/" + name)
    ok &= report(positions == sorted(positions), "sections in the order of order.txt")
    for name in UNLISTED:
        first = SOURCES["sections/" + name].splitlines()[0]
        ok &= report(first not in text, "leaves out sections/" + name)
    ok &= report(text == EXPECTED, "exactly the sections joined by one blank line, final newline")
    return ok


def main(check: Callable[[Path], bool]) -> NoReturn:
    """Run ``check`` on the tree named by FILESYSTEM_TEST_DIR; exit 0 when it passes."""
    root = Path(os.environ["FILESYSTEM_TEST_DIR"])
    sys.exit(0 if check(root) else 1)


if __name__ == "__main__":
    main(check)
