"""Where LibreOffice's widgets are drawn, read off an accessibility tree in OSWorld's XML.

Pure standard library, so both sides use it: the control server corrects the trees it writes,
and the runtime's client corrects trees from servers that do not (OSWorld's own). The
correction finds nothing to move in a tree already corrected, so applying it twice is harmless.
"""

from __future__ import annotations

from xml.etree import ElementTree

NAMESPACES = {
    "st": "https://accessibility.ubuntu.example.org/ns/state",
    "attr": "https://accessibility.ubuntu.example.org/ns/attributes",
    "cp": "https://accessibility.ubuntu.example.org/ns/component",
    "doc": "https://accessibility.ubuntu.example.org/ns/document",
    "txt": "https://accessibility.ubuntu.example.org/ns/text",
    "val": "https://accessibility.ubuntu.example.org/ns/value",
}
"""The XML namespaces of OSWorld's Linux tree, by the prefix it uses."""

COMPONENT_NS = NAMESPACES["cp"]
ATTRIBUTE_NS = NAMESPACES["attr"]

for _prefix, _uri in NAMESPACES.items():
    ElementTree.register_namespace(_prefix, _uri)


def _q(namespace: str, name: str) -> str:
    return f"{{{namespace}}}{name}"


def _pair(element: ElementTree.Element, name: str) -> tuple[int, int] | None:
    text = element.get(_q(COMPONENT_NS, name))
    if not text:
        return None
    try:
        first, second = text.strip("()").split(",")
        return int(float(first)), int(float(second))
    except ValueError:
        return None


def correct_native_menu_offset(root: ElementTree.Element) -> int:
    """Move LibreOffice's own widgets to where they are drawn; returns how many root panes moved.

    With the GTK3 plugin, a LibreOffice window is a GTK frame holding a native menu bar and a
    GTK panel that shows LibreOffice's own widgets (its ``root-pane``: toolbars, the document,
    cells). Those widgets report positions as if the native menu bar were not there: the root
    pane claims the menu bar's top, while the GTK panel of the same size, which draws it, sits
    a menu bar's height lower. Each root pane's subtree is shifted by the difference.
    """
    moved = 0
    for frame in root.iter("frame"):
        native = [
            (size, position)
            for element in frame.iter("panel")
            if element.get(_q(ATTRIBUTE_NS, "toolkit")) == "gtk"
            and (size := _pair(element, "size")) is not None
            and (position := _pair(element, "screencoord")) is not None
        ]
        for pane in frame.iter("root-pane"):
            if pane.get(_q(ATTRIBUTE_NS, "toolkit")) == "gtk":
                continue
            size, position = _pair(pane, "size"), _pair(pane, "screencoord")
            drawn = next((where for extent, where in native if extent == size), None)
            if size is None or position is None or drawn is None or drawn == position:
                continue
            dx, dy = drawn[0] - position[0], drawn[1] - position[1]
            moved += 1
            for element in pane.iter():
                place = _pair(element, "screencoord")
                if place is not None:
                    element.set(
                        _q(COMPONENT_NS, "screencoord"), f"({place[0] + dx}, {place[1] + dy})"
                    )
    return moved


def corrected_tree(xml: str) -> str:
    """``xml`` with LibreOffice's widgets moved to where they are drawn (see above); the text
    unchanged when nothing needed moving or it is no XML."""
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError:
        return xml
    if not correct_native_menu_offset(root):
        return xml
    return ElementTree.tostring(root, encoding="unicode")
