import contextlib
import io
import unittest

from report import main


class ReportTests(unittest.TestCase):
    def run_report(self, *arguments: str) -> list[str]:
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            self.assertEqual(main(["data/sales.csv", *arguments]), 0)
        return output.getvalue().splitlines()

    def test_all_products(self) -> None:
        self.assertEqual(self.run_report()[0], "chair: 182.00")
        self.assertEqual(len(self.run_report()), 4)

    def test_limit(self) -> None:
        self.assertEqual(self.run_report("--limit", "2"), ["chair: 182.00", "desk: 120.00"])
