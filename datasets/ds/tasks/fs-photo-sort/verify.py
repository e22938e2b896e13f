"""Verifier of fs-photo-sort (MCPMark contract: exit code 0 means PASS).

Checks that every photos/IMG_YYYYMMDD_HHMMSS.jpg is now photos/YYYY/MM/<same name> with the same
content, that every other file of photos/ stays in place unchanged, and that photos/ holds no
other files.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

EXPECTED = {'photos/2022/12/IMG_20221225_070619.jpg': 'JFIF placeholder IMG_20221225_070619.jpg ee878a7b16b044b2\n', 'photos/2022/11/IMG_20221127_184044.jpg': 'JFIF placeholder IMG_20221127_184044.jpg 94fce712b7dc8df0\n', 'photos/2023/01/IMG_20230122_090543.jpg': 'JFIF placeholder IMG_20230122_090543.jpg ae994d62c8eaa044\n', 'photos/2022/12/IMG_20221226_212831.jpg': 'JFIF placeholder IMG_20221226_212831.jpg e42ca63a29119b41\n', 'photos/2022/12/IMG_20221209_203956.jpg': 'JFIF placeholder IMG_20221209_203956.jpg 2ccb8d67e66237b6\n', 'photos/2023/02/IMG_20230222_135620.jpg': 'JFIF placeholder IMG_20230222_135620.jpg 6b7e50972195449b\n', 'photos/2022/11/IMG_20221126_213041.jpg': 'JFIF placeholder IMG_20221126_213041.jpg c8961e4e27c2685b\n', 'photos/2023/02/IMG_20230205_201611.jpg': 'JFIF placeholder IMG_20230205_201611.jpg be6e1a6ac5dc2754\n', 'photos/2022/11/IMG_20221123_113200.jpg': 'JFIF placeholder IMG_20221123_113200.jpg 318c9b09d4176d90\n', 'photos/2023/01/IMG_20230103_105447.jpg': 'JFIF placeholder IMG_20230103_105447.jpg 2302c653197b6fd4\n', 'photos/2022/12/IMG_20221216_072847.jpg': 'JFIF placeholder IMG_20221216_072847.jpg 0f304acb4e1d059d\n', 'photos/2023/01/IMG_20230131_155809.jpg': 'JFIF placeholder IMG_20230131_155809.jpg 9ca0c5fc80906d09\n', 'photos/2022/12/IMG_20221210_143303.jpg': 'JFIF placeholder IMG_20221210_143303.jpg 343713015a5edbad\n', 'photos/2022/11/IMG_20221111_080613.jpg': 'JFIF placeholder IMG_20221111_080613.jpg 157ea4d9c4cae2ae\n', 'photos/IMG_edit_copy.jpg': 'JFIF placeholder edited copy\n', 'photos/VID_20230102_101010.mp4': 'ftypisom placeholder video\n', 'photos/cover.png': 'PNG placeholder cover\n', 'photos/notes.txt': 'Trip photos from the winter. Sort them by month please.\n'}
MOVES = {'photos/IMG_20221225_070619.jpg': 'photos/2022/12/IMG_20221225_070619.jpg', 'photos/IMG_20221127_184044.jpg': 'photos/2022/11/IMG_20221127_184044.jpg', 'photos/IMG_20230122_090543.jpg': 'photos/2023/01/IMG_20230122_090543.jpg', 'photos/IMG_20221226_212831.jpg': 'photos/2022/12/IMG_20221226_212831.jpg', 'photos/IMG_20221209_203956.jpg': 'photos/2022/12/IMG_20221209_203956.jpg', 'photos/IMG_20230222_135620.jpg': 'photos/2023/02/IMG_20230222_135620.jpg', 'photos/IMG_20221126_213041.jpg': 'photos/2022/11/IMG_20221126_213041.jpg', 'photos/IMG_20230205_201611.jpg': 'photos/2023/02/IMG_20230205_201611.jpg', 'photos/IMG_20221123_113200.jpg': 'photos/2022/11/IMG_20221123_113200.jpg', 'photos/IMG_20230103_105447.jpg': 'photos/2023/01/IMG_20230103_105447.jpg', 'photos/IMG_20221216_072847.jpg': 'photos/2022/12/IMG_20221216_072847.jpg', 'photos/IMG_20230131_155809.jpg': 'photos/2023/01/IMG_20230131_155809.jpg', 'photos/IMG_20221210_143303.jpg': 'photos/2022/12/IMG_20221210_143303.jpg', 'photos/IMG_20221111_080613.jpg': 'photos/2022/11/IMG_20221111_080613.jpg'}
STAY = ['photos/IMG_edit_copy.jpg', 'photos/VID_20230102_101010.mp4', 'photos/cover.png', 'photos/notes.txt']


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
    return moved(root, "photos", MOVES, STAY, EXPECTED)


def main(check: Callable[[Path], bool]) -> NoReturn:
    """Run ``check`` on the tree named by FILESYSTEM_TEST_DIR; exit 0 when it passes."""
    root = Path(os.environ["FILESYSTEM_TEST_DIR"])
    sys.exit(0 if check(root) else 1)


if __name__ == "__main__":
    main(check)
