"""Screenshots of a recorded run, for a judge: which ones to show, and reading them from disk.

Owns the screenshot policies (``"last"``, ``"all"``, ``"none"`` or N sampled uniformly, first and
last included), reading a screenshot file relative to the trajectory file's folder as bytes with
its MIME type (``load_screenshot``), and the reasons, worded for the judge, why one cannot be
shown. Must not name a screenshot's file to the judge (screenshot folders carry the trajectory
id, which often spells the outcome), nor turn images into any model's or server's content type.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "DEFAULT_SCREENSHOTS",
    "SCREENSHOT_BYTES_LIMIT",
    "Screenshot",
    "ScreenshotPolicy",
    "image_mime_type",
    "load_screenshot",
    "parse_screenshot_policy",
    "select_screenshot_steps",
]

SCREENSHOT_BYTES_LIMIT = 20 * 1024 * 1024
"""Screenshot files larger than this are noted, not attached."""
ScreenshotPolicy = Literal["all", "none", "last"] | int
"""Which screenshots to attach: all, none, the last, or N sampled uniformly (first and last
included)."""
DEFAULT_SCREENSHOTS: ScreenshotPolicy = "last"
"""The policy of every judge mode unless configured otherwise."""


class Screenshot(BaseModel):
    """A screenshot read from its file: the bytes and what kind of image they are."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    data: bytes
    """The file's bytes."""
    mime_type: str
    """``image/png``, ``image/jpeg``, ... (from the bytes, else the file extension)."""


def parse_screenshot_policy(value: str | int) -> ScreenshotPolicy:
    """``"all"``, ``"none"``, ``"last"`` or a non-negative count (as int or digits)."""
    if isinstance(value, bool):
        raise ValueError(f"screenshot policy must be all, none, last or a number; got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"screenshot count must be 0 or more; got {value}")
        return value
    text = value.strip().lower()
    if text == "all":
        return "all"
    if text == "none":
        return "none"
    if text == "last":
        return "last"
    if text.isdigit():
        return int(text)
    raise ValueError(f"screenshot policy must be all, none, last or a number; got {value!r}")


def select_screenshot_steps(candidates: list[int], policy: ScreenshotPolicy) -> list[int]:
    """The steps (from ``candidates``, in order) whose screenshots ``policy`` attaches."""
    if not candidates or policy in {"none", 0}:
        return []
    if policy == "all":
        return list(candidates)
    if policy in {"last", 1}:
        return [candidates[-1]]
    assert isinstance(policy, int)
    if policy >= len(candidates):
        return list(candidates)
    last = len(candidates) - 1
    positions = sorted({round(i * last / (policy - 1)) for i in range(policy)})
    return [candidates[position] for position in positions]


_SIGNATURES: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"WEBP", 8, "image/webp"),
    (b"BM", 0, "image/bmp"),
)


def image_mime_type(data: bytes, path: Path) -> str:
    """The image's MIME type from its leading bytes, else from its file extension."""
    for signature, offset, mime_type in _SIGNATURES:
        matches = data[offset : offset + len(signature)] == signature
        if matches and (signature != b"WEBP" or data.startswith(b"RIFF")):
            return mime_type
    guessed, _ = mimetypes.guess_type(path.name)
    return guessed or "application/octet-stream"


def load_screenshot(base_dir: Path | None, relative: str) -> Screenshot | str:
    """The screenshot at ``relative`` (a path inside ``base_dir``, the trajectory file's folder),
    or why it cannot be attached, worded for the judge (never naming the file: screenshot folders
    carry the trajectory id, which often spells the outcome)."""
    if base_dir is None:
        return "recorded, but the image files are not available to this judge; not attached"
    base = base_dir.resolve()
    path = (base / relative).resolve()
    if not path.is_relative_to(base):
        return "recorded, but its path leads outside the trajectory's folder; not attached"
    try:
        if not path.is_file():
            return "recorded, but the image file is missing; not attached"
        size = path.stat().st_size
        if size > SCREENSHOT_BYTES_LIMIT:
            return f"recorded, but the file is too large to attach ({size:,} bytes)"
        data = path.read_bytes()
    except OSError:
        return "recorded, but the image file cannot be read; not attached"
    return Screenshot(data=data, mime_type=image_mime_type(data, path))
