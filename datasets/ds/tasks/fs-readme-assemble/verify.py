"""Verifier of fs-readme-assemble (MCPMark contract: exit code 0 means PASS).

Checks that README.md is exactly the sections listed in order.txt, in that order, each without
trailing newlines, joined by one blank line and ending with a newline; unlisted sections absent;
sections and order.txt unchanged.
"""

import os
import sys
from pathlib import Path

SOURCES = {'sections/intro.md': "# shopctl\n\nA command-line tool to manage the shop's catalog and orders.\n", 'sections/install.md': '## Installation\n\n    pip install shopctl\n\nPython 3.11 or newer.\n\n', 'sections/configuration.md': '## Configuration\n\nshopctl reads ~/.config/shopctl.toml. Set `api_url` and `token`.\n', 'sections/usage.md': '## Usage\n\n    shopctl orders list --open\n    shopctl catalog sync\n', 'sections/faq.md': '## FAQ\n\nQ: Does it work offline?\nA: No.\n', 'sections/changelog.md': '## Changelog\n\n- 1.2: catalog sync\n- 1.1: first public release\n', 'sections/license.md': '## License\n\nMIT. See LICENSE.\n', 'order.txt': 'intro.md\ninstall.md\nconfiguration.md\nusage.md\nlicense.md\n'}
ORDER = ['intro.md', 'install.md', 'configuration.md', 'usage.md', 'license.md']
UNLISTED = ['changelog.md', 'faq.md']
EXPECTED = "# shopctl\n\nA command-line tool to manage the shop's catalog and orders.\n\n## Installation\n\n    pip install shopctl\n\nPython 3.11 or newer.\n\n## Configuration\n\nshopctl reads ~/.config/shopctl.toml. Set `api_url` and `token`.\n\n## Usage\n\n    shopctl orders list --open\n    shopctl catalog sync\n\n## License\n\nMIT. See LICENSE.\n"


def report(ok, what):
    print(("[ok] " if ok else "[FAIL] ") + what)
    return ok


def read(path):
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def files_under(root, folder):
    """Every file below root/folder as {path relative to root: text}."""
    base = root / folder
    if not base.is_dir():
        return {}
    found = {}
    for path in sorted(base.rglob("*")):
        if path.is_file():
            found[path.relative_to(root).as_posix()] = read(path)
    return found


def unchanged(root, expected, what):
    changed = sorted(name for name, text in expected.items() if read(root / name) != text)
    detail = (": changed or missing " + ", ".join(changed[:5])) if changed else ""
    return report(not changed, what + " unchanged (" + str(len(expected)) + " files)" + detail)


def main():
    root = Path(os.environ["FILESYSTEM_TEST_DIR"])
    ok = True
    ok &= unchanged(root, SOURCES, "sections/ and order.txt")
    text = read(root / "README.md")
    if not report(text is not None, "README.md exists"):
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


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
