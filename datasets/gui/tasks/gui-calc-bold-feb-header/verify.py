"""Verifier of gui-calc-bold-feb-header (MCPMark contract: exit code 0 means PASS).

On sheet Feb, A1:C1 are bold and row 2 is not; on sheet Jan nothing is bold.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import NoReturn

import openpyxl

BODY_CELLS = ['A2', 'B2', 'C2']
HEADER_CELLS = ['A1', 'B1', 'C1']


def report(ok: bool, what: str) -> bool:
    """Print ``[ok] what`` or ``[FAIL] what`` and return whether the check passed."""
    print(("[ok] " if ok else "[FAIL] ") + what)
    return bool(ok)


def sheet_bold(path: str, sheet: str, cells: list[str]) -> list[bool]:
    """Whether each of ``cells`` on ``sheet`` is bold."""
    book = openpyxl.load_workbook(path)
    return [bool(book[sheet][cell].font.b) for cell in cells]


def check_feb_header(path: str) -> bool:
    ok = report(all(sheet_bold(path, "Feb", HEADER_CELLS)), "Feb's header A1:C1 is bold")
    ok = report(not any(sheet_bold(path, "Feb", BODY_CELLS)), "Feb's row 2 is not bold") and ok
    jan = sheet_bold(path, "Jan", HEADER_CELLS + BODY_CELLS)
    return report(not any(jan), f"nothing on Jan is bold ({jan})") and ok


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
    main(check_feb_header)
