"""Verifier of gui-impress-budget-last (MCPMark contract: exit code 0 means PASS).

The slides are, in order, Harbor Plan, Risks, Budget: the Budget slide moved to the end, every
slide's texts unchanged and no slide added or lost.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import pptx

ORIGINAL_TEXTS = [['Harbor Plan', 'Scope\nTimeline', 'Call for volunteers'], ['Budget', 'Capex\nOpex'], ['Risks', 'Weather\nPermits']]


def report(ok: bool, what: str) -> bool:
    """Print ``[ok] what`` or ``[FAIL] what`` and return whether the check passed."""
    print(("[ok] " if ok else "[FAIL] ") + what)
    return bool(ok)


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


def check_budget_last(path: str) -> bool:
    texts = slide_texts(path)
    expected = [ORIGINAL_TEXTS[0], ORIGINAL_TEXTS[2], ORIGINAL_TEXTS[1]]
    titles = [slide[0] if slide else "" for slide in texts]
    ok = report(titles == ["Harbor Plan", "Risks", "Budget"], f"slide order {titles}")
    return report(texts == expected, f"every slide's texts unchanged ({texts})") and ok


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
    main(check_budget_last)
