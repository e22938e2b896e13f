"""Whether two screenshots show the same screen: a comparison any kind with a screen can use.

Owns the perceptual distance of two screenshots: both are made grey and shrunk to cells of
``CELL`` x ``CELL`` pixels, which hides anti-aliasing and a blinking text cursor; a cell differs
when its mean brightness moves by more than ``CELL_TOLERANCE``; the screens count as the same
when at most ``CHANGED_SHARE_TOLERANCE`` of the cells differ, and the box around the differing
cells says where they differ. Replay also allows a local shift (``REPLAY_SHIFT``): a cell counts
as unchanged when it belongs to a group of nearby changed cells that is the same drawing moved
by a few pixels (LibreOffice does not always place a placeholder's text at the same height).
Cells hide small marks, so replay also asks for a fine test (``fine=True``): pixels whose grey
moves by more than ``FINE_TOLERANCE`` are grouped, and a group at least ``FINE_MIN_WIDTH`` pixels
wide holding at least ``FINE_MIN_PIXELS`` such pixels is a difference unless a move of the
replayed screen by up to ``shift`` pixels removes it: a 1-pixel underline, italics or bold on one
word differ; a blinking text cursor (a bar a pixel or two wide) and palette rounding in a stored
screenshot do not.
It knows no kind: a desktop's replay and its still-screen wait use it, and a phone's could.
"""

from __future__ import annotations

import functools
import io
import itertools

import numpy as np
from PIL import Image, ImageChops, UnidentifiedImageError
from pydantic import BaseModel, ConfigDict
from scipy import ndimage

__all__ = [
    "CELL",
    "CELL_TOLERANCE",
    "CHANGED_SHARE_TOLERANCE",
    "FINE_MIN_PIXELS",
    "FINE_MIN_WIDTH",
    "FINE_TOLERANCE",
    "REPLAY_SHIFT",
    "ScreenComparison",
    "compare_screens",
]

CELL = 8
"""Pixels per side of the cells screens are compared by."""
CELL_TOLERANCE = 40
"""How far (0-255) a cell's mean grey may move before the cell counts as changed."""
CHANGED_SHARE_TOLERANCE = 0.0002
"""The share of changed cells up to which two screens count as the same: about six cells of a
1920x1080 screen, room for a blinking text cursor; one short word typed is more."""
REPLAY_SHIFT = 3
"""Pixels, in each direction, by which replay lets the replayed screen be moved to match a cell:
a line of text drawn two or three pixels lower is the same screen; a word more or less, or a
line moved by a line's height, is not."""


FINE_TOLERANCE = 96
"""How far (0-255) a pixel's grey must move to count in the fine test: ink against paper moves
by 150 or more; rounding a screenshot to 64 colours by far less."""
FINE_MIN_WIDTH = 5
"""Narrowest group of changed pixels, in pixels, the fine test counts: a text cursor is one or
two pixels wide; an underline, a slanted or thickened word is wider."""
FINE_MIN_PIXELS = 12
"""Fewest changed pixels a group needs to count in the fine test."""


class ScreenComparison(BaseModel):
    """Two screenshots set side by side."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    distance: float
    """The mean brightness difference of the shrunk screens, from 0 (same) to 1."""
    changed_share: float
    """The share of cells whose brightness moved by more than ``CELL_TOLERANCE``."""
    region: tuple[int, int, int, int] | None
    """Where they differ, as (x, y, width, height) in recorded screen pixels; None when no cell
    differs."""
    size_note: str | None = None
    """Set when the screens had different sizes (the replayed one was scaled to compare)."""
    shift: int = 0
    """Pixels, in each direction, by which the replayed screen could be moved to match a cell."""
    fine_changes: list[tuple[int, int, int, int]] = []
    """With the fine test: the boxes (x, y, width, height) of the small drawings that differ
    pixel by pixel (an underline, italics, bold), however few cells they change."""

    @property
    def same(self) -> bool:
        """Whether the screens count as the same."""
        return (
            self.changed_share <= CHANGED_SHARE_TOLERANCE
            and self.size_note is None
            and not self.fine_changes
        )

    def describe(self) -> str:
        """One line for a report."""
        text = (
            f"{self.changed_share:.1%} of the screen differs (mean difference {self.distance:.3f})"
        )
        if self.region is not None:
            x, y, width, height = self.region
            text += f", within x {x}-{x + width}, y {y}-{y + height}"
        if self.shift:
            text += f" (cells matching when moved by up to {self.shift} px not counted)"
        if self.fine_changes:
            boxes = ", ".join(
                f"x {x}-{x + width}, y {y}-{y + height}"
                for x, y, width, height in self.fine_changes[:3]
            )
            more = f" and {len(self.fine_changes) - 3} more" if len(self.fine_changes) > 3 else ""
            text += f"; fine detail (underline, slant, weight, a mark) differs at {boxes}{more}"
        if self.size_note:
            text += f"; {self.size_note}"
        return text


def _grey(data: bytes, what: str) -> Image.Image:
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except (UnidentifiedImageError, OSError) as error:
        raise ValueError(f"the {what} screenshot is not an image: {error}") from None
    return image.convert("L")


@functools.lru_cache(maxsize=16)
def _recorded_grey(data: bytes) -> tuple[Image.Image, np.ndarray, np.ndarray]:
    """The recorded screenshot made grey, with its pixels and its cells, kept for the next looks
    at the same step (replay compares one recorded screenshot with each look while a screen
    catches up)."""
    image = _grey(data, "recorded")
    pixels, cells = np.asarray(image), _cells(image)
    pixels.flags.writeable = cells.flags.writeable = False  # shared by every later look
    return image, pixels, cells


def _cells(image: Image.Image) -> np.ndarray:
    width, height = max(image.width // CELL, 1), max(image.height // CELL, 1)
    shrunk = image.resize((width, height), Image.Resampling.BOX)
    return np.asarray(shrunk, dtype=np.float64)


def _around(pixels: np.ndarray, rows: tuple[int, int], columns: tuple[int, int]) -> np.ndarray:
    """``pixels[rows, columns]`` where the ranges may run past the image's sides, each pixel out
    of it taking the value of the nearest edge pixel (as ``np.pad(..., mode="edge")`` would,
    without copying the whole image)."""
    height, width = pixels.shape
    row_index = np.clip(np.arange(*rows), 0, height - 1)
    column_index = np.clip(np.arange(*columns), 0, width - 1)
    return pixels[np.ix_(row_index, column_index)]


def _block_means(pixels: np.ndarray) -> np.ndarray:
    """Mean grey of each ``CELL`` x ``CELL`` block (``pixels``' sides are whole cells)."""
    height, width = pixels.shape
    means: np.ndarray = pixels.reshape(height // CELL, CELL, width // CELL, CELL).mean(axis=(1, 3))
    return means


GROUP_REACH = 3
"""Changed cells at most this many cells apart belong to one group (the pieces of one line of
text that moved leave unchanged cells between them, where a letter's ink stayed in its cell)."""


def _components(mask: np.ndarray) -> list[np.ndarray]:
    """The groups of ``True`` cells, each cell within ``GROUP_REACH`` cells (in rows and in
    columns) of another of its group, as arrays of (row, column) in row order. Two cells that
    near each other are exactly the cells whose squares grown by ``GROUP_REACH // 2`` cells on
    each side touch or overlap (``GROUP_REACH`` is odd), so the groups are the touching regions
    of the grown mask, read back at the cells of ``mask``."""
    grown = ndimage.binary_dilation(mask, structure=_GROWTH)
    labels, count = ndimage.label(grown, structure=_TOUCHING)
    cells = np.argwhere(mask)
    owners = labels[cells[:, 0], cells[:, 1]]
    order = np.argsort(owners, kind="stable")
    bounds = np.searchsorted(owners[order], np.arange(1, count + 2))
    groups = [cells[order[bounds[number] : bounds[number + 1]]] for number in range(count)]
    # In the order of each group's first cell, row by row (the order of the boxes reported).
    return sorted((group for group in groups if len(group)), key=lambda group: tuple(group[0]))


_GROWTH = np.ones((GROUP_REACH // 2 * 2 + 1,) * 2, dtype=bool)
"""The square each cell grows by before the grown mask's regions are read as groups."""
_TOUCHING = np.ones((3, 3), dtype=bool)
"""Regions touch along a side or at a corner."""


MOVED_INK_TOLERANCE = 0.1
"""How much the ink (darkness summed over the pixels) of a group of changed cells may differ
between the screens, as a share of the larger, for the group to count as moved: moving keeps
the ink, a word more or less, bold for regular, or a mark added does not."""


def _still_changed_when_moved(
    old_pixels: np.ndarray, new_pixels: np.ndarray, changed: np.ndarray, shift: int
) -> np.ndarray:
    """``changed`` without the groups of nearby changed cells that are the same drawing moved:
    the group holds as much ink on both screens (within ``MOVED_INK_TOLERANCE``, counted over
    its box and ``GROUP_REACH`` cells and ``shift`` pixels around it), and one move of the new
    screen by up to ``shift`` pixels each way makes every cell of the group match within
    ``CELL_TOLERANCE``. Only each group's own surroundings are read (the screens are grey
    ``uint8`` arrays)."""
    height, width = old_pixels.shape
    remaining = changed.copy()
    for group in _components(changed):
        top, left = (int(value) for value in group.min(axis=0))
        bottom, right = (int(value) + 1 for value in group.max(axis=0))
        # Ink is counted around the group too: its changed cells may hold only part of what
        # moved (a line's middle, say, with its top and bottom in cells that changed less).
        margin = GROUP_REACH * CELL + shift
        y0, y1 = max(top * CELL - margin, 0), min(bottom * CELL + margin, height)
        x0, x1 = max(left * CELL - margin, 0), min(right * CELL + margin, width)
        area = (y1 - y0) * (x1 - x0)
        old_ink = float(255 * area - int(old_pixels[y0:y1, x0:x1].sum(dtype=np.int64)))
        new_ink = float(255 * area - int(new_pixels[y0:y1, x0:x1].sum(dtype=np.int64)))
        if abs(old_ink - new_ink) > MOVED_INK_TOLERANCE * max(old_ink, new_ink):
            continue
        box = (slice(top * CELL, bottom * CELL), slice(left * CELL, right * CELL))
        old = _block_means(old_pixels[box].astype(np.float64))
        cells = group - [top, left]
        height_px, width_px = (bottom - top) * CELL, (right - left) * CELL
        moved = _around(
            new_pixels,
            (top * CELL - shift, bottom * CELL + shift),
            (left * CELL - shift, right * CELL + shift),
        ).astype(np.float64)
        for dy, dx in itertools.product(range(-shift, shift + 1), repeat=2):
            window = moved[shift + dy : shift + dy + height_px, shift + dx : shift + dx + width_px]
            differs = np.abs(old - _block_means(window)) > CELL_TOLERANCE
            if not differs[cells[:, 0], cells[:, 1]].any():
                remaining[group[:, 0], group[:, 1]] = False
                break
    return remaining


_STRONG_MARKS = [255 if grey > FINE_TOLERANCE else 0 for grey in range(256)]
"""A lookup table that marks a pixel whose grey moved by more than ``FINE_TOLERANCE``."""


def _fine_changes(
    before: Image.Image, old: np.ndarray, new: np.ndarray, after: Image.Image, shift: int
) -> list[tuple[int, int, int, int]]:
    """The boxes of the groups of strongly changed pixels (``FINE_TOLERANCE``) that are at least
    ``FINE_MIN_WIDTH`` wide, hold ``FINE_MIN_PIXELS`` pixels, and that no move of the new screen
    by up to ``shift`` pixels each way removes (all but a few pixels). ``old`` and ``new`` are
    ``before`` and ``after`` as ``uint8`` arrays."""
    difference = ImageChops.difference(before, after)
    # A cell holds a strong change when the mean of its marks (255 where strong) is not 0.
    cells = np.asarray(difference.point(_STRONG_MARKS).reduce(CELL)) > 0
    if not cells.any():
        return []
    changes = np.asarray(difference)
    height, width = changes.shape
    boxes: list[tuple[int, int, int, int]] = []
    for group in _components(cells):
        top, left = (int(value) * CELL for value in group.min(axis=0))
        bottom = min((int(group[:, 0].max()) + 1) * CELL, height)
        right = min((int(group[:, 1].max()) + 1) * CELL, width)
        part = changes[top:bottom, left:right] > FINE_TOLERANCE
        count = int(part.sum())
        ys, xs = np.nonzero(part)
        if count < FINE_MIN_PIXELS or int(xs.max() - xs.min()) + 1 < FINE_MIN_WIDTH:
            continue
        box = (left + int(xs.min()), top + int(ys.min()), int(xs.max() - xs.min()) + 1,
               int(ys.max() - ys.min()) + 1)  # fmt: skip
        residue = max(FINE_MIN_PIXELS, count // 20)
        # The group's box with room around it: a mark that a move carries out of the box itself
        # (an underline under a line of text) must still be counted.
        y0, y1 = max(top - shift, 0), min(bottom + shift, height)
        x0, x1 = max(left - shift, 0), min(right + shift, width)
        kept = old[y0:y1, x0:x1].astype(np.int16)
        moved = _around(new, (y0 - shift, y1 + shift), (x0 - shift, x1 + shift)).astype(np.int16)
        found = False
        for dy, dx in itertools.product(range(-shift, shift + 1), repeat=2):
            if not dy and not dx:
                continue
            window = moved[shift + dy : shift + dy + y1 - y0, shift + dx : shift + dx + x1 - x0]
            if int((np.abs(kept - window) > FINE_TOLERANCE).sum()) < residue:
                found = True
                break
        if not found:
            boxes.append(box)
    return boxes


def compare_screens(
    recorded: bytes, replayed: bytes, *, shift: int = 0, fine: bool = False
) -> ScreenComparison:
    """The perceptual distance between a recorded and a replayed screenshot (PNG or any image
    Pillow reads); ``shift``: pixels by which the replayed screen may be moved, each way, to
    match a cell (replay passes ``REPLAY_SHIFT``; screens whose sides are not a whole number of
    cells are compared without it); ``fine``: also run the fine test (small marks such as an
    underline). ``ValueError`` names the side that is not an image."""
    before, old_pixels, old = _recorded_grey(recorded)
    after = _grey(replayed, "replayed")
    note = None
    if before.size != after.size:
        note = (
            f"the recorded screen is {before.width}x{before.height}, the replayed one "
            f"{after.width}x{after.height}"
        )
        after = after.resize(before.size, Image.Resampling.BILINEAR)
    new = _cells(after)
    difference = np.abs(old - new)
    changed = difference > CELL_TOLERANCE
    new_pixels = np.asarray(after)
    if shift and changed.any() and before.width % CELL == 0 and before.height % CELL == 0:
        changed = _still_changed_when_moved(old_pixels, new_pixels, changed, shift)
    fine_changes = (
        _fine_changes(before, old_pixels, new_pixels, after, shift) if fine and note is None else []
    )
    region = None
    boxes = []
    if changed.any():
        rows = np.flatnonzero(changed.any(axis=1))
        columns = np.flatnonzero(changed.any(axis=0))
        x, y = int(columns[0]) * CELL, int(rows[0]) * CELL
        boxes.append((x, y, (int(columns[-1]) + 1) * CELL, (int(rows[-1]) + 1) * CELL))
    boxes += [(x, y, x + width, y + height) for x, y, width, height in fine_changes]
    if boxes:
        x0, y0 = min(box[0] for box in boxes), min(box[1] for box in boxes)
        x1, y1 = max(box[2] for box in boxes), max(box[3] for box in boxes)
        region = (x0, y0, x1 - x0, y1 - y0)
    return ScreenComparison(
        distance=float(difference.mean() / 255.0),
        changed_share=float(changed.mean()),
        region=region,
        size_note=note,
        shift=shift,
        fine_changes=fine_changes,
    )
