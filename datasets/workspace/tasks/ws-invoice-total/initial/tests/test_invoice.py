import unittest

from invoice import invoice_total


class InvoiceTests(unittest.TestCase):
    def test_two_lines(self) -> None:
        self.assertEqual(invoice_total([("2", "1.50"), ("1", "4.25")]), "7.25")

    def test_always_two_decimals(self) -> None:
        self.assertEqual(invoice_total([("3", "1")]), "3.00")
