"""Verifier of gui-calc-total-units (MCPMark contract: exit code 0 means PASS).

B62 holds a formula whose saved result is the sum of all 60 units (B2:B61); the unit cells are
unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import openpyxl

TOTAL_CELL = 'B62'
UNITS = [33, 50, 67, 84, 11, 28, 45, 62, 79, 96, 23, 40, 57, 74, 91, 18, 35, 52, 69, 86, 13, 30, 47, 64, 81, 98, 25, 42, 59, 76, 93, 20, 37, 54, 71, 88, 15, 32, 49, 66, 83, 10, 27, 44, 61, 78, 95, 22, 39, 56, 73, 90, 17, 34, 51, 68, 85, 12, 29, 46]
UNITS_TOTAL = 3180.0
UNIT_CELLS = ['B2', 'B3', 'B4', 'B5', 'B6', 'B7', 'B8', 'B9', 'B10', 'B11', 'B12', 'B13', 'B14', 'B15', 'B16', 'B17', 'B18', 'B19', 'B20', 'B21', 'B22', 'B23', 'B24', 'B25', 'B26', 'B27', 'B28', 'B29', 'B30', 'B31', 'B32', 'B33', 'B34', 'B35', 'B36', 'B37', 'B38', 'B39', 'B40', 'B41', 'B42', 'B43', 'B44', 'B45', 'B46', 'B47', 'B48', 'B49', 'B50', 'B51', 'B52', 'B53', 'B54', 'B55', 'B56', 'B57', 'B58', 'B59', 'B60', 'B61']


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


def close(a: Any, b: float) -> bool:
    """Whether ``a`` is a number within 1e-6 of ``b``."""
    return isinstance(a, int | float) and abs(float(a) - b) < 1e-6


def check_total(path: str) -> bool:
    stored = sheet_values(path, "Sales", [TOTAL_CELL], computed=False)[0]
    result = sheet_values(path, "Sales", [TOTAL_CELL], computed=True)[0]
    ok = report(
        isinstance(stored, str) and stored.startswith("="), f"B62 is a formula ({stored!r})"
    )
    ok = (
        report(close(result, UNITS_TOTAL), f"B62 shows {result}, the total is {UNITS_TOTAL}") and ok
    )
    units = sheet_values(path, "Sales", UNIT_CELLS, computed=True)
    same = all(close(a, float(b)) for a, b in zip(units, UNITS, strict=True))
    return report(same, "the unit cells are unchanged") and ok


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
    main(check_total)
