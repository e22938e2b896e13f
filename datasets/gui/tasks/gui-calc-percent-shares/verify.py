"""Verifier of gui-calc-percent-shares (MCPMark contract: exit code 0 means PASS).

B2:B7 have a percent number format and their values are unchanged; C2:C7 are not formatted as
percentages.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import openpyxl

SHARE_CELLS = ['B2', 'B3', 'B4', 'B5', 'B6', 'B7']
TARGET_CELLS = ['C2', 'C3', 'C4', 'C5', 'C6', 'C7']
TEAMS = [('Ana', 0.12, 0.1), ('Ben', 0.08, 0.1), ('Caro', 0.25, 0.2), ('Dev', 0.3, 0.3), ('Eli', 0.15, 0.2), ('Fay', 0.1, 0.1)]


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


def sheet_formats(path: str, sheet: str, cells: list[str]) -> list[str]:
    """The number formats of ``cells`` on ``sheet``."""
    book = openpyxl.load_workbook(path)
    return [str(book[sheet][cell].number_format) for cell in cells]


def close(a: Any, b: float) -> bool:
    """Whether ``a`` is a number within 1e-6 of ``b``."""
    return isinstance(a, int | float) and abs(float(a) - b) < 1e-6


def check_percent(path: str) -> bool:
    formats = sheet_formats(path, "Shares", SHARE_CELLS)
    ok = report(all("%" in f for f in formats), f"B2:B7 are percentages ({formats})")
    values = sheet_values(path, "Shares", SHARE_CELLS, computed=True)
    same = all(close(v, t[1]) for v, t in zip(values, TEAMS, strict=True))
    ok = report(same, f"B2:B7 keep their values ({values})") and ok
    others = sheet_formats(path, "Shares", TARGET_CELLS)
    return report(not any("%" in f for f in others), f"C2:C7 unchanged ({others})") and ok


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
    main(check_percent)
