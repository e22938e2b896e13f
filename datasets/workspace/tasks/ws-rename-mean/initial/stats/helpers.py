"""Numeric helpers shared by the report modules."""


def calc_avg(values: list[float]) -> float:
    """The arithmetic mean of ``values``; an empty list has none."""
    if not values:
        raise ValueError("the mean of no values is undefined")
    return sum(values) / len(values)
