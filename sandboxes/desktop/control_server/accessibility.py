"""The desktop's accessibility tree (AT-SPI) as OSWorld's XML.

Each accessible becomes an element whose tag is its role with spaces as dashes (``push-button``,
``table-cell``), under a ``desktop-frame`` root. Its name is the ``name`` attribute; states are
``st:<state>="true"``; object attributes ``attr:<key>``; position and size on screen
``cp:screencoord="(x, y)"`` and ``cp:size="(w, h)"``; a numeric value ``val:value``; the
text of text-bearing nodes is the element's text. The namespace URIs are OSWorld's, so its own
tools read this XML too.

Three bounds keep the walk fast on LibreOffice. A node that is not showing is written with its
role, name and states only, and its children are not walked. A menu whose first item is hidden
is closed: only that item is written, with the menu's item count in ``attr:closed-menu-items``
(LibreOffice's closed menus hold hundreds of hidden items). A large table (a Calc sheet exposes
every one of its cells) is walked over its visible cells only, found by asking the table which
cells sit at the corners of its visible area.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any
from xml.etree import ElementTree

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402 - gi needs the version chosen first

from .tree_geometry import NAMESPACES, correct_native_menu_offset  # noqa: E402

# libatspi 2.46 marks its interface getters deprecated without a replacement in PyGObject.
warnings.filterwarnings("ignore", category=DeprecationWarning, module=__name__)

MAX_DEPTH = 50
"""Nodes deeper than this are left out."""

MAX_CHILDREN = 1024
"""At most this many children of one node are walked."""

MAX_NODES = 50_000
"""The walk stops after this many nodes (a runaway tree cannot stall the server)."""

LARGE_TABLE_CELLS = 2_000
"""Tables with more children than this are walked over their visible cells only."""

MAX_TEXT_CHARACTERS = 10_000
"""Text longer than this is cut (a node's text, not the whole tree's)."""

_ALWAYS_WALKED = {"desktop frame", "application"}
"""Roles whose children are walked although these nodes never report ``showing``."""

_OSWORLD_ROLE_NAMES = {"button": "push button"}
"""Roles that newer AT-SPI (2.52 and later, as in Debian trixie's desktop image) names otherwise
than the AT-SPI of OSWorld's Ubuntu image: given their older names, so that trees compare with
recorded ones and match the same queries on every backend."""

_lock = threading.Lock()
_initialised = False


def _q(prefix: str, name: str) -> str:
    return f"{{{NAMESPACES[prefix]}}}{name}"


def _init() -> None:
    global _initialised  # noqa: PLW0603 - libatspi wants one init per process
    if not _initialised:
        Atspi.init()
        Atspi.set_timeout(2_000, 10_000)
        _initialised = True


class _Walk:
    def __init__(self, screen: tuple[int, int]) -> None:
        self.screen = screen
        self.nodes = 0

    def element(self, node: Any, depth: int) -> ElementTree.Element | None:
        if self.nodes >= MAX_NODES:
            return None
        self.nodes += 1
        try:
            role = node.get_role_name() or "unknown"
        except Exception:  # the node vanished between listing and reading
            return None
        role = _OSWORLD_ROLE_NAMES.get(role, role)
        element = ElementTree.Element(role.replace(" ", "-"))
        states = self._states(node, element)
        showing = "showing" in states or role in _ALWAYS_WALKED
        if showing:
            self._fill(node, element)
        else:  # nobody can see it: its name is enough (linearised trees drop it anyway)
            element.set("name", _safe(node.get_name, "") or "")
        if depth >= MAX_DEPTH or (not showing and depth > 1):
            return element
        table = node.get_table_iface() if role == "table" else None
        count = _safe(node.get_child_count, 0)
        if table is not None and count > LARGE_TABLE_CELLS:
            self._visible_cells(node, table, element)
            return element
        for index in range(min(count, MAX_CHILDREN)):
            child = _safe(lambda i=index: node.get_child_at_index(i))
            if child is None:
                continue
            sub = self.element(child, depth + 1)
            if sub is None:
                continue
            element.append(sub)
            if index == 0 and role == "menu" and sub.get(_q("st", "showing")) != "true":
                element.set(_q("attr", "closed-menu-items"), str(count))
                break  # a closed menu: its items are all hidden
        return element

    def _states(self, node: Any, element: ElementTree.Element) -> set[str]:
        names: set[str] = set()
        state_set = _safe(node.get_state_set)
        for state in state_set.get_states() if state_set is not None else []:
            nick = state.value_nick.replace("-", "_")
            names.add(state.value_nick)
            element.set(_q("st", nick), "true")
        return names

    def _fill(self, node: Any, element: ElementTree.Element) -> None:
        name = _safe(node.get_name, "") or ""
        element.set("name", name)
        description = _safe(node.get_description, "") or ""
        if description:
            element.set(_q("attr", "description"), description)
        attributes = _safe(node.get_attributes, {}) or {}
        for key, value in attributes.items():
            if key and key.replace("-", "").replace("_", "").isalnum():
                element.set(_q("attr", key), str(value))
        if node.get_component_iface() is not None:
            rect = _safe(lambda: node.get_extents(Atspi.CoordType.SCREEN))
            if rect is not None:
                element.set(_q("cp", "screencoord"), f"({rect.x}, {rect.y})")
                element.set(_q("cp", "size"), f"({rect.width}, {rect.height})")
        if node.get_text_iface() is not None:
            count = _safe(lambda: Atspi.Text.get_character_count(node), 0) or 0
            if count > 0:
                end = min(count, MAX_TEXT_CHARACTERS)
                text = _safe(lambda: Atspi.Text.get_text(node, 0, end), "") or ""
                element.text = text.replace("\ufffc", "").replace("\ufffd", "")
        if node.get_value_iface() is not None:
            value = _safe(lambda: Atspi.Value.get_current_value(node))
            if value is not None:
                element.set(_q("val", "value"), f"{value:g}")

    def _visible_cells(self, node: Any, table: Any, element: ElementTree.Element) -> None:
        """Append the cells inside the table's visible area, row by row.

        A sheet is a grid: each column's left edge and width are read once (from the first
        visible row) and each row's top and height once (from the first visible column), and a
        cell's name is its column letters and row number when the first cell's name says the
        table names cells that way (Calc). Each cell then costs three AT-SPI calls (the cell,
        its states, its text) instead of ten."""
        rows = _safe(table.get_n_rows, 0) or 0
        columns = _safe(table.get_n_columns, 0) or 0
        rect = _safe(lambda: node.get_extents(Atspi.CoordType.SCREEN))
        if rect is None or rows <= 0 or columns <= 0:
            return
        left, top = max(rect.x, 0), max(rect.y, 0)
        right = min(rect.x + rect.width, self.screen[0]) - 2
        bottom = min(rect.y + rect.height, self.screen[1]) - 2
        first = self._cell_position(node, table, left + 1, top + 1) or (0, 0)
        last = self._cell_position(node, table, right, bottom)
        if last is None:
            last = (min(rows, first[0] + 60) - 1, min(columns, first[1] + 30) - 1)
        row_range = range(first[0], min(last[0], rows - 1) + 1)
        column_range = range(first[1], min(last[1], columns - 1) + 1)
        if len(row_range) * len(column_range) > MAX_CHILDREN * 8:
            row_range = row_range[: max(1, MAX_CHILDREN * 8 // max(1, len(column_range)))]
        cells: dict[tuple[int, int], Any] = {}

        def cell_at(row: int, column: int) -> Any:
            if (row, column) not in cells:
                cells[row, column] = _safe(lambda: table.get_accessible_at(row, column))
            return cells[row, column]

        def edges(cell: Any) -> Any:
            return _safe(lambda: cell.get_extents(Atspi.CoordType.SCREEN)) if cell else None

        column_edges = {c: edges(cell_at(row_range.start, c)) for c in column_range}
        row_edges = {r: edges(cell_at(r, column_range.start)) for r in row_range}
        corner = cell_at(row_range.start, column_range.start)
        role = (
            _safe(corner.get_role_name, "table cell") if corner else "table cell"
        ) or "table cell"
        role = _OSWORLD_ROLE_NAMES.get(role, role)
        corner_name = _safe(corner.get_name, "") if corner else ""
        spreadsheet_names = (
            corner_name == f"{_column_letters(column_range.start)}{row_range.start + 1}"
        )
        for row in row_range:
            for column in column_range:
                cell = cell_at(row, column)
                if cell is None or self.nodes >= MAX_NODES:
                    continue
                self.nodes += 1
                child = ElementTree.SubElement(element, role.replace(" ", "-"))
                self._states(cell, child)
                if spreadsheet_names:
                    child.set("name", f"{_column_letters(column)}{row + 1}")
                else:
                    child.set("name", _safe(cell.get_name, "") or "")
                x_edge, y_edge = column_edges.get(column), row_edges.get(row)
                if x_edge is not None and y_edge is not None:
                    child.set(_q("cp", "screencoord"), f"({x_edge.x}, {y_edge.y})")
                    child.set(_q("cp", "size"), f"({x_edge.width}, {y_edge.height})")
                text = _safe(lambda c=cell: Atspi.Text.get_text(c, 0, -1), "") or ""
                if text:
                    child.text = text[:MAX_TEXT_CHARACTERS]

    @staticmethod
    def _cell_position(node: Any, table: Any, x: int, y: int) -> tuple[int, int] | None:
        cell = _safe(lambda: node.get_accessible_at_point(x, y, Atspi.CoordType.SCREEN))
        if cell is None:
            return None
        index = _safe(cell.get_index_in_parent, -1)
        if index is None or index < 0:
            return None
        row = _safe(lambda: table.get_row_at_index(index), -1)
        column = _safe(lambda: table.get_column_at_index(index), -1)
        if row is None or column is None or row < 0 or column < 0:
            return None
        return int(row), int(column)


def _column_letters(index: int) -> str:
    """A spreadsheet column's letters (0 -> A, 26 -> AA)."""
    letters = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        letters = chr(ord("A") + remainder) + letters
    return letters


def _safe(call: Any, default: Any = None) -> Any:
    try:
        return call()
    except Exception:  # AT-SPI answers errors for nodes that went away: treat as missing
        return default


def accessibility_tree_xml(screen: tuple[int, int]) -> str:
    """The whole desktop's accessibility tree as OSWorld's XML (one walk at a time)."""
    with _lock:
        _init()
        desktop = Atspi.get_desktop(0)
        root = _Walk(screen).element(desktop, 0)
    if root is None:
        root = ElementTree.Element("desktop-frame", {"name": "main"})
    correct_native_menu_offset(root)
    return ElementTree.tostring(root, encoding="unicode")
