"""Screen comparison with the shift replay allows: a line of text drawn a few pixels off is the
same screen; text moved further, a word more, or bold for regular is not."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from sandboxes.screens import GROUP_REACH, REPLAY_SHIFT, _components, compare_screens

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


LIBERATION = "/usr/share/fonts/truetype/liberation2/LiberationSerif-{}.ttf"
SENTENCE = ("The supplier must ship the ", "spare", " parts by Friday.")


def _document(style: str = "Regular", *, underline: bool = False, cursor: int | None = None,
              palette: bool = False, dy: int = 0) -> bytes:  # fmt: skip
    """A page of document text at 11 pt and 100 % zoom (15 px), one word in ``style``
    (``Regular``, ``Italic``, ``Bold``) and optionally underlined by one pixel; a text cursor
    bar at x ``cursor``; stored as a 64-colour palette PNG as the GUI suite stores them."""
    image = Image.new("RGB", (1920, 1080), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 1920, 60), fill=(235, 235, 235))
    regular = ImageFont.truetype(LIBERATION.format("Regular"), 15)
    word_font = ImageFont.truetype(LIBERATION.format(style), 15)
    for row in range(12):
        y = 200 + 22 * row + (dy if row == 3 else 0)
        x = 400.0
        fonts = (regular, word_font if row == 3 else regular, regular)
        for part, font in zip(SENTENCE, fonts, strict=True):
            draw.text((x, y), part, fill="black", font=font)
            width = draw.textlength(part, font=font)
            if row == 3 and part == "spare" and underline:
                draw.line((x, y + 15, x + width, y + 15), fill="black", width=1)
            x += width
    if cursor is not None:
        draw.line((cursor, 266, cursor, 283), fill="black", width=1)
    out = io.BytesIO()
    (image.quantize(64, method=Image.Quantize.MEDIANCUT) if palette else image).save(out, "PNG")
    return out.getvalue()


PLAIN = _document(palette=True)


@pytest.mark.parametrize(
    "replayed",
    [_document(underline=True), _document("Italic"), _document("Bold")],
    ids=["underline", "italics", "bold"],
)
def test_formatting_on_one_word_is_a_difference_only_the_fine_test_sees(replayed: bytes) -> None:
    coarse = compare_screens(PLAIN, replayed, shift=REPLAY_SHIFT)
    fine = compare_screens(PLAIN, replayed, shift=REPLAY_SHIFT, fine=True)
    assert not fine.same, fine.describe()
    assert fine.fine_changes
    x, y, _, _ = fine.fine_changes[0]
    assert 380 <= x <= 700, fine.fine_changes
    assert 255 <= y <= 300, fine.fine_changes  # the word's line
    assert "fine detail" in fine.describe()
    assert coarse.changed_share <= 0.001  # the cells alone hardly notice


@pytest.mark.parametrize(
    "replayed",
    [_document(), _document(cursor=583), _document(dy=2), _document(dy=-1, cursor=450)],
    ids=["same-unpalettised", "text-cursor", "line-moved-2px", "moved-and-cursor"],
)
def test_an_honest_replay_passes_the_fine_test(replayed: bytes) -> None:
    comparison = compare_screens(PLAIN, replayed, shift=REPLAY_SHIFT, fine=True)
    assert comparison.same, comparison.describe()
    assert comparison.fine_changes == []


def _groups_by_definition(mask: np.ndarray) -> list[set[tuple[int, int]]]:
    """The groups as defined: cells joined when at most ``GROUP_REACH`` cells apart in rows
    and in columns, transitively (every pair of cells checked)."""
    cells = [(int(row), int(column)) for row, column in np.argwhere(mask)]
    owner = list(range(len(cells)))

    def root(index: int) -> int:
        while owner[index] != index:
            index = owner[index]
        return index

    for first, (row, column) in enumerate(cells):
        for second in range(first):
            other = cells[second]
            if max(abs(row - other[0]), abs(column - other[1])) <= GROUP_REACH:
                owner[root(first)] = root(second)
    groups: dict[int, set[tuple[int, int]]] = {}
    for index, cell in enumerate(cells):
        groups.setdefault(root(index), set()).add(cell)
    return sorted(groups.values(), key=min)


@pytest.mark.parametrize("density", [0.01, 0.05, 0.15])
def test_changed_cells_are_grouped_as_defined(density: float) -> None:
    generator = np.random.default_rng(int(density * 1000))
    for _ in range(20):
        mask = generator.random((30, 40)) < density
        found = [{(int(r), int(c)) for r, c in group} for group in _components(mask)]
        assert found == _groups_by_definition(mask)
        assert all(len(group) == len(set(map(tuple, group))) for group in _components(mask))
