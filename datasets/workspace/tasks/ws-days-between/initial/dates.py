"""Date helpers for the booking calendar."""

from datetime import date


def days_between(start: date, end: date) -> int:
    """How many calendar days a booking from ``start`` to ``end`` covers."""
    return (end - start).days


def weekend_days(start: date, end: date) -> int:
    """Saturdays and Sundays from ``start`` to ``end``, both included."""
    count = 0
    day = start
    while day <= end:
        count += day.weekday() >= 5
        day = date.fromordinal(day.toordinal() + 1)
    return count
