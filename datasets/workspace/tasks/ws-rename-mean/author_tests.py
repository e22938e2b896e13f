import unittest
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
