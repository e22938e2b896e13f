"""ws-rename-mean (refactor): a helper renamed across a package, every caller included."""

from __future__ import annotations

from suites.workspace.spec import CodingTask

_HELPERS = '''"""Numeric helpers shared by the report modules."""


def calc_avg(values: list[float]) -> float:
    """The arithmetic mean of ``values``; an empty list has none."""
    if not values:
        raise ValueError("the mean of no values is undefined")
    return sum(values) / len(values)
'''

_REPORT = '''"""The weekly report."""

from stats.helpers import calc_avg


def weekly_line(name: str, hours: list[float]) -> str:
    """One line of the weekly report."""
    return f"{name}: {calc_avg(hours):.1f} h/day"
'''

_SUMMARY = '''"""The monthly summary."""

from stats import helpers


def monthly_average(weeks: list[list[float]]) -> float:
    """The mean of the weekly means."""
    return helpers.calc_avg([helpers.calc_avg(week) for week in weeks])
'''

_VISIBLE = """import unittest

from stats.report import weekly_line


class ReportTests(unittest.TestCase):
    def test_weekly_line(self) -> None:
        self.assertEqual(weekly_line("ana", [8, 6, 7]), "ana: 7.0 h/day")
"""

_DEFINITION = "def calc_avg(values: list[float]) -> float:"
_NEW_DEFINITION = "def mean(values: list[float]) -> float:"

TASK = CodingTask(
    id="ws-rename-mean",
    family="refactor",
    instruction=(
        "Rename the helper calc_avg of the stats package to mean: its definition and every use "
        "in the package. The name calc_avg must not remain anywhere in stats/ (no alias), and "
        "the behaviour must stay the same, including the ValueError for an empty list."
    ),
    files={
        "stats/__init__.py": "",
        "stats/helpers.py": _HELPERS,
        "stats/report.py": _REPORT,
        "stats/summary.py": _SUMMARY,
        "tests/__init__.py": "",
        "tests/test_report.py": _VISIBLE,
    },
    fix=[
        ("stats/helpers.py", _DEFINITION, _NEW_DEFINITION),
        (
            "stats/report.py",
            "from stats.helpers import calc_avg\n",
            "from stats.helpers import mean\n",
        ),
        ("stats/report.py", "{calc_avg(hours):.1f}", "{mean(hours):.1f}"),
        (
            "stats/summary.py",
            "helpers.calc_avg([helpers.calc_avg(week)",
            "helpers.mean([helpers.mean(week)",
        ),
    ],
    partial=[
        ("stats/helpers.py", _DEFINITION, _NEW_DEFINITION),
        (
            "stats/report.py",
            "from stats.helpers import calc_avg\n",
            "from stats.helpers import mean\n",
        ),
        ("stats/report.py", "{calc_avg(hours):.1f}", "{mean(hours):.1f}"),
    ],
    partial_failure="partial",
    partial_note="stats/summary.py still calls the old name",
    author_tests="""import unittest
from pathlib import Path


class RenameTests(unittest.TestCase):
    def test_mean(self) -> None:
        from stats.helpers import mean

        self.assertEqual(mean([1.0, 2.0, 6.0]), 3.0)
        with self.assertRaises(ValueError):
            mean([])

    def test_callers(self) -> None:
        from stats.report import weekly_line
        from stats.summary import monthly_average

        self.assertEqual(weekly_line("li", [4, 5]), "li: 4.5 h/day")
        self.assertEqual(monthly_average([[1, 3], [5, 7]]), 4.0)

    def test_old_name_gone(self) -> None:
        for path in sorted(Path("stats").rglob("*.py")):
            self.assertNotIn("calc_avg", path.read_text(encoding="utf-8"), msg=str(path))
""",
    checks="mean defined and raising on empty input; both callers work; no calc_avg left",
)
