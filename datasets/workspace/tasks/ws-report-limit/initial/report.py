"""Revenue per product from a sales CSV: python report.py data/sales.csv"""

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
