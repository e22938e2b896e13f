"""Verifier of fs-letters (MCPMark contract: exit code 0 means PASS).

Checks that letters/<id>.txt exists for every contact with the template's placeholders replaced
by the contact's fields and nothing else changed, that letters/ holds nothing else, and that the
template and contacts.csv are unchanged.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

EXPECTED = {'letters/c01.txt': 'Dear Ana Lopez,\n\nOur records show that invoice INV-2020 for Nordwind GmbH, amounting to EUR 3447.22,\nis still open. We kindly ask you to settle it by 2024-06-17.\n\nIf you have already paid, please ignore this letter.\n\nKind regards,\nAccounts Receivable\n', 'letters/c02.txt': 'Dear Li Wei,\n\nOur records show that invoice INV-2976 for Smith, Jones & Co, amounting to EUR 3728.71,\nis still open. We kindly ask you to settle it by 2024-06-29.\n\nIf you have already paid, please ignore this letter.\n\nKind regards,\nAccounts Receivable\n', 'letters/c03.txt': 'Dear Sam Turner,\n\nOur records show that invoice INV-2708 for Blue Harbor Ltd, amounting to EUR 7142.40,\nis still open. We kindly ask you to settle it by 2024-06-13.\n\nIf you have already paid, please ignore this letter.\n\nKind regards,\nAccounts Receivable\n', 'letters/c04.txt': 'Dear Marta Kowalska,\n\nOur records show that invoice INV-2149 for Atlas Tools, amounting to EUR 3305.74,\nis still open. We kindly ask you to settle it by 2024-05-02.\n\nIf you have already paid, please ignore this letter.\n\nKind regards,\nAccounts Receivable\n', 'letters/c05.txt': 'Dear Jonas Berg,\n\nOur records show that invoice INV-2511 for Verde SA, amounting to EUR 3923.76,\nis still open. We kindly ask you to settle it by 2024-05-02.\n\nIf you have already paid, please ignore this letter.\n\nKind regards,\nAccounts Receivable\n', 'letters/c06.txt': 'Dear Priya Nair,\n\nOur records show that invoice INV-2639 for Nordwind GmbH, amounting to EUR 3515.92,\nis still open. We kindly ask you to settle it by 2024-06-26.\n\nIf you have already paid, please ignore this letter.\n\nKind regards,\nAccounts Receivable\n', 'letters/c07.txt': 'Dear Tomás Silva,\n\nOur records show that invoice INV-2466 for Smith, Jones & Co, amounting to EUR 584.53,\nis still open. We kindly ask you to settle it by 2024-06-29.\n\nIf you have already paid, please ignore this letter.\n\nKind regards,\nAccounts Receivable\n', 'letters/c08.txt': 'Dear Ingrid Holm,\n\nOur records show that invoice INV-2701 for Blue Harbor Ltd, amounting to EUR 6026.44,\nis still open. We kindly ask you to settle it by 2024-06-12.\n\nIf you have already paid, please ignore this letter.\n\nKind regards,\nAccounts Receivable\n', 'letters/c09.txt': 'Dear Kwame Mensah,\n\nOur records show that invoice INV-2011 for Atlas Tools, amounting to EUR 1431.99,\nis still open. We kindly ask you to settle it by 2024-06-16.\n\nIf you have already paid, please ignore this letter.\n\nKind regards,\nAccounts Receivable\n'}
SOURCES = {'templates/reminder.txt': 'Dear {{name}},\n\nOur records show that invoice {{invoice}} for {{company}}, amounting to EUR {{amount}},\nis still open. We kindly ask you to settle it by {{due_date}}.\n\nIf you have already paid, please ignore this letter.\n\nKind regards,\nAccounts Receivable\n', 'contacts.csv': 'id,name,company,invoice,amount,due_date\nc01,Ana Lopez,Nordwind GmbH,INV-2020,3447.22,2024-06-17\nc02,Li Wei,"Smith, Jones & Co",INV-2976,3728.71,2024-06-29\nc03,Sam Turner,Blue Harbor Ltd,INV-2708,7142.40,2024-06-13\nc04,Marta Kowalska,Atlas Tools,INV-2149,3305.74,2024-05-02\nc05,Jonas Berg,Verde SA,INV-2511,3923.76,2024-05-02\nc06,Priya Nair,Nordwind GmbH,INV-2639,3515.92,2024-06-26\nc07,Tomás Silva,"Smith, Jones & Co",INV-2466,584.53,2024-06-29\nc08,Ingrid Holm,Blue Harbor Ltd,INV-2701,6026.44,2024-06-12\nc09,Kwame Mensah,Atlas Tools,INV-2011,1431.99,2024-06-16\n'}


def report(ok: bool, what: str) -> bool:
    """Print ``[ok] what`` or ``[FAIL] what`` and return whether the check passed."""
    print(("[ok] " if ok else "[FAIL] ") + what)
    return bool(ok)


def read(path: Path) -> str | None:
    """The file's text, or None when it is missing or not UTF-8 text."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def files_under(root: Path, folder: str) -> dict[str, str | None]:
    """Every file below root/folder as {path relative to root: text}."""
    base = root / folder
    if not base.is_dir():
        return {}
    found = {}
    for path in sorted(base.rglob("*")):
        if path.is_file():
            found[path.relative_to(root).as_posix()] = read(path)
    return found


def unchanged(root: Path, expected: dict[str, str], what: str) -> bool:
    """Report that every file of ``expected`` (path relative to root: text) still has its text."""
    changed = sorted(name for name, text in expected.items() if read(root / name) != text)
    detail = (": changed or missing " + ", ".join(changed[:5])) if changed else ""
    return report(not changed, what + " unchanged (" + str(len(expected)) + " files)" + detail)


def check(root: Path) -> bool:
    ok = unchanged(root, SOURCES, "templates/reminder.txt and contacts.csv")
    found = files_under(root, "letters")
    for name, text in sorted(EXPECTED.items()):
        ok &= report(found.get(name) == text, name + " filled from its contact row")
    leftover = sorted(name for name, text in found.items() if text is None or "{{" in text)
    ok &= report(not leftover, "no unfilled placeholders " + str(leftover[:5]))
    extra = sorted(set(found) - set(EXPECTED))
    ok &= report(not extra, "no other files in letters/ " + str(extra[:5]))
    return ok


def main(check: Callable[[Path], bool]) -> NoReturn:
    """Run ``check`` on the tree named by FILESYSTEM_TEST_DIR; exit 0 when it passes."""
    root = Path(os.environ["FILESYSTEM_TEST_DIR"])
    sys.exit(0 if check(root) else 1)


if __name__ == "__main__":
    main(check)
