import unittest
from datetime import date

from dates import days_between, weekend_days


class DateTests(unittest.TestCase):
    def test_one_week(self) -> None:
        self.assertEqual(days_between(date(2024, 3, 4), date(2024, 3, 10)), 7)

    def test_weekend(self) -> None:
        self.assertEqual(weekend_days(date(2024, 3, 4), date(2024, 3, 10)), 2)
