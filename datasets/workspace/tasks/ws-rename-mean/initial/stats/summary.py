"""The monthly summary."""

from stats import helpers


def monthly_average(weeks: list[list[float]]) -> float:
    """The mean of the weekly means."""
    return helpers.calc_avg([helpers.calc_avg(week) for week in weeks])
