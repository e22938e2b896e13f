"""JavaScript behaviours the reference server's output formats depend on.

Owns human-readable sizes (``toFixed(2)``), ``Date.prototype.toString()`` times, ``padEnd`` /
``padStart`` in UTF-16 code units and an approximation of ``localeCompare``'s ordering.
"""

from __future__ import annotations

import math
import time
import unicodedata
from decimal import ROUND_HALF_UP, Decimal


def _utf16_length(text: str) -> int:
    return sum(2 if ord(character) > 0xFFFF else 1 for character in text)


def pad_end(text: str, width: int) -> str:
    """``String.prototype.padEnd`` with spaces; the width counts UTF-16 code units."""
    return text + " " * max(0, width - _utf16_length(text))


def pad_start(text: str, width: int) -> str:
    """``String.prototype.padStart`` with spaces; the width counts UTF-16 code units."""
    return " " * max(0, width - _utf16_length(text)) + text


def _to_fixed_2(value: float) -> str:
    """``Number.prototype.toFixed(2)``: exact binary value, ties rounded up."""
    return str(Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def format_size(size: int) -> str:
    """The reference's human-readable size: ``0 B``, ``512 B``, ``1.50 KB``, ... ``TB``."""
    units = ["B", "KB", "MB", "GB", "TB"]
    if size <= 0:
        return "0 B"
    index = math.floor(math.log(size) / math.log(1024))
    if index <= 0:
        return f"{size} B"
    index = min(index, len(units) - 1)
    return f"{_to_fixed_2(size / 1024**index)} {units[index]}"


_WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
_ZONE_NAMES = {"UTC": "Coordinated Universal Time", "UCT": "Coordinated Universal Time"}


def js_date_string(seconds: float) -> str:
    """``Date.prototype.toString()`` in the local time zone, e.g.
    ``Mon Mar 04 2024 11:00:00 GMT+0000 (Coordinated Universal Time)``.

    The zone's long name comes from ICU in Node; only UTC's is known here, other zones show
    their abbreviation.
    """
    local = time.localtime(math.floor(seconds))
    offset = local.tm_gmtoff or 0
    sign = "+" if offset >= 0 else "-"
    hours, minutes = divmod(abs(offset) // 60, 60)
    abbreviation = local.tm_zone or "UTC"
    zone = _ZONE_NAMES.get(abbreviation, abbreviation)
    return (
        f"{_WEEKDAYS[local.tm_wday]} {_MONTHS[local.tm_mon - 1]} {local.tm_mday:02d}"
        f" {local.tm_year:04d} {local.tm_hour:02d}:{local.tm_min:02d}:{local.tm_sec:02d}"
        f" GMT{sign}{hours:02d}{minutes:02d} ({zone})"
    )


# Order of ASCII whitespace and punctuation in the root collation ICU uses for localeCompare.
_VARIABLE_ORDER = "\t\n\x0b\x0c\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_VARIABLE_WEIGHT = {character: index + 1 for index, character in enumerate(_VARIABLE_ORDER)}


def collation_key(text: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """An approximation of ``String.prototype.localeCompare`` (ICU root collation): punctuation,
    then digits, then letters case- and accent-blind, then accents, then lowercase first."""
    primary: list[int] = []
    secondary: list[int] = []
    tertiary: list[int] = []
    for character in text:
        if character == "ß":  # sorts as "ss", after a real "ss"
            primary += [1000 + ord("s")] * 2
            secondary += [0, 0]
            tertiary += [2, 2]
            continue
        decomposed = unicodedata.normalize("NFD", character)
        base, marks = decomposed[0], decomposed[1:]
        if base in _VARIABLE_WEIGHT:
            primary.append(_VARIABLE_WEIGHT[base])
        elif base.isdigit() and base.isascii():
            primary.append(100 + int(base))
        elif base.isalpha():
            primary.append(1000 + ord(base.lower()))
        else:
            primary.append(200 + ord(base) if ord(base) < 800 else 1_000_000 + ord(base))
        secondary.append(sum(ord(mark) for mark in marks))
        tertiary.append(1 if base.isupper() else 0)
    return tuple(primary), tuple(secondary), tuple(tertiary)
