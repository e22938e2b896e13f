"""Verifier of gui-calc-fill-line-totals (MCPMark contract: exit code 0 means PASS).

D2:D9 each hold a formula whose saved result is Qty times Price of its row; the header D1 still
reads 'Total'.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import openpyxl

LINE_CELLS = ['D2', 'D3', 'D4', 'D5', 'D6', 'D7', 'D8', 'D9']
LINE_TOTALS = [10.0, 5.5, 4.0, 42.0, 45.0, 12.0, 12.0, 48.0]


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


def check_line_totals(path: str) -> bool:
    stored = sheet_values(path, "Order", LINE_CELLS, computed=False)
    results = sheet_values(path, "Order", LINE_CELLS, computed=True)
    formulas = [isinstance(v, str) and v.startswith("=") for v in stored]
    ok = report(all(formulas), f"D2:D9 are formulas ({stored})")
    right = [close(a, b) for a, b in zip(results, LINE_TOTALS, strict=True)]
    ok = report(all(right), f"D2:D9 show Qty*Price ({results})") and ok
    header = sheet_values(path, "Order", ["D1"], computed=False)[0]
    return report(header == "Total", f"D1 still reads Total ({header!r})") and ok


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
    main(check_line_totals)
