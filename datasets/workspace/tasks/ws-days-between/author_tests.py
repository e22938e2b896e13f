import unittest
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
