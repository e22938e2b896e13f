"""The verifiers' side of the GUI tasks: reading a saved document and the ``verify.py`` entry.

Functions here are copied into each task's ``verify.py`` (``suites.ds.verify_script``): they use
only the standard library, python-docx, openpyxl and python-pptx, and ``report``. A verifier
reads the document the desktop saved, named by ``DESKTOP_DOCUMENT`` (the desktop kind exports it
read-only into the verifier's box).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import docx
import openpyxl
import pptx

from suites.ds.tasks.checks import report


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


def sheet_bold(path: str, sheet: str, cells: list[str]) -> list[bool]:
    """Whether each of ``cells`` on ``sheet`` is bold."""
    book = openpyxl.load_workbook(path)
    return [bool(book[sheet][cell].font.b) for cell in cells]


def close(a: Any, b: float) -> bool:
    """Whether ``a`` is a number within 1e-6 of ``b``."""
    return isinstance(a, int | float) and abs(float(a) - b) < 1e-6


def slide_shapes(path: str) -> list[list[dict[str, Any]]]:
    """Per slide, its shapes: name, text (empty without a text frame), whether every run with
    text is bold, position and size in EMU."""
    slides = []
    for slide in pptx.Presentation(path).slides:
        shapes = []
        for shape in slide.shapes:
            text = shape.text_frame.text if shape.has_text_frame else ""
            runs = [
                run
                for paragraph in (shape.text_frame.paragraphs if shape.has_text_frame else [])
                for run in paragraph.runs
                if run.text.strip()
            ]
            shapes.append(
                {
                    "name": shape.name,
                    "text": text,
                    "bold": bool(runs) and all(run.font.bold for run in runs),
                    "left": int(shape.left or 0),
                    "top": int(shape.top or 0),
                    "width": int(shape.width or 0),
                    "height": int(shape.height or 0),
                }
            )
        slides.append(shapes)
    return slides


def slide_texts(path: str) -> list[list[str]]:
    """Per slide, the non-empty texts of its shapes, in shape order."""
    return [[shape["text"] for shape in shapes if shape["text"]] for shapes in slide_shapes(path)]


def slide_notes(path: str) -> list[str]:
    """Per slide, the text of its speaker notes (empty without notes)."""
    notes = []
    for slide in pptx.Presentation(path).slides:
        frame = slide.notes_slide.notes_text_frame if slide.has_notes_slide else None
        notes.append(frame.text if frame is not None else "")
    return notes


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
