"""Verifier of fs-invoice-totals (MCPMark contract: exit code 0 means PASS).

Checks that summary/totals.csv has the header invoice_id,total and one row per invoice in
invoices/, sorted by invoice id, with the sum of quantity x unit price to two decimals; and that
every invoice file is unchanged (same rows as it started with).
"""

from __future__ import annotations

import csv
import os
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import NoReturn

EXPECTED_INVOICES = {'INV-1001': 'item,quantity,unit_price\nstapler,4,97.42\npaper,3,56.56\nfolders,6,25.28\ncable,1,21.44\npaper,8,82.00\nstapler,2,91.13\n', 'INV-1002': 'item,quantity,unit_price\ncable,7,35.34\nfolders,2,32.89\nmouse,7,35.47\nmouse,6,2.18\ntoner,6,65.68\ndesk lamp,6,34.28\n', 'INV-1003': 'item,quantity,unit_price\ndesk lamp,1,98.81\ntoner,7,3.47\ntoner,4,4.54\npens,5,12.26\npens,1,8.88\n', 'INV-1004': 'item,quantity,unit_price\npens,7,1.94\ndesk lamp,9,93.64\nstapler,3,34.64\n', 'INV-1005': 'item,quantity,unit_price\ndesk lamp,1,72.23\ndesk lamp,7,8.37\ntoner,7,58.07\n', 'INV-1006': 'item,quantity,unit_price\nfolders,3,57.42\ndesk lamp,6,25.68\npens,3,47.92\n', 'INV-1007': 'item,quantity,unit_price\ndesk lamp,9,47.80\npens,8,95.21\n', 'INV-1008': 'item,quantity,unit_price\nmouse,9,40.22\nstapler,8,98.81\nstapler,5,67.37\n', 'INV-1009': 'item,quantity,unit_price\ncable,2,30.21\nmouse,4,83.24\ndesk lamp,8,39.38\n', 'INV-1010': 'item,quantity,unit_price\ncable,2,1.83\nfolders,5,97.71\n', 'INV-1011': 'item,quantity,unit_price\npens,1,13.06\ndesk lamp,9,83.02\nmouse,8,91.23\n', 'INV-1012': 'item,quantity,unit_price\ncable,7,77.19\ntoner,7,84.24\nmouse,2,16.00\ntoner,1,50.50\nmouse,2,35.13\nstapler,9,89.32\n'}


def report(ok: bool, what: str) -> bool:
    """Print ``[ok] what`` or ``[FAIL] what`` and return whether the check passed."""
    print(("[ok] " if ok else "[FAIL] ") + what)
    return bool(ok)


def check(root: Path) -> bool:
    ok = True
    for invoice_id, text in sorted(EXPECTED_INVOICES.items()):
        path = root / "invoices" / (invoice_id + ".csv")
        ok &= report(path.is_file() and path.read_text() == text, invoice_id + " unchanged")
    target = root / "summary" / "totals.csv"
    if not report(target.is_file(), "summary/totals.csv exists"):
        return False
    rows = list(csv.reader(target.read_text().splitlines()))
    ok &= report(bool(rows) and rows[0] == ["invoice_id", "total"], "header invoice_id,total")
    expected = []
    for invoice_id, text in sorted(EXPECTED_INVOICES.items()):
        lines = list(csv.DictReader(text.splitlines()))
        total = sum(Decimal(line["quantity"]) * Decimal(line["unit_price"]) for line in lines)
        expected.append([invoice_id, f"{total:.2f}"])
    body = [row for row in rows[1:] if row]
    ok &= report(len(body) == len(expected), f"{len(expected)} invoice rows (found {len(body)})")
    for want in expected:
        ok &= report(want in body, "row " + ",".join(want))
    ok &= report(body == expected, "rows sorted by invoice id")
    return ok


def main(check: Callable[[Path], bool]) -> NoReturn:
    """Run ``check`` on the tree named by FILESYSTEM_TEST_DIR; exit 0 when it passes."""
    root = Path(os.environ["FILESYSTEM_TEST_DIR"])
    sys.exit(0 if check(root) else 1)


if __name__ == "__main__":
    main(check)
