"""Verifier of gui-writer-replace-vendor (MCPMark contract: exit code 0 means PASS).

No paragraph contains 'vendor' any more (in any case); every occurrence became 'supplier' and
every other character of every paragraph is unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import docx

NEW_WORD = 'supplier'
OLD_WORD = 'vendor'
VISIT_TEXTS = ['Site Visit Notes', 'The vendor delivered the pumps on Monday.', 'Two crates were damaged, and the vendor will replace them.', 'Invoices go to the finance desk, not to the site office.', 'Next visit: confirm that the vendor has fixed the seals.']


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


def same_texts(actual: list[str], expected: list[str], what: str) -> bool:
    """Report whether the texts are exactly the expected ones, in order."""
    ok = actual == expected
    return report(ok, f"{what}: {actual!r}" if not ok else f"{what} as expected")


def check_replaced(path: str) -> bool:
    texts = [p["text"] for p in word_paragraphs(path)]
    left = [t for t in texts if OLD_WORD in t.lower()]
    ok = report(not left, f"no '{OLD_WORD}' left ({left})")
    expected = [t.replace(OLD_WORD, NEW_WORD) for t in VISIT_TEXTS]
    return same_texts(texts, expected, "paragraph texts") and ok


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
    main(check_replaced)
