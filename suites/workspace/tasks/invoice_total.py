"""ws-invoice-total (bug-fix): exact money arithmetic, rounded half up to cents."""

from __future__ import annotations

from suites.workspace.spec import CodingTask, edits

_INVOICE = '''"""Invoice totals; quantities and unit prices arrive as strings."""


def invoice_total(lines: list[tuple[str, str]]) -> str:
    """The total of (quantity, unit price) lines, as a string with two decimals."""
    total = 0.0
    for quantity, price in lines:
        total += float(quantity) * float(price)
    return str(round(total, 2))
'''

_VISIBLE = """import unittest

from invoice import invoice_total


class InvoiceTests(unittest.TestCase):
    def test_two_lines(self) -> None:
        self.assertEqual(invoice_total([("2", "1.50"), ("1", "4.25")]), "7.25")

    def test_always_two_decimals(self) -> None:
        self.assertEqual(invoice_total([("3", "1")]), "3.00")
"""

_BODY = (
    "    total = 0.0\n"
    "    for quantity, price in lines:\n"
    "        total += float(quantity) * float(price)\n"
    "    return str(round(total, 2))\n"
)

TASK = CodingTask(
    id="ws-invoice-total",
    family="bug-fix",
    instruction=(
        "invoice_total in invoice.py must compute exactly, without binary floating point: sum "
        "quantity times unit price over all lines with decimal arithmetic, round the sum once, "
        "half up, to cents, and return it with exactly two decimals (e.g. '3.00')."
    ),
    files={"invoice.py": _INVOICE, "tests/__init__.py": "", "tests/test_invoice.py": _VISIBLE},
    fix=edits(
        "invoice.py",
        [
            (
                '"""Invoice totals; quantities and unit prices arrive as strings."""\n',
                '"""Invoice totals; quantities and unit prices arrive as strings."""\n'
                "\nfrom decimal import ROUND_HALF_UP, Decimal\n",
            ),
            (
                _BODY,
                '    total = sum((Decimal(q) * Decimal(p) for q, p in lines), Decimal("0"))\n'
                '    return str(total.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))\n',
            ),
        ],
    ),
    partial=edits(
        "invoice.py",
        [
            (
                _BODY,
                "    total = 0.0\n"
                "    for quantity, price in lines:\n"
                "        total += float(quantity) * float(price)\n"
                '    return f"{total:.2f}"\n',
            )
        ],
    ),
    partial_failure="partial",
    partial_note="it still sums in floating point, so half cents round the wrong way",
    author_tests="""import unittest


class TotalTests(unittest.TestCase):
    def test_two_decimals(self) -> None:
        from invoice import invoice_total

        self.assertEqual(invoice_total([("3", "1")]), "3.00")
        self.assertEqual(invoice_total([]), "0.00")

    def test_half_cents_round_up(self) -> None:
        from invoice import invoice_total

        self.assertEqual(invoice_total([("3", "0.335")]), "1.01")
        self.assertEqual(invoice_total([("1", "2.675")]), "2.68")

    def test_exact_sum(self) -> None:
        from invoice import invoice_total

        self.assertEqual(invoice_total([("1", "0.10")] * 3), "0.30")
        self.assertEqual(invoice_total([("7", "19.99"), ("0.5", "0.01")]), "139.94")
""",
    checks="two decimals always; half cents round up; sums exact (no float error)",
)
