"""Verifier of gui-impress-move-callout (MCPMark contract: exit code 0 means PASS).

The callout box on slide 1 moved right by 1 to 6 cm with its top unchanged (within 1 mm); every
text is unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import pptx

BOX_CENTER_X = 2286000
BOX_TOP = 5029200
CALLOUT = 'Call for volunteers'
EMU_PER_CM = 360000
MAX_SHIFT = 2160000
MIN_SHIFT = 360000
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


def check_moved(path: str) -> bool:
    slides = slide_shapes(path)
    texts = [[s["text"] for s in shapes if s["text"]] for shapes in slides]
    ok = report(texts == ORIGINAL_TEXTS, f"slide texts unchanged ({texts})")
    box = [s for s in slides[0] if s["text"] == CALLOUT] if slides else []
    if not box:
        return report(False, "the callout is on slide 1")
    shift = box[0]["left"] + box[0]["width"] // 2 - BOX_CENTER_X
    ok = (
        report(MIN_SHIFT <= shift <= MAX_SHIFT, f"moved right by {shift / EMU_PER_CM:.2f} cm")
        and ok
    )
    drop = abs(box[0]["top"] - BOX_TOP)
    return report(drop <= EMU_PER_CM // 10, f"top unchanged (moved {drop} EMU)") and ok


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
    main(check_moved)
