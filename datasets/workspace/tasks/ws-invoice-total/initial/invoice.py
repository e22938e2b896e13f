"""Invoice totals; quantities and unit prices arrive as strings."""


def invoice_total(lines: list[tuple[str, str]]) -> str:
    """The total of (quantity, unit price) lines, as a string with two decimals."""
    total = 0.0
    for quantity, price in lines:
        total += float(quantity) * float(price)
    return str(round(total, 2))
