"""ws-report-limit (feature): a ``--limit`` option for a command-line report."""

from __future__ import annotations

from suites.workspace.spec import CodingTask, edits

_REPORT = '''"""Revenue per product from a sales CSV: python report.py data/sales.csv"""

import argparse
import csv
import sys
from collections import defaultdict


def revenue(path: str) -> list[tuple[str, float]]:
    """(product, revenue) pairs, largest revenue first, then by name."""
    totals: dict[str, float] = defaultdict(float)
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            totals[row["product"]] += int(row["quantity"]) * float(row["price"])
    return sorted(totals.items(), key=lambda item: (-item[1], item[0]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Revenue per product.")
    parser.add_argument("csv", help="the sales file")
    options = parser.parse_args(argv)
    rows = revenue(options.csv)
    for product, amount in rows:
        print(f"{product}: {amount:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

_SALES = """product,quantity,price
lamp,2,30.00
desk,1,120.00
chair,4,45.50
lamp,1,30.00
pen,20,1.25
"""

_VISIBLE = """import contextlib
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
"""

_ARGUMENT = '    parser.add_argument("csv", help="the sales file")\n'
_ROWS = "    rows = revenue(options.csv)\n"

TASK = CodingTask(
    id="ws-report-limit",
    family="feature",
    instruction=(
        "Add an option --limit N to report.py that prints only the first N products of the "
        "report (all of them without the option). N must be a positive integer: for 0, a "
        "negative number or a non-number the program must stop with argparse's usage error "
        "(exit status 2). Keep the output format unchanged."
    ),
    files={
        "report.py": _REPORT,
        "data/sales.csv": _SALES,
        "tests/__init__.py": "",
        "tests/test_report.py": _VISIBLE,
    },
    fix=edits(
        "report.py",
        [
            (
                "def main(argv: list[str] | None = None) -> int:\n",
                "def positive(text: str) -> int:\n"
                '    """A positive integer from the command line."""\n'
                "    try:\n"
                "        value = int(text)\n"
                "    except ValueError:\n"
                '        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None\n'
                "    if value < 1:\n"
                '        raise argparse.ArgumentTypeError(f"must be at least 1: {value}")\n'
                "    return value\n\n\n"
                "def main(argv: list[str] | None = None) -> int:\n",
            ),
            (
                _ARGUMENT,
                _ARGUMENT
                + '    parser.add_argument("--limit", type=positive, help="products shown")\n',
            ),
            (
                _ROWS,
                _ROWS + "    if options.limit is not None:\n        rows = rows[: options.limit]\n",
            ),
        ],
    ),
    partial=edits(
        "report.py",
        [
            (
                _ARGUMENT,
                _ARGUMENT + '    parser.add_argument("--limit", type=int, help="products shown")\n',
            ),
            (_ROWS, _ROWS + "    if options.limit:\n        rows = rows[: options.limit]\n"),
        ],
    ),
    partial_failure="partial",
    partial_note="a limit of 0 or below is accepted instead of refused",
    author_tests="""import contextlib
import io
import unittest


def run(*arguments: str) -> tuple[int, list[str]]:
    from report import main

    output, errors = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(errors):
        try:
            status = main(["data/sales.csv", *arguments])
        except SystemExit as stop:
            status = stop.code if isinstance(stop.code, int) else 1
    return status, output.getvalue().splitlines()


class LimitTests(unittest.TestCase):
    def test_without_limit(self) -> None:
        status, lines = run()
        self.assertEqual(status, 0)
        self.assertEqual(lines, ["chair: 182.00", "desk: 120.00", "lamp: 90.00", "pen: 25.00"])

    def test_limits(self) -> None:
        self.assertEqual(run("--limit", "1"), (0, ["chair: 182.00"]))
        self.assertEqual(run("--limit", "9")[1][-1], "pen: 25.00")

    def test_bad_limits(self) -> None:
        for bad in ("0", "-2", "two"):
            self.assertEqual(run("--limit", bad)[0], 2, msg=bad)
""",
    checks="--limit 1 and 9, no limit, and exit status 2 for 0, -2 and 'two'",
)
