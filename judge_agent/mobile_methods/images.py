"""Screens as a method sends them: read, optionally marked, resized, combined, encoded.

Owns reading a frame's screenshot into a Pillow image (``dataset.screenshots.load_screenshot``
does the file checks), shrinking it so its long edge is at most N pixels (never enlarging),
putting several screens side by side on one canvas, and encoding an image as a PNG content block.
Must not decide which screens a method shows.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

from PIL import Image

from dataset.frames import Frame
from dataset.screenshots import load_screenshot
from judge_agent.model import ContentImage

__all__ = ["encode_png", "frame_image", "resize_long_edge", "side_by_side"]


def frame_image(frame: Frame, base_dir: Path) -> Image.Image | None:
    """The frame's screenshot as an RGB image; None when it has none or it cannot be read."""
    observation = frame.observation
    if observation is None or observation.screenshot is None:
        return None
    loaded = load_screenshot(base_dir, observation.screenshot)
    if isinstance(loaded, str):
        return None
    try:
        with Image.open(io.BytesIO(loaded.data)) as image:
            return image.convert("RGB")
    except (OSError, ValueError):
        return None


def resize_long_edge(image: Image.Image, long_edge: int | None) -> Image.Image:
    """``image`` scaled so its longer side is ``long_edge`` pixels (unchanged when it is
    already within it, or ``long_edge`` is None or 0)."""
    if not long_edge or max(image.size) <= long_edge:
        return image
    scale = long_edge / max(image.size)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return image.resize(size, Image.Resampling.LANCZOS)


def side_by_side(images: list[Image.Image], gap: int = 8) -> Image.Image:
    """The images left to right on a white canvas as tall as the tallest, ``gap`` px apart."""
    width = sum(image.width for image in images) + gap * (len(images) - 1)
    height = max(image.height for image in images)
    canvas = Image.new("RGB", (width, height), (255, 255, 255))
    left = 0
    for image in images:
        canvas.paste(image, (left, 0))
        left += image.width + gap
    return canvas


def encode_png(image: Image.Image) -> ContentImage:
    """The image as a PNG content block."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return ContentImage(
        data=base64.b64encode(buffer.getvalue()).decode("ascii"), mime_type="image/png"
    )
