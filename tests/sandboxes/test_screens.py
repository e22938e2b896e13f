"""Screen comparison with the shift replay allows: a line of text drawn a few pixels off is the
same screen; text moved further, a word more, or bold for regular is not."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageDraw, ImageFont

from sandboxes.screens import REPLAY_SHIFT, compare_screens

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
LINE = "Double-click to add an Object"


def _screen(
    *lines: tuple[int, int, str], bold: bool = False, size: tuple[int, int] = (1920, 1080)
) -> bytes:
    """A white screen with ``lines`` of text drawn at (x, y); a title bar for company."""
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, size[0], 40), fill=(60, 60, 90))
    font = ImageFont.truetype(FONT, 28)
    for x, y, text in lines:
        draw.text((x, y), text, fill="black", font=font, stroke_width=1 if bold else 0)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


RECORDED = _screen((660, 336, LINE), (660, 600, "Slide 4 of 4"))


@pytest.mark.parametrize(("dx", "dy"), [(0, 3), (0, -3), (2, 2), (-3, 1)])
def test_a_line_drawn_a_few_pixels_off_is_the_same_screen_for_replay(dx: int, dy: int) -> None:
    replayed = _screen((660 + dx, 336 + dy, LINE), (660, 600, "Slide 4 of 4"))
    plain = compare_screens(RECORDED, replayed)
    assert not plain.same
    assert plain.region is not None
    allowed = compare_screens(RECORDED, replayed, shift=REPLAY_SHIFT)
    assert allowed.same, allowed.describe()
    assert allowed.region is None
    assert "moved by up to 3 px" in allowed.describe()


@pytest.mark.parametrize(
    "replayed",
    [
        _screen((660, 342, LINE), (660, 600, "Slide 4 of 4")),  # moved 6 px
        _screen((660, 339, LINE + " here"), (660, 600, "Slide 4 of 4")),  # a word more, moved
        _screen((660, 339, LINE), (660, 600, "Slide 4 of 4"), (1200, 339, "new")),  # a word more
        _screen((660, 338, LINE), (660, 600, "Slide 4 of 4"), bold=True),  # bold, moved
        _screen((660, 336, "Double-click to add a Table"), (660, 600, "Slide 4 of 4")),
    ],
    ids=["moved-6px", "longer-and-moved", "extra-word", "bold-and-moved", "other-words"],
)
def test_what_a_small_move_cannot_explain_still_differs(replayed: bytes) -> None:
    comparison = compare_screens(RECORDED, replayed, shift=REPLAY_SHIFT)
    assert not comparison.same, comparison.describe()
    assert comparison.region is not None


def test_screens_of_partial_cells_are_compared_without_the_shift() -> None:
    recorded = _screen((10, 100, LINE), size=(1001, 601))
    replayed = _screen((10, 103, LINE), size=(1001, 601))
    assert not compare_screens(recorded, replayed, shift=REPLAY_SHIFT).same
