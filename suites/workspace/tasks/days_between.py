"""ws-days-between (bug-fix): an inclusive day count that refuses reversed ranges."""

from __future__ import annotations

from suites.workspace.spec import CodingTask, edits

_DATES = '''"""Date helpers for the booking calendar."""

from datetime import date


def days_between(start: date, end: date) -> int:
    """How many calendar days a booking from ``start`` to ``end`` covers."""
    return (end - start).days


def weekend_days(start: date, end: date) -> int:
    """Saturdays and Sundays from ``start`` to ``end``, both included."""
    count = 0
    day = start
    while day <= end:
        count += day.weekday() >= 5
        day = date.fromordinal(day.toordinal() + 1)
    return count
'''

_VISIBLE = """import unittest
from datetime import date

from dates import days_between, weekend_days


class DateTests(unittest.TestCase):
    def test_one_week(self) -> None:
        self.assertEqual(days_between(date(2024, 3, 4), date(2024, 3, 10)), 7)

    def test_weekend(self) -> None:
        self.assertEqual(weekend_days(date(2024, 3, 4), date(2024, 3, 10)), 2)
"""

_OLD = "    return (end - start).days\n"

TASK = CodingTask(
    id="ws-days-between",
    family="bug-fix",
    instruction=(
        "days_between in dates.py is off by one: a booking covers both its first and its last "
        "day, so a booking that starts and ends on the same day covers 1 day. Fix it, and make "
        "it raise ValueError when end is before start. Do not change weekend_days."
    ),
    files={"dates.py": _DATES, "tests/__init__.py": "", "tests/test_dates.py": _VISIBLE},
    fix=edits(
        "dates.py",
        [
            (
                _OLD,
                "    if end < start:\n"
                '        raise ValueError(f"the booking ends ({end}) before it starts ({start})")\n'
                "    return (end - start).days + 1\n",
            )
        ],
    ),
    partial=edits("dates.py", [(_OLD, "    return (end - start).days + 1\n")]),
    partial_failure="partial",
    partial_note="a range whose end is before its start is not refused",
    author_tests="""import unittest
from datetime import date


class DaysTests(unittest.TestCase):
    def test_inclusive(self) -> None:
        from dates import days_between

        self.assertEqual(days_between(date(2024, 2, 28), date(2024, 3, 1)), 3)
        self.assertEqual(days_between(date(2024, 5, 5), date(2024, 5, 5)), 1)

    def test_reversed(self) -> None:
        from dates import days_between

        with self.assertRaises(ValueError):
            days_between(date(2024, 5, 6), date(2024, 5, 5))

    def test_weekend_days_unchanged(self) -> None:
        from dates import weekend_days

        self.assertEqual(weekend_days(date(2024, 3, 1), date(2024, 3, 31)), 10)
""",
    checks="inclusive counts across a month end and for one day; ValueError when reversed",
)
