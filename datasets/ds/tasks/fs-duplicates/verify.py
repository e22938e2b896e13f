"""Verifier of fs-duplicates (MCPMark contract: exit code 0 means PASS).

Checks that duplicates.txt has exactly one sorted `a, b[, c]` line per group of files with
identical content under media/, lines sorted, and that media/ is unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeGuard

EXPECTED = ['drafts/copy-10.txt, drafts/item-04.txt, inbox/copy-11.txt', 'drafts/item-00.txt, notes/copy-00.txt', 'inbox/copy-20.txt, notes/item-08.txt', 'inbox/item-16.txt, notes/copy-40.txt', 'lyrics/copy-30.txt, lyrics/item-12.txt, notes/copy-31.txt']
MEDIA = {'media/drafts/item-00.txt': 'song road river garden evening window stone river stone stone harbour evening road winter\n', 'media/notes/item-01.txt': 'road harbour song harbour bread road river winter harbour winter road harbour road light stone garden\n', 'media/drafts/item-02.txt': 'road light evening road river light harbour stone song river river stone song light road song garden bread evening\n', 'media/notes/item-03.txt': 'song evening bread winter window garden bread road river road light bread river harbour bread winter road stone evening light river road song song evening\n', 'media/drafts/item-04.txt': 'light river light stone stone winter garden garden stone stone garden bread garden evening evening light river road window harbour bread\n', 'media/drafts/item-05.txt': 'stone harbour garden stone garden river road road winter garden harbour bread window song light harbour stone road light song harbour bread winter harbour river river light winter harbour bread\n', 'media/notes/item-06.txt': 'road road window window evening window song stone window bread stone harbour bread bread stone evening evening winter light song stone evening river song\n', 'media/inbox/item-07.txt': 'harbour song winter evening river winter light river song song light evening winter song light river harbour bread road window stone road winter river\n', 'media/notes/item-08.txt': 'stone window stone road winter light song light road harbour road song garden song evening\n', 'media/drafts/item-09.txt': 'stone garden garden song winter light light river bread winter garden song garden bread evening road stone evening evening window bread bread road stone song river river evening road window\n', 'media/drafts/item-10.txt': 'winter harbour harbour bread stone window bread light garden winter\n', 'media/drafts/item-11.txt': 'stone harbour harbour harbour evening garden bread garden stone bread song light light song light winter garden harbour winter evening window song\n', 'media/lyrics/item-12.txt': 'bread winter bread bread harbour road bread bread garden road road winter river stone light\n', 'media/inbox/item-13.txt': 'harbour evening song river bread garden garden bread song evening light evening\n', 'media/lyrics/item-14.txt': 'light bread bread bread stone garden road evening bread garden light road river road harbour\n', 'media/notes/item-15.txt': 'winter light harbour garden winter winter river light road garden winter winter window window river garden window window harbour winter song harbour winter garden winter bread river song light\n', 'media/inbox/item-16.txt': 'song stone road river harbour winter garden stone\n', 'media/lyrics/item-17.txt': 'garden bread harbour road stone harbour window harbour window river bread evening bread bread\n', 'media/notes/item-18.txt': 'winter bread winter window evening harbour river song river song stone light road light bread harbour garden road stone bread winter bread window evening winter evening\n', 'media/drafts/item-19.txt': 'window garden river road bread harbour window garden river song light light window light winter road garden light winter evening garden\n', 'media/inbox/item-20.txt': 'harbour garden road garden bread stone evening garden window\n', 'media/notes/item-21.txt': 'road window winter stone evening river evening window river light bread road song bread bread road stone stone bread light light stone harbour song stone harbour road bread evening window\n', 'media/lyrics/item-22.txt': 'winter winter road garden light bread road light river evening harbour road road bread window light stone river bread harbour light window\n', 'media/lyrics/item-23.txt': 'road window bread window light garden harbour road evening road road song\n', 'media/notes/item-24.txt': 'harbour bread road winter song light stone bread light window light stone evening song window garden road song garden bread light evening light\n', 'media/notes/item-25.txt': 'road bread winter garden winter harbour stone road river bread window harbour light road garden road window road light river river winter garden river road winter winter garden window\n', 'media/notes/copy-00.txt': 'song road river garden evening window stone river stone stone harbour evening road winter\n', 'media/drafts/copy-10.txt': 'light river light stone stone winter garden garden stone stone garden bread garden evening evening light river road window harbour bread\n', 'media/inbox/copy-11.txt': 'light river light stone stone winter garden garden stone stone garden bread garden evening evening light river road window harbour bread\n', 'media/inbox/copy-20.txt': 'stone window stone road winter light song light road harbour road song garden song evening\n', 'media/lyrics/copy-30.txt': 'bread winter bread bread harbour road bread bread garden road road winter river stone light\n', 'media/notes/copy-31.txt': 'bread winter bread bread harbour road bread bread garden road road winter river stone light\n', 'media/notes/copy-40.txt': 'song stone road river harbour winter garden stone\n', 'media/inbox/lookalike.txt': 'nedrag enots thgil daor ruobrah daor retniw ruobrah retniw revir daor daerb ruobrah gnos ruobrah daor\n'}


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


def written(text: str | None, name: str) -> TypeGuard[str]:
    """Report that the file ``name`` the task asks for exists (``text`` is what ``read`` gave)."""
    return report(text is not None, name + " exists")


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


def check(root: Path) -> bool:
    return listed(root, MEDIA, "media", "duplicates.txt", EXPECTED)


def main(check: Callable[[Path], bool]) -> NoReturn:
    """Run ``check`` on the tree named by FILESYSTEM_TEST_DIR; exit 0 when it passes."""
    root = Path(os.environ["FILESYSTEM_TEST_DIR"])
    sys.exit(0 if check(root) else 1)


if __name__ == "__main__":
    main(check)
