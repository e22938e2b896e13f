import unittest

import roman


class RomanTests(unittest.TestCase):
    def test_to_roman(self) -> None:
        self.assertEqual(roman.to_roman(1994), "MCMXCIV")

    def test_from_roman(self) -> None:
        self.assertEqual(roman.from_roman("XIV"), 14)
