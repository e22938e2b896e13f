"""JavaScript output behaviours: ``toFixed`` sizes and ``Date.prototype.toString``."""

from __future__ import annotations

import time

import pytest

from mcp_servers.filesystem.formatting import format_size, js_date_string


def test_format_size_rounds_like_javascript_to_fixed() -> None:
    assert [format_size(size) for size in (0, 1023, 1024, 1152, 10**6, 5 * 1024**4)] == [
        "0 B",
        "1023 B",
        "1.00 KB",
        "1.13 KB",
        "976.56 KB",
        "5.00 TB",
    ]


def test_js_date_string_matches_date_to_string_in_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    assert js_date_string(0) == "Thu Jan 01 1970 00:00:00 GMT+0000 (Coordinated Universal Time)"
    assert js_date_string(1709550000.9) == (
        "Mon Mar 04 2024 11:00:00 GMT+0000 (Coordinated Universal Time)"
    )
