import unittest


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
