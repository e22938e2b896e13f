"""Verifier of fs-newest-report (MCPMark contract: exit code 0 means PASS).

Checks that latest.csv has the header region,newest,count and, per region sorted by name, the
report with the latest DD-MM-YYYY date and the report count; reports intact.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, TypeGuard

EXPECTED = ['central,central-report-24-09-2024.txt,4', 'east,east-report-11-06-2024.txt,5', 'north,north-report-16-09-2024.txt,7', 'south,south-report-19-01-2024.txt,6', 'west,west-report-19-12-2023.txt,5']
REPORTS = {'reports/north/north-report-04-02-2022.txt': 'Region: north\nPeriod ending: 2022-02-04\nRevenue: 72985\n', 'reports/north/north-report-12-09-2022.txt': 'Region: north\nPeriod ending: 2022-09-12\nRevenue: 77439\n', 'reports/north/north-report-01-12-2022.txt': 'Region: north\nPeriod ending: 2022-12-01\nRevenue: 29281\n', 'reports/north/north-report-18-03-2023.txt': 'Region: north\nPeriod ending: 2023-03-18\nRevenue: 16423\n', 'reports/north/north-report-29-12-2023.txt': 'Region: north\nPeriod ending: 2023-12-29\nRevenue: 88405\n', 'reports/north/north-report-12-06-2024.txt': 'Region: north\nPeriod ending: 2024-06-12\nRevenue: 62606\n', 'reports/north/north-report-16-09-2024.txt': 'Region: north\nPeriod ending: 2024-09-16\nRevenue: 13026\n', 'reports/north/notes.md': 'Notes for north: reports are named by day.\n', 'reports/south/south-report-15-03-2022.txt': 'Region: south\nPeriod ending: 2022-03-15\nRevenue: 68155\n', 'reports/south/south-report-02-02-2023.txt': 'Region: south\nPeriod ending: 2023-02-02\nRevenue: 15527\n', 'reports/south/south-report-04-05-2023.txt': 'Region: south\nPeriod ending: 2023-05-04\nRevenue: 81538\n', 'reports/south/south-report-06-05-2023.txt': 'Region: south\nPeriod ending: 2023-05-06\nRevenue: 74324\n', 'reports/south/south-report-30-06-2023.txt': 'Region: south\nPeriod ending: 2023-06-30\nRevenue: 66658\n', 'reports/south/south-report-19-01-2024.txt': 'Region: south\nPeriod ending: 2024-01-19\nRevenue: 78954\n', 'reports/south/notes.md': 'Notes for south: reports are named by day.\n', 'reports/east/east-report-04-02-2022.txt': 'Region: east\nPeriod ending: 2022-02-04\nRevenue: 21672\n', 'reports/east/east-report-18-02-2023.txt': 'Region: east\nPeriod ending: 2023-02-18\nRevenue: 21119\n', 'reports/east/east-report-03-08-2023.txt': 'Region: east\nPeriod ending: 2023-08-03\nRevenue: 56126\n', 'reports/east/east-report-07-01-2024.txt': 'Region: east\nPeriod ending: 2024-01-07\nRevenue: 11589\n', 'reports/east/east-report-11-06-2024.txt': 'Region: east\nPeriod ending: 2024-06-11\nRevenue: 82577\n', 'reports/east/notes.md': 'Notes for east: reports are named by day.\n', 'reports/west/west-report-05-01-2022.txt': 'Region: west\nPeriod ending: 2022-01-05\nRevenue: 67305\n', 'reports/west/west-report-06-04-2022.txt': 'Region: west\nPeriod ending: 2022-04-06\nRevenue: 44927\n', 'reports/west/west-report-16-11-2022.txt': 'Region: west\nPeriod ending: 2022-11-16\nRevenue: 68854\n', 'reports/west/west-report-30-11-2023.txt': 'Region: west\nPeriod ending: 2023-11-30\nRevenue: 17916\n', 'reports/west/west-report-19-12-2023.txt': 'Region: west\nPeriod ending: 2023-12-19\nRevenue: 65727\n', 'reports/west/notes.md': 'Notes for west: reports are named by day.\n', 'reports/central/central-report-21-12-2022.txt': 'Region: central\nPeriod ending: 2022-12-21\nRevenue: 11288\n', 'reports/central/central-report-18-03-2023.txt': 'Region: central\nPeriod ending: 2023-03-18\nRevenue: 31145\n', 'reports/central/central-report-11-06-2023.txt': 'Region: central\nPeriod ending: 2023-06-11\nRevenue: 67409\n', 'reports/central/central-report-24-09-2024.txt': 'Region: central\nPeriod ending: 2024-09-24\nRevenue: 77353\n', 'reports/central/notes.md': 'Notes for central: reports are named by day.\n'}


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


def check(root: Path) -> bool:
    return answer_lines(root, REPORTS, "latest.csv", "region,newest,count", EXPECTED)


def main(check: Callable[[Path], bool]) -> NoReturn:
    """Run ``check`` on the tree named by FILESYSTEM_TEST_DIR; exit 0 when it passes."""
    root = Path(os.environ["FILESYSTEM_TEST_DIR"])
    sys.exit(0 if check(root) else 1)


if __name__ == "__main__":
    main(check)
