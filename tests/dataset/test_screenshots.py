"""Screenshots for a judge: the policies, the uniform sample, and reading files safely."""

from __future__ import annotations

from pathlib import Path

import pytest

from dataset import screenshots
from dataset.screenshots import (
    Screenshot,
    image_mime_type,
    load_screenshot,
    parse_screenshot_policy,
    select_screenshot_steps,
)

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(32))


@pytest.mark.parametrize(
    ("candidates", "policy", "expected"),
    [
        ([1, 2, 3, 4, 5, 6, 7, 8], "last", [8]),
        ([1, 2, 3, 4, 5, 6, 7, 8], "all", [1, 2, 3, 4, 5, 6, 7, 8]),
        ([1, 2, 3, 4, 5, 6, 7, 8], "none", []),
        ([1, 2, 3, 4, 5, 6, 7, 8], 0, []),
        ([1, 2, 3, 4, 5, 6, 7, 8], 1, [8]),
        ([1, 2, 3, 4, 5, 6, 7, 8], 2, [1, 8]),
        ([1, 2, 3, 4, 5, 6, 7, 8], 3, [1, 5, 8]),
        ([2, 4, 6], 5, [2, 4, 6]),
        ([], "last", []),
        (list(range(1, 101)), 4, [1, 34, 67, 100]),
    ],
)
def test_screenshot_selection(
    candidates: list[int], policy: str | int, expected: list[int]
) -> None:
    assert select_screenshot_steps(candidates, parse_screenshot_policy(policy)) == expected


def test_uniform_sampling_always_includes_first_and_last() -> None:
    for total in range(2, 40):
        for count in range(2, total + 1):
            chosen = select_screenshot_steps(list(range(total)), count)
            assert chosen[0] == 0
            assert chosen[-1] == total - 1
            assert len(chosen) == count
            assert chosen == sorted(set(chosen))


@pytest.mark.parametrize(
    ("value", "expected"),
    [("all", "all"), (" None ", "none"), ("LAST", "last"), ("12", 12), (3, 3)],
)
def test_screenshot_policy_parsing(value: str | int, expected: str | int) -> None:
    assert parse_screenshot_policy(value) == expected


@pytest.mark.parametrize("value", ["some", "-1", -2, "1.5", ""])
def test_bad_screenshot_policies_are_refused(value: str | int) -> None:
    with pytest.raises(ValueError, match="screenshot"):
        parse_screenshot_policy(value)


def test_a_screenshot_is_read_as_bytes_with_its_type(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "step_1.jpg").write_bytes(PNG)  # misnamed: the bytes decide
    loaded = load_screenshot(tmp_path, "run/step_1.jpg")
    assert loaded == Screenshot(data=PNG, mime_type="image/png")
    assert image_mime_type(b"no signature", Path("x.webp")) == "image/webp"
    assert image_mime_type(b"no signature", Path("x")) == "application/octet-stream"


def test_unavailable_screenshots_say_why_without_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path / "trajectories"
    (base / "run").mkdir(parents=True)
    (base / "run" / "big.png").write_bytes(PNG)
    (tmp_path / "outside.png").write_bytes(PNG)
    (base / "run" / "link.png").symlink_to(tmp_path / "outside.png")
    reasons = {
        "none": load_screenshot(None, "run/big.png"),
        "missing": load_screenshot(base, "run/gone.png"),
        "outside": load_screenshot(base, "run/link.png"),
        "escape": load_screenshot(base, "../outside.png"),
    }
    monkeypatch.setattr(screenshots, "SCREENSHOT_BYTES_LIMIT", len(PNG) - 1)
    reasons["large"] = load_screenshot(base, "run/big.png")
    assert reasons == {
        "none": "recorded, but the image files are not available to this judge; not attached",
        "missing": "recorded, but the image file is missing; not attached",
        "outside": "recorded, but its path leads outside the trajectory's folder; not attached",
        "escape": "recorded, but its path leads outside the trajectory's folder; not attached",
        "large": f"recorded, but the file is too large to attach ({len(PNG):,} bytes)",
    }
