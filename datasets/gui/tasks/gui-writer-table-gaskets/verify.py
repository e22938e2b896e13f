"""Verifier of gui-writer-table-gaskets (MCPMark contract: exit code 0 means PASS).

In the document's table, the Qty cell of the Gasket row reads 30; every other cell is unchanged
(the Hose row's Qty stays empty) and the paragraphs' texts are unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import docx

GASKETS = '30'
PARTS_TABLE = [['Part', 'Qty'], ['Valve', '12'], ['Gasket', ''], ['Hose', ''], ['Clamp', '8']]
PARTS_TEXTS = ['Parts Order', 'Quantities for the June delivery:', 'Send the order by Friday.']


def report(ok: bool, what: str) -> bool:
    """Print ``[ok] what`` or ``[FAIL] what`` and return whether the check passed."""
    print(("[ok] " if ok else "[FAIL] ") + what)
    return bool(ok)


def word_paragraphs(path: str) -> list[dict[str, Any]]:
    """Each paragraph of a .docx: its text, style name, alignment (``None`` when inherited),
    and whether every run holding text is bold, italic, underlined (``any_bold`` too)."""
    paragraphs = []
    for paragraph in docx.Document(path).paragraphs:
        runs = [run for run in paragraph.runs if run.text.strip()]
        paragraphs.append(
            {
                "text": paragraph.text,
                "style": paragraph.style.name if paragraph.style is not None else None,
                "alignment": None if paragraph.alignment is None else int(paragraph.alignment),
                "bold": bool(runs) and all(run.bold for run in runs),
                "any_bold": any(run.bold for run in runs),
                "italic": bool(runs) and all(run.italic for run in runs),
                "underline": bool(runs) and all(run.underline for run in runs),
                "any_underline": any(run.underline for run in runs),
            }
        )
    return paragraphs


def word_table(path: str) -> list[list[str]]:
    """The first table of a .docx as rows of cell texts (empty without a table)."""
    tables = docx.Document(path).tables
    if not tables:
        return []
    return [[cell.text for cell in row.cells] for row in tables[0].rows]


def same_texts(actual: list[str], expected: list[str], what: str) -> bool:
    """Report whether the texts are exactly the expected ones, in order."""
    ok = actual == expected
    return report(ok, f"{what}: {actual!r}" if not ok else f"{what} as expected")


def check_gasket_qty(path: str) -> bool:
    expected = [list(row) for row in PARTS_TABLE]
    expected[2][1] = GASKETS
    cells = word_table(path)
    ok = report(cells == expected, f"table cells {cells}")
    texts = [p["text"] for p in word_paragraphs(path)]
    return same_texts(texts, PARTS_TEXTS, "paragraph texts") and ok


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
    main(check_gasket_qty)
