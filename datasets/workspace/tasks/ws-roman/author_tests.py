import unittest


class FromRomanTests(unittest.TestCase):
    def test_round_trip(self) -> None:
        from roman import from_roman, to_roman

        for number in (1, 4, 9, 14, 40, 90, 400, 1994, 2024, 3999):
            self.assertEqual(from_roman(to_roman(number)), number)

    def test_invalid(self) -> None:
        from roman import from_roman

        for text in ("", "IIII", "IC", "VX", "xiv", "ABC", "MMMM"):
            with self.assertRaises(ValueError, msg=text):
                from_roman(text)
