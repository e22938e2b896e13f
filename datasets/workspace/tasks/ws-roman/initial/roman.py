"""Roman numerals for chapter headings."""

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
