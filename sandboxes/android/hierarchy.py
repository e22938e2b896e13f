"""UI hierarchies in uiautomator's XML shape: parsing, validating, and the numbered element list.

Owns ``UIElement`` (one node of a dump: bounds, class, text, flags), ``parse_hierarchy`` (a dump's
XML to its nodes, refusing what is not a complete ``<hierarchy>`` document: ``uiautomator dump``
sometimes exits 0 and leaves half a file or an old one), ``hierarchy_xml`` (nodes back to XML,
which the Chromium backend uses to export a web page in the same shape), ``ui_elements`` (the
elements an agent may target by index) and ``render_elements`` (their text form, one per line).
Pure: nothing here touches a device.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from xml.etree import ElementTree

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Bounds",
    "HierarchyError",
    "UIElement",
    "hierarchy_xml",
    "parse_bounds",
    "parse_hierarchy",
    "render_elements",
    "ui_elements",
]

_BOUNDS = re.compile(r"^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$")

_FLAGS = (
    "checkable",
    "checked",
    "clickable",
    "enabled",
    "focusable",
    "focused",
    "scrollable",
    "long-clickable",
    "password",
    "selected",
)
"""The boolean attributes of a uiautomator node, in the order the tool writes them."""


class HierarchyError(ValueError):
    """A dump that is not a usable UI hierarchy (empty, cut short, not XML, no nodes)."""


class Bounds(BaseModel):
    """A node's rectangle on the screen in pixels: left, top (inclusive), right, bottom."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    left: int
    """Left edge."""
    top: int
    """Top edge."""
    right: int
    """Right edge (exclusive)."""
    bottom: int
    """Bottom edge (exclusive)."""

    @property
    def centre(self) -> tuple[int, int]:
        """The point a tap on this node aims at (integer pixels, rounded down)."""
        return (self.left + self.right) // 2, (self.top + self.bottom) // 2

    @property
    def area(self) -> int:
        """Width times height; 0 for an empty or inverted rectangle."""
        return max(0, self.right - self.left) * max(0, self.bottom - self.top)

    def text(self) -> str:
        """uiautomator's notation, ``[x1,y1][x2,y2]``."""
        return f"[{self.left},{self.top}][{self.right},{self.bottom}]"


def parse_bounds(value: str) -> Bounds:
    """``[x1,y1][x2,y2]`` as ``Bounds``; anything else raises ``HierarchyError``."""
    match = _BOUNDS.match(value.strip())
    if match is None:
        raise HierarchyError(f"bounds {value!r} are not of the form [x1,y1][x2,y2]")
    left, top, right, bottom = (int(group) for group in match.groups())
    return Bounds(left=left, top=top, right=right, bottom=bottom)


class UIElement(BaseModel):
    """One node of a UI hierarchy, with the attributes uiautomator writes."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    class_name: str = ""
    """The widget class (``android.widget.Button``)."""
    text: str = ""
    """The text it shows."""
    content_desc: str = ""
    """Its accessibility description (an icon's label)."""
    resource_id: str = ""
    """Its resource name (``com.example:id/save``), or empty."""
    package: str = ""
    """The app it belongs to."""
    bounds: Bounds
    """Where it is on the screen, in pixels."""
    flags: dict[str, bool] = Field(default_factory=dict)
    """The boolean attributes (``clickable``, ``checked``, ``enabled``, ...) as written."""
    hint: str = ""
    """A text field's hint (``hint`` attribute of newer dumps), when present."""
    depth: int = 0
    """How deep the node sits in the tree (the root's children are at 1)."""

    def flag(self, name: str) -> bool:
        """The boolean attribute ``name`` (False when absent)."""
        return self.flags.get(name, False)

    @property
    def editable(self) -> bool:
        """Whether text can be typed into it (an ``EditText`` or subclass)."""
        return "EditText" in self.class_name or "AutoCompleteTextView" in self.class_name

    @property
    def targetable(self) -> bool:
        """Whether an agent would address it: it has area and shows or names something, or it
        reacts to touch (tap, long press, scroll, check, typing)."""
        if self.bounds.area == 0:
            return False
        reacts = any(
            self.flag(name) for name in ("clickable", "long-clickable", "scrollable", "checkable")
        )
        return bool(self.text or self.content_desc or self.editable or reacts)


def parse_hierarchy(xml_text: str) -> list[UIElement]:
    """Every ``node`` of a uiautomator dump, in document order (pre-order).

    Raises ``HierarchyError`` when the text is empty, is not well-formed XML (a dump cut short),
    has another root than ``<hierarchy>``, holds no node, or has a node with bad bounds.
    """
    if not xml_text.strip():
        raise HierarchyError("the UI dump is empty")
    try:
        root = ElementTree.fromstring(xml_text)
    except ElementTree.ParseError as error:
        raise HierarchyError(f"the UI dump is not well-formed XML: {error}") from None
    if root.tag != "hierarchy":
        raise HierarchyError(f"the UI dump's root is <{root.tag}>, not <hierarchy>")
    elements: list[UIElement] = []

    def visit(node: ElementTree.Element, depth: int) -> None:
        for child in node:
            if child.tag != "node":
                continue
            attributes = child.attrib
            try:
                bounds = parse_bounds(attributes.get("bounds", ""))
            except HierarchyError as error:
                raise HierarchyError(f"node {len(elements)}: {error}") from None
            elements.append(
                UIElement(
                    class_name=attributes.get("class", ""),
                    text=attributes.get("text", ""),
                    content_desc=attributes.get("content-desc", ""),
                    resource_id=attributes.get("resource-id", ""),
                    package=attributes.get("package", ""),
                    bounds=bounds,
                    flags={
                        name: attributes[name] == "true" for name in _FLAGS if name in attributes
                    },
                    hint=attributes.get("hint", ""),
                    depth=depth,
                )
            )
            visit(child, depth + 1)

    visit(root, 1)
    if not elements:
        raise HierarchyError("the UI dump holds no node")
    return elements


def hierarchy_xml(elements: Sequence[UIElement], *, rotation: int = 0) -> str:
    """A uiautomator-shaped document of ``elements`` (pre-order, nesting by ``depth``)."""
    root = ElementTree.Element("hierarchy", rotation=str(rotation))
    stack: list[ElementTree.Element] = [root]
    for element in elements:
        depth = max(1, min(element.depth, len(stack)))
        del stack[depth:]
        parent = stack[-1]
        attributes = {
            "index": str(len(parent)),
            "text": element.text,
            "resource-id": element.resource_id,
            "class": element.class_name,
            "package": element.package,
            "content-desc": element.content_desc,
        }
        attributes.update({name: _flag_text(element, name) for name in _FLAGS})
        attributes["bounds"] = element.bounds.text()
        if element.hint:
            attributes["hint"] = element.hint
        node = ElementTree.SubElement(parent, "node", attributes)
        stack.append(node)
    body = ElementTree.tostring(root, encoding="unicode")
    return "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>" + body


def _flag_text(element: UIElement, name: str) -> str:
    default = name == "enabled"
    return "true" if element.flags.get(name, default) else "false"


def ui_elements(nodes: Iterable[UIElement]) -> list[UIElement]:
    """The nodes an agent targets by index: the ``targetable`` ones, in document order. Index
    ``i`` of an ``click``/``long_press``/``input_text`` action names ``ui_elements(...)[i]``."""
    return [node for node in nodes if node.targetable]


def render_elements(elements: Sequence[UIElement]) -> str:
    """One line per element, ``UI element <i>: {...}`` (AndroidWorld's wording of its element
    list), with only the attributes that say something: text, description, hint, class,
    resource name, ``bbox_pixels`` (left, top, right, bottom) and the flags that are set."""
    lines = []
    for index, element in enumerate(elements):
        fields: dict[str, object] = {"index": index}
        if element.text:
            fields["text"] = element.text
        if element.content_desc:
            fields["content_description"] = element.content_desc
        if element.hint:
            fields["hint_text"] = element.hint
        fields["class_name"] = element.class_name
        if element.resource_id:
            fields["resource_name"] = element.resource_id
        bounds = element.bounds
        fields["bbox_pixels"] = [bounds.left, bounds.top, bounds.right, bounds.bottom]
        for name in ("clickable", "long-clickable", "scrollable", "checkable", "checked"):
            if element.flag(name):
                fields[f"is_{name.replace('-', '_')}"] = True
        if element.editable:
            fields["is_editable"] = True
        if not element.flags.get("enabled", True):
            fields["is_enabled"] = False
        lines.append(f"UI element {index}: {json.dumps(fields, ensure_ascii=False)}")
    return "\n".join(lines)
