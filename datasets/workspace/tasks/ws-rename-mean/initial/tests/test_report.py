import unittest

from stats.report import weekly_line


class ReportTests(unittest.TestCase):
    def test_weekly_line(self) -> None:
        self.assertEqual(weekly_line("ana", [8, 6, 7]), "ana: 7.0 h/day")
