"""Linearising OSWorld-style accessibility trees: which nodes are kept, the columns, the budget,
and set-of-marks (numbered nodes, boxes on the screenshot)."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from sandboxes.desktop.observations import (
    CHARACTERS_PER_TOKEN,
    HEADER,
    MARK_COLOURS,
    MARKED_HEADER,
    TRIMMED_MARK,
    find_nodes,
    linearize_tree,
    linearized,
    mark_screenshot,
    tree_nodes,
)

NS = (
    'xmlns:st="https://accessibility.ubuntu.example.org/ns/state" '
    'xmlns:attr="https://accessibility.ubuntu.example.org/ns/attributes" '
    'xmlns:cp="https://accessibility.ubuntu.example.org/ns/component" '
    'xmlns:val="https://accessibility.ubuntu.example.org/ns/value"'
)
SHOWN = 'st:visible="true" st:showing="true" st:enabled="true"'


def node(tag: str, name: str = "", text: str = "", states: str = SHOWN, place: str = "") -> str:
    where = place or 'cp:screencoord="(10, 20)" cp:size="(30, 40)"'
    return f'<{tag} name="{name}" {states} {where}>{text}</{tag}>'


def tree(*children: str) -> str:
    return f'<desktop-frame {NS} name="main">{"".join(children)}</desktop-frame>'


def test_visible_interactive_and_textual_nodes_are_kept_with_their_columns() -> None:
    xml = tree(
        node("push-button", "Save"),
        node("paragraph", text="First line\nsecond\tline"),
        node("table-cell", "B3", "42", place='cp:screencoord="(100, 200)" cp:size="(62, 20)"'),
    )
    lines = linearize_tree(xml).splitlines()
    assert lines[0] == HEADER
    assert lines[1] == "push-button\tSave\t\t\t\t(10, 20)\t(30, 40)"
    assert lines[2] == "paragraph\t\tFirst line\\nsecond line\t\t\t(10, 20)\t(30, 40)"
    assert lines[3] == "table-cell\tB3\t42\t\t\t(100, 200)\t(62, 20)"
    (cell,) = find_nodes(xml, tag="table-cell", name="B3")
    assert cell.center == (131, 210)


@pytest.mark.parametrize(
    "left_out",
    [
        node("push-button", "Hidden", states='st:visible="true" st:enabled="true"'),
        node("push-button", "Invisible", states='st:showing="true" st:enabled="true"'),
        node("push-button", "Disabled", states='st:visible="true" st:showing="true"'),
        node("panel", "A container role"),
        node("push-button"),  # neither name nor text
        node("push-button", "Flat", place='cp:screencoord="(10, 20)" cp:size="(0, 40)"'),
        node("push-button", "Off screen", place='cp:screencoord="(-5, 20)" cp:size="(9, 9)"'),
        node("push-button", "Unplaced", place=" "),
    ],
)
def test_nodes_nobody_can_see_or_use_are_left_out(left_out: str) -> None:
    assert list(tree_nodes(tree(left_out))) == []


def test_editable_entries_show_their_value_when_they_have_no_text() -> None:
    states = 'st:visible="true" st:showing="true" st:editable="true"'
    xml = tree(
        f'<entry name="Zoom" {states} val:value="75" cp:screencoord="(1, 2)" cp:size="(3, 4)"/>'
    )
    (entry,) = tree_nodes(xml)
    assert entry.text == "75"


def test_the_budget_cuts_at_a_whole_line_and_says_so() -> None:
    xml = tree(*(node("paragraph", text=f"paragraph number {n:03d}") for n in range(200)))
    whole = linearize_tree(xml, token_budget=None).splitlines()
    assert len(whole) == 201
    cut = linearize_tree(xml, token_budget=100).splitlines()
    assert cut[-1] == TRIMMED_MARK
    kept = cut[:-1]
    assert kept == whole[: len(kept)]
    assert len("\n".join(kept)) <= 100 * CHARACTERS_PER_TOKEN
    assert len("\n".join(whole[: len(kept) + 1])) > 100 * CHARACTERS_PER_TOKEN - len(kept)


def _blank_png(width: int = 200, height: int = 120) -> bytes:
    output = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(output, format="PNG")
    return output.getvalue()


def test_set_of_marks_numbers_the_listed_nodes_and_boxes_them_on_the_screen() -> None:
    xml = tree(
        node("push-button", "Save", place='cp:screencoord="(20, 40)" cp:size="(60, 30)"'),
        node("paragraph", text="Body", place='cp:screencoord="(100, 60)" cp:size="(80, 40)"'),
    )
    marked = linearized(xml, numbered=True)
    lines = marked.text.splitlines()
    assert lines[0] == MARKED_HEADER
    assert lines[1] == "1\tpush-button\tSave\t\t\t\t(20, 40)\t(60, 30)"
    assert lines[2].startswith("2\tparagraph\t\tBody\t")
    # Without numbers the lines are the plain linearised tree's.
    assert linearized(xml).text == linearize_tree(xml)

    with Image.open(io.BytesIO(mark_screenshot(_blank_png(), marked.nodes))) as image:
        picture = image.convert("RGB")
    first, second = (Image.new("RGB", (1, 1), c).getpixel((0, 0)) for c in MARK_COLOURS[:2])
    # Each box's left edge, well below its number tab, has its own colour; inside stays white.
    assert picture.getpixel((20, 60)) == first
    assert picture.getpixel((100, 90)) == second
    assert picture.getpixel((50, 60)) == (255, 255, 255)
    assert picture.getpixel((150, 5)) == (255, 255, 255)  # nothing drawn away from the nodes


def test_set_of_marks_marks_only_what_the_budget_lists() -> None:
    xml = tree(*(node("paragraph", text=f"paragraph number {n:03d}") for n in range(200)))
    marked = linearized(xml, token_budget=100, numbered=True)
    lines = marked.text.splitlines()
    assert lines[-1] == TRIMMED_MARK
    assert len(marked.nodes) == len(lines) - 2  # header and trim mark
    assert lines[-2].startswith(f"{len(marked.nodes)}\t")
