"""Verifier of gui-calc-q2-revenue (MCPMark contract: exit code 0 means PASS).

On sheet Q2, B2:B4 hold 410, 385 and 452; sheet Summary's B2:B4 are unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import openpyxl

Q2_CELLS = ['B2', 'B3', 'B4']
Q2_VALUES = [410.0, 385.0, 452.0]


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


def check_q2_values(path: str) -> bool:
    values = sheet_values(path, "Q2", Q2_CELLS, computed=True)
    right = all(close(v, e) for v, e in zip(values, Q2_VALUES, strict=True))
    ok = report(right, f"Q2!B2:B4 hold 410, 385, 452 ({values})")
    summary = sheet_values(path, "Summary", Q2_CELLS, computed=True)
    return report(summary == [1240, None, None], f"Summary unchanged ({summary})") and ok


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
    main(check_q2_values)
