"""Verifier of fs-newest-report (MCPMark contract: exit code 0 means PASS).

Checks that latest.csv has the header region,newest,count and, per region sorted by name, the
report with the latest DD-MM-YYYY date and the report count; reports intact.
"""

import os
import sys
from pathlib import Path

SOURCES = {'reports/north/north-report-04-02-2022.txt': 'Region: north\nPeriod ending: 2022-02-04\nRevenue: 72985\n', 'reports/north/north-report-12-09-2022.txt': 'Region: north\nPeriod ending: 2022-09-12\nRevenue: 77439\n', 'reports/north/north-report-01-12-2022.txt': 'Region: north\nPeriod ending: 2022-12-01\nRevenue: 29281\n', 'reports/north/north-report-18-03-2023.txt': 'Region: north\nPeriod ending: 2023-03-18\nRevenue: 16423\n', 'reports/north/north-report-29-12-2023.txt': 'Region: north\nPeriod ending: 2023-12-29\nRevenue: 88405\n', 'reports/north/north-report-12-06-2024.txt': 'Region: north\nPeriod ending: 2024-06-12\nRevenue: 62606\n', 'reports/north/north-report-16-09-2024.txt': 'Region: north\nPeriod ending: 2024-09-16\nRevenue: 13026\n', 'reports/north/notes.md': 'Notes for north: reports are named by day.\n', 'reports/south/south-report-15-03-2022.txt': 'Region: south\nPeriod ending: 2022-03-15\nRevenue: 68155\n', 'reports/south/south-report-02-02-2023.txt': 'Region: south\nPeriod ending: 2023-02-02\nRevenue: 15527\n', 'reports/south/south-report-04-05-2023.txt': 'Region: south\nPeriod ending: 2023-05-04\nRevenue: 81538\n', 'reports/south/south-report-06-05-2023.txt': 'Region: south\nPeriod ending: 2023-05-06\nRevenue: 74324\n', 'reports/south/south-report-30-06-2023.txt': 'Region: south\nPeriod ending: 2023-06-30\nRevenue: 66658\n', 'reports/south/south-report-19-01-2024.txt': 'Region: south\nPeriod ending: 2024-01-19\nRevenue: 78954\n', 'reports/south/notes.md': 'Notes for south: reports are named by day.\n', 'reports/east/east-report-04-02-2022.txt': 'Region: east\nPeriod ending: 2022-02-04\nRevenue: 21672\n', 'reports/east/east-report-18-02-2023.txt': 'Region: east\nPeriod ending: 2023-02-18\nRevenue: 21119\n', 'reports/east/east-report-03-08-2023.txt': 'Region: east\nPeriod ending: 2023-08-03\nRevenue: 56126\n', 'reports/east/east-report-07-01-2024.txt': 'Region: east\nPeriod ending: 2024-01-07\nRevenue: 11589\n', 'reports/east/east-report-11-06-2024.txt': 'Region: east\nPeriod ending: 2024-06-11\nRevenue: 82577\n', 'reports/east/notes.md': 'Notes for east: reports are named by day.\n', 'reports/west/west-report-05-01-2022.txt': 'Region: west\nPeriod ending: 2022-01-05\nRevenue: 67305\n', 'reports/west/west-report-06-04-2022.txt': 'Region: west\nPeriod ending: 2022-04-06\nRevenue: 44927\n', 'reports/west/west-report-16-11-2022.txt': 'Region: west\nPeriod ending: 2022-11-16\nRevenue: 68854\n', 'reports/west/west-report-30-11-2023.txt': 'Region: west\nPeriod ending: 2023-11-30\nRevenue: 17916\n', 'reports/west/west-report-19-12-2023.txt': 'Region: west\nPeriod ending: 2023-12-19\nRevenue: 65727\n', 'reports/west/notes.md': 'Notes for west: reports are named by day.\n', 'reports/central/central-report-21-12-2022.txt': 'Region: central\nPeriod ending: 2022-12-21\nRevenue: 11288\n', 'reports/central/central-report-18-03-2023.txt': 'Region: central\nPeriod ending: 2023-03-18\nRevenue: 31145\n', 'reports/central/central-report-11-06-2023.txt': 'Region: central\nPeriod ending: 2023-06-11\nRevenue: 67409\n', 'reports/central/central-report-24-09-2024.txt': 'Region: central\nPeriod ending: 2024-09-24\nRevenue: 77353\n', 'reports/central/notes.md': 'Notes for central: reports are named by day.\n'}
TARGET = 'latest.csv'
HEADER = 'region,newest,count'
EXPECTED = ['central,central-report-24-09-2024.txt,4', 'east,east-report-11-06-2024.txt,5', 'north,north-report-16-09-2024.txt,7', 'south,south-report-19-01-2024.txt,6', 'west,west-report-19-12-2023.txt,5']


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
    ok &= unchanged(root, SOURCES, "the source files")
    text = read(root / TARGET)
    if not report(text is not None, TARGET + " exists"):
        return False
    lines = [line for line in text.splitlines() if line.strip()]
    if HEADER is not None:
        ok &= report(bool(lines) and lines[0] == HEADER, "header " + HEADER)
        lines = lines[1:]
    for position, want in enumerate(EXPECTED, start=1):
        ok &= report(want in lines, "line " + want)
    count = "%d lines (found %d)" % (len(EXPECTED), len(lines))
    ok &= report(len(lines) == len(EXPECTED), count)
    ok &= report(lines == EXPECTED, "lines in the required order")
    return ok


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
