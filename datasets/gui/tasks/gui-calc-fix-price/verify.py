"""Verifier of gui-calc-fix-price (MCPMark contract: exit code 0 means PASS).

C4 (the desk's price) is 19.99; the other prices and the stock column are unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import openpyxl

FIXED_PRICES = [24.5, 89.0, 19.99, 45.0, 120.0]
PRICE_CELLS = ['C2', 'C3', 'C4', 'C5', 'C6']


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


def check_price(path: str) -> bool:
    prices = sheet_values(path, "Stock", PRICE_CELLS, computed=True)
    right = all(close(v, e) for v, e in zip(prices, FIXED_PRICES, strict=True))
    ok = report(right, f"prices are {FIXED_PRICES} ({prices})")
    stock = sheet_values(path, "Stock", ["B2", "B3", "B4", "B5", "B6"], computed=True)
    return report(stock == [14, 6, 3, 9, 4], f"stock unchanged ({stock})") and ok


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
    main(check_price)
