"""What a desktop shows: PNG screenshots, the accessibility tree (OSWorld's XML) and its
linearised form, as OSWorld's agents read it.

The linearised tree is tab-separated, one node per line under the header ``tag, name, text,
class, description, position (top-left x&y), size (w&h)``. It keeps the nodes a user could see
and use: visible and showing, enabled (or editable, expandable, checkable), of an interactive or
textual role, with a name or text, placed on screen with a positive size. It is trimmed to a
token budget (counted as about four characters a token), cut at a line.

Set-of-marks (``som``) numbers those same nodes: each gets a box and its number drawn on the
screenshot, and the linearised tree gains a leading ``index`` column with that number, so a
reader can name a mark on the picture and find its node (and where to click) in the text.
"""

from __future__ import annotations

import asyncio
import io
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal
from xml.etree import ElementTree

from pydantic import BaseModel, ConfigDict

from sandboxes.desktop.client import DesktopClient

STATE_NS = "https://accessibility.ubuntu.example.org/ns/state"
ATTRIBUTE_NS = "https://accessibility.ubuntu.example.org/ns/attributes"
COMPONENT_NS = "https://accessibility.ubuntu.example.org/ns/component"
VALUE_NS = "https://accessibility.ubuntu.example.org/ns/value"

ObservationKind = Literal["screenshot", "a11y_tree", "screenshot_a11y_tree", "som"]
"""OSWorld's observation types: the screen, the tree, both, or set-of-marks (the screen with the
tree's nodes boxed and numbered, and the tree numbered alike)."""

DEFAULT_TOKEN_BUDGET = 10_000
"""Tokens the linearised tree may take (OSWorld's agents cut theirs near this size)."""

CHARACTERS_PER_TOKEN = 4
"""The rough size of a token, used to count the budget without a tokenizer."""

HEADER = "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)"
"""The first line of a linearised tree."""

MARKED_HEADER = f"index\t{HEADER}"
"""The first line of a set-of-marks tree: the mark's number, then the usual columns."""

TRIMMED_MARK = "[... more nodes left out: token budget reached ...]"
"""The last line of a linearised tree that was cut."""

MARK_COLOURS = ("#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#008080", "#9a6324")
"""Box colours of set-of-marks, cycled so neighbouring marks tell apart."""

_ROLE_SUFFIXES = (
    "item", "button", "heading", "label", "scrollbar", "searchbox", "textbox", "link",
    "tabelement", "textfield", "textarea", "menu",
)  # fmt: skip
_ROLES = frozenset(
    {"alert", "canvas", "check-box", "combo-box", "entry", "icon", "image", "paragraph",
     "scroll-bar", "section", "slider", "static", "table-cell", "terminal", "text", "page-tab",
     "radio-button", "spin-button", "toggle-button", "push-button", "list", "tree-table"}
)  # fmt: skip
_VALUE_ROLES = frozenset({"entry", "spin-button", "text", "combo-box", "slider", "scroll-bar"})


def _state(element: ElementTree.Element, name: str) -> bool:
    return element.get(f"{{{STATE_NS}}}{name}") == "true"


def _pair(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        first, second = text.strip("()").split(",")
        return int(first), int(second)
    except ValueError:
        return None


@dataclass(frozen=True)
class TreeNode:
    """One node of the tree as the linearised form shows it."""

    tag: str
    """The role, dashed (``table-cell``)."""
    name: str
    """The accessible name."""
    text: str
    """Its text (or value, for entries), newlines written as ``\\n``."""
    klass: str
    """Its ``class`` attribute, when the toolkit gives one."""
    description: str
    """Its description."""
    position: tuple[int, int]
    """Top-left corner on screen."""
    size: tuple[int, int]
    """Width and height."""

    @property
    def center(self) -> tuple[int, int]:
        """The middle of the node: where a click on it lands."""
        return self.position[0] + self.size[0] // 2, self.position[1] + self.size[1] // 2

    def line(self) -> str:
        """The node as one tab-separated line."""
        fields = (self.tag, self.name, self.text, self.klass, self.description)
        cleaned = [field.replace("\t", " ").replace("\n", "\\n") for field in fields]
        x, y = self.position
        w, h = self.size
        return "\t".join([*cleaned, f"({x}, {y})", f"({w}, {h})"])


def _keeps(element: ElementTree.Element) -> bool:
    tag = element.tag
    if not (tag.startswith("document") or tag.endswith(_ROLE_SUFFIXES) or tag in _ROLES):
        return False
    if not (_state(element, "visible") and _state(element, "showing")):
        return False
    return any(
        _state(element, state) for state in ("enabled", "editable", "expandable", "checkable")
    )


def normalised_number(text: str) -> str:
    """A numeric value as this project's control server writes it (``%g``), whatever server
    wrote it: OSWorld's writes Python's ``str(float)`` (``0.0``, ``12.5``, ``1234567.0``), ours
    ``0``, ``12.5``, ``1.23457e+06``; text that is no number is returned as it is."""
    try:
        value = float(text)
    except ValueError:
        return text
    return f"{value:g}" if math.isfinite(value) else text


def _text(element: ElementTree.Element) -> str:
    text = element.text or ""
    if not text and element.tag in _VALUE_ROLES:
        text = normalised_number(element.get(f"{{{VALUE_NS}}}value", ""))
    return text.strip("\n")


def tree_nodes(xml: str) -> Iterator[TreeNode]:
    """The nodes of an accessibility tree (OSWorld XML) a linearised tree shows, in document
    order."""
    root = ElementTree.fromstring(xml)
    for element in root.iter():
        if not isinstance(element.tag, str) or not _keeps(element):
            continue
        name = element.get("name", "")
        text = _text(element)
        if not (name or text):
            continue
        position = _pair(element.get(f"{{{COMPONENT_NS}}}screencoord"))
        size = _pair(element.get(f"{{{COMPONENT_NS}}}size"))
        if position is None or size is None or position[0] < 0 or position[1] < 0:
            continue
        if size[0] <= 0 or size[1] <= 0:
            continue
        yield TreeNode(
            tag=element.tag,
            name=name,
            text=text,
            klass=element.get(f"{{{ATTRIBUTE_NS}}}class", ""),
            description=element.get(f"{{{ATTRIBUTE_NS}}}description", ""),
            position=position,
            size=size,
        )


def find_nodes(
    xml: str,
    *,
    tag: str | None = None,
    name: str | None = None,
    text_contains: str | None = None,
) -> list[TreeNode]:
    """The linearised tree's nodes with this tag, exact name and text fragment (all optional)."""
    return [
        node
        for node in tree_nodes(xml)
        if (tag is None or node.tag == tag)
        and (name is None or node.name == name)
        and (text_contains is None or text_contains in node.text)
    ]


@dataclass(frozen=True)
class LinearizedTree:
    """A tree's kept nodes cut to a token budget, and its text."""

    nodes: list[TreeNode]
    """The nodes listed, in order (a set-of-marks tree numbers them from 1)."""
    text: str
    """The header, one line per node, and ``TRIMMED_MARK`` when nodes were left out."""


def linearized(
    xml: str, *, token_budget: int | None = DEFAULT_TOKEN_BUDGET, numbered: bool = False
) -> LinearizedTree:
    """The kept nodes of ``xml`` that fit ``token_budget`` (None: all) and their text;
    ``numbered`` adds the set-of-marks ``index`` column."""
    header = MARKED_HEADER if numbered else HEADER
    budget = None if token_budget is None else token_budget * CHARACTERS_PER_TOKEN
    used = len(header) + 1
    nodes: list[TreeNode] = []
    lines = [header]
    for node in tree_nodes(xml):
        line = node.line()
        if numbered:
            line = f"{len(nodes) + 1}\t{line}"
        if budget is not None and used + len(line) + 1 > budget:
            lines.append(TRIMMED_MARK)
            break
        nodes.append(node)
        lines.append(line)
        used += len(line) + 1
    return LinearizedTree(nodes=nodes, text="\n".join(lines))


def linearize_tree(xml: str, *, token_budget: int | None = DEFAULT_TOKEN_BUDGET) -> str:
    """The tree as OSWorld's agents read it: a header and one tab-separated line per kept node,
    cut at the last whole line that fits ``token_budget`` (None: no limit)."""
    return linearized(xml, token_budget=token_budget).text


def mark_screenshot(png: bytes, nodes: Sequence[TreeNode]) -> bytes:
    """The screenshot with each node boxed and numbered (from 1, in order), as PNG."""
    from PIL import Image, ImageDraw

    with Image.open(io.BytesIO(png)) as opened:
        image = opened.convert("RGB")
    draw = ImageDraw.Draw(image)
    for number, node in enumerate(nodes, start=1):
        colour = MARK_COLOURS[(number - 1) % len(MARK_COLOURS)]
        x, y = node.position
        w, h = node.size
        draw.rectangle((x, y, x + w - 1, y + h - 1), outline=colour, width=2)
        label = str(number)
        left, top, right, bottom = draw.textbbox((0, 0), label)
        # The number sits on a filled tab at the box's top-left corner, inside the screen.
        tab_x, tab_y = max(x, 0), max(y - (bottom - top) - 4, 0)
        tab = (tab_x, tab_y, tab_x + right - left + 4, tab_y + bottom - top + 4)
        draw.rectangle(tab, fill=colour)
        draw.text((tab_x + 2 - left, tab_y + 2 - top), label, fill="white")
    output = io.BytesIO()
    image.save(output, format="PNG", optimize=False, compress_level=1)
    return output.getvalue()


class Observation(BaseModel):
    """One observation of a desktop, in the parts its kind asks for."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    kind: ObservationKind
    """What was observed."""
    screenshot: bytes | None = None
    """The screen as PNG bytes (screenshot kinds)."""
    accessibility_tree: str | None = None
    """The whole tree as OSWorld's XML (tree kinds)."""
    linearized_tree: str | None = None
    """The tree linearised and trimmed to the token budget (tree kinds)."""


async def observe(
    client: DesktopClient,
    kind: ObservationKind = "screenshot_a11y_tree",
    *,
    token_budget: int | None = DEFAULT_TOKEN_BUDGET,
) -> Observation:
    """Take one observation of the desktop behind ``client``. For ``som`` the screenshot carries
    the marks of the nodes the (numbered) linearised tree lists."""
    screenshot = await client.screenshot() if kind != "a11y_tree" else None
    xml = await client.accessibility_tree() if kind != "screenshot" else None
    tree = linearized(xml, token_budget=token_budget, numbered=kind == "som") if xml else None
    if kind == "som" and screenshot is not None and tree is not None:
        screenshot = await asyncio.to_thread(mark_screenshot, screenshot, tree.nodes)
    return Observation(
        kind=kind,
        screenshot=screenshot,
        accessibility_tree=xml,
        linearized_tree=tree.text if tree is not None else None,
    )
