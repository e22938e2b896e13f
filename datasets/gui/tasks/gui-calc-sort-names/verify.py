"""Verifier of gui-calc-sort-names (MCPMark contract: exit code 0 means PASS).

On sheet Staff, the header row A1:C1 is unchanged; rows 2-11 are sorted by Name (ascending) and
are exactly the original rows, each kept whole (name, team, hours).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import openpyxl

STAFF = [['Name', 'Team', 'Hours'], ['Marta', 'Ops', 31], ['Dario', 'Sales', 24], ['Yusuf', 'Ops', 40], ['Bianca', 'Design', 18], ['Kenji', 'Sales', 36], ['Ines', 'Design', 22], ['Tomas', 'Ops', 28], ['Aleksa', 'Sales', 33], ['Priya', 'Design', 27], ['Hugo', 'Ops', 15]]
STAFF_CELLS = ['A1', 'B1', 'C1', 'A2', 'B2', 'C2', 'A3', 'B3', 'C3', 'A4', 'B4', 'C4', 'A5', 'B5', 'C5', 'A6', 'B6', 'C6', 'A7', 'B7', 'C7', 'A8', 'B8', 'C8', 'A9', 'B9', 'C9', 'A10', 'B10', 'C10', 'A11', 'B11', 'C11']


def report(ok: bool, what: str) -> bool:
    """Print ``[ok] what`` or ``[FAIL] what`` and return whether the check passed."""
    print(("[ok] " if ok else "[FAIL] ") + what)
    return bool(ok)


def sheet_values(path: str, sheet: str, cells: list[str], *, computed: bool) -> list[Any]:
    """The values of ``cells`` on ``sheet``: as stored (formulas as text) or, with
    ``computed``, the results the application saved with the file."""
    book = openpyxl.load_workbook(path, data_only=computed)
    if sheet not in book.sheetnames:
        report(False, f"sheet {sheet!r} exists (sheets: {book.sheetnames})")
        return [None for _ in cells]
    return [book[sheet][cell].value for cell in cells]


def check_sorted(path: str) -> bool:
    values = sheet_values(path, "Staff", STAFF_CELLS, computed=True)
    rows = [values[i : i + 3] for i in range(0, len(values), 3)]
    ok = report(rows[0] == STAFF[0], f"header unchanged ({rows[0]})")
    body = rows[1:]
    names = [row[0] for row in body]
    ok = (
        report(names == sorted(str(row[0]) for row in STAFF[1:]), f"names ascending ({names})")
        and ok
    )
    whole = sorted(map(tuple, body), key=str) == sorted(map(tuple, STAFF[1:]), key=str)
    return report(whole, "every row kept whole (name, team and hours together)") and ok


def main(check: Callable[[str], bool]) -> NoReturn:
    """Read the saved document, run ``check`` on it, exit 0 when it passes (MCPMark contract)."""
    path = os.environ.get("DESKTOP_DOCUMENT")
    if not path or not os.path.exists(path):
        print("DESKTOP_DOCUMENT is not set or names no file: run this on the desktop kind")
        sys.exit(2)
    try:
        passed = check(path)
    except Exception as error:  # a file LibreOffice wrote oddly is a failure, not a crash
        passed = report(False, f"the document could not be read: {type(error).__name__}: {error}")
    report(passed, "task complete")
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main(check_sorted)
