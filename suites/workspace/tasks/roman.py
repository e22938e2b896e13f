"""ws-roman (feature): parsing Roman numerals, with invalid ones refused."""

from __future__ import annotations

from suites.workspace.spec import CodingTask, edits

_ROMAN = '''"""Roman numerals for chapter headings."""

_VALUES = [
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
]


def to_roman(number: int) -> str:
    """The Roman numeral of ``number`` (1 to 3999)."""
    if not 1 <= number <= 3999:
        raise ValueError(f"{number} has no Roman numeral")
    digits = []
    for value, letters in _VALUES:
        while number >= value:
            digits.append(letters)
            number -= value
    return "".join(digits)
'''

_VISIBLE = """import unittest

import roman


class RomanTests(unittest.TestCase):
    def test_to_roman(self) -> None:
        self.assertEqual(roman.to_roman(1994), "MCMXCIV")

    def test_from_roman(self) -> None:
        self.assertEqual(roman.from_roman("XIV"), 14)
"""

_END = '    return "".join(digits)\n'
_LOOKUP = '''

def from_roman(text: str) -> int:
    """The number a Roman numeral stands for."""
    single = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    total = 0
    for index, letter in enumerate(text):
        value = single[letter]
        if index + 1 < len(text) and single[text[index + 1]] > value:
            total -= value
        else:
            total += value
'''

TASK = CodingTask(
    id="ws-roman",
    family="feature",
    instruction=(
        "Add from_roman(text) to roman.py, the inverse of to_roman: it returns the number a "
        "Roman numeral in canonical form stands for (as to_roman writes it, 1 to 3999) and "
        "raises ValueError for anything else: an empty string, other characters, lowercase, or "
        "non-canonical forms such as 'IIII' or 'IC'."
    ),
    files={"roman.py": _ROMAN, "tests/__init__.py": "", "tests/test_roman.py": _VISIBLE},
    fix=edits(
        "roman.py",
        [
            (
                _END,
                _END
                + _LOOKUP.replace(
                    "    single = {",
                    '    if not text or any(letter not in "IVXLCDM" for letter in text):\n'
                    '        raise ValueError(f"not a Roman numeral: {text!r}")\n'
                    "    single = {",
                )
                + "    if total < 1 or to_roman(total) != text:\n"
                + '        raise ValueError(f"not a canonical Roman numeral: {text!r}")\n'
                + "    return total\n",
            )
        ],
    ),
    partial=edits("roman.py", [(_END, _END + _LOOKUP + "    return total\n")]),
    partial_failure="partial",
    partial_note="invalid and non-canonical numerals are not refused",
    author_tests="""import unittest


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
""",
    checks="round trip of ten numbers; ValueError for empty, lowercase, foreign, non-canonical",
)
