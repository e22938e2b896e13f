"""Verifier of gui-calc-review-sheet (MCPMark contract: exit code 0 means PASS).

The workbook's sheets are Costs, Stock and Review, in that order; Review holds 'Checked by' and
'Lena' in A1:B1 and 'Approved' and 'yes' in A2:B2; the Costs and Stock sheets are unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import openpyxl

NEW_SHEET = 'Review'
REVIEW_CELLS = ['A1', 'B1', 'A2', 'B2']
REVIEW_VALUES = ['Checked by', 'Lena', 'Approved', 'yes']


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


def check_review_sheet(path: str) -> bool:
    names = openpyxl.load_workbook(path).sheetnames
    ok = report(names == ["Costs", "Stock", NEW_SHEET], f"sheets in order ({names})")
    values = sheet_values(path, NEW_SHEET, REVIEW_CELLS, computed=True)
    ok = report(values == REVIEW_VALUES, f"Review A1:B2 ({values})") and ok
    costs = sheet_values(path, "Costs", ["A1", "B1", "B2", "B3", "B4", "C1", "A5"], computed=True)
    ok = (
        report(costs == ["Item", "Cost", 1200, 310, 150, None, None], f"Costs kept ({costs})")
        and ok
    )
    stock = sheet_values(path, "Stock", ["A1", "B1", "B2", "B3", "C1", "A4"], computed=True)
    return report(stock == ["Shelf", "Count", 42, 17, None, None], f"Stock kept ({stock})") and ok


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
    main(check_review_sheet)
