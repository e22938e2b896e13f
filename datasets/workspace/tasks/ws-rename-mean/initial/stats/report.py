"""The weekly report."""

from stats.helpers import calc_avg


def weekly_line(name: str, hours: list[float]) -> str:
    """One line of the weekly report."""
    return f"{name}: {calc_avg(hours):.1f} h/day"
