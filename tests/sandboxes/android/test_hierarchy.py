"""uiautomator dumps: parsing, refusing broken dumps, exporting, the targetable element list."""

from __future__ import annotations

import json

import pytest

from sandboxes.android.hierarchy import (
    Bounds,
    HierarchyError,
    UIElement,
    hierarchy_xml,
    parse_bounds,
    parse_hierarchy,
    render_elements,
    ui_elements,
)

DUMP = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">
<node index="0" text="" resource-id="" class="android.widget.FrameLayout"
 package="net.gsantner.markor"
 content-desc="" checkable="false" checked="false" clickable="false" enabled="true"
  focusable="false"
 focused="false" scrollable="false" long-clickable="false" password="false" selected="false"
 bounds="[0,0][1080,2400]">
  <node index="0" text="Markor" resource-id="net.gsantner.markor:id/toolbar_title"
   class="android.widget.TextView" package="net.gsantner.markor" content-desc=""
    checkable="false"
   checked="false" clickable="false" enabled="true" focusable="false" focused="false"
   scrollable="false" long-clickable="false" password="false" selected="false"
   bounds="[42,96][300,170]" />
  <node index="1" text="" resource-id="" class="android.widget.LinearLayout"
   package="net.gsantner.markor"
   content-desc="" checkable="false" checked="false" clickable="false" enabled="true"
   focusable="false" focused="false" scrollable="false" long-clickable="false" password="false"
   selected="false" bounds="[0,200][1080,2000]">
    <node index="0" text="" resource-id="net.gsantner.markor:id/fab"
     class="android.widget.ImageButton"
     package="net.gsantner.markor" content-desc="Create a new file or folder" checkable="false"
     checked="false" clickable="true" enabled="true" focusable="true" focused="false"
     scrollable="false" long-clickable="true" password="false" selected="false"
     bounds="[880,1850][1021,1991]" />
    <node index="1" text="" resource-id="" class="android.widget.EditText"
     package="net.gsantner.markor"
     content-desc="" checkable="false" checked="false" clickable="true" enabled="true"
      focusable="true"
     focused="true" scrollable="false" long-clickable="false" password="false" selected="false"
     bounds="[84,812][996,920]" hint="Name" />
    <node index="2" text="hidden" resource-id="" class="android.widget.TextView" package="p"
     content-desc="" clickable="false" bounds="[10,10][10,50]" />
  </node>
  <node index="2" text="" resource-id="" class="android.widget.Switch"
   package="com.android.settings"
   content-desc="" checkable="true" checked="true" clickable="true" enabled="false"
    focusable="true"
   focused="false" scrollable="false" long-clickable="false" password="false" selected="false"
   bounds="[900,2100][1040,2180]" />
</node>
</hierarchy>"""


def test_a_dump_parses_into_nodes_in_document_order() -> None:
    nodes = parse_hierarchy(DUMP)
    assert [node.class_name.rsplit(".", 1)[1] for node in nodes] == [
        "FrameLayout",
        "TextView",
        "LinearLayout",
        "ImageButton",
        "EditText",
        "TextView",
        "Switch",
    ]
    assert [node.depth for node in nodes] == [1, 2, 2, 3, 3, 3, 2]
    fab = nodes[3]
    assert fab.content_desc == "Create a new file or folder"
    assert fab.resource_id == "net.gsantner.markor:id/fab"
    assert fab.bounds == Bounds(left=880, top=1850, right=1021, bottom=1991)
    assert fab.bounds.centre == (950, 1920)  # (880 + 1021) // 2, (1850 + 1991) // 2
    assert fab.flag("clickable")
    assert fab.flag("long-clickable")
    assert not fab.flag("checked")
    assert nodes[4].hint == "Name"
    assert nodes[4].editable
    assert nodes[4].flag("focused")
    assert nodes[6].flag("checked")
    assert not nodes[6].flags["enabled"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        (DUMP[: len(DUMP) // 2], "not well-formed XML"),
        ("<html><body/></html>", "root is <html>"),
        ("<hierarchy rotation='0'></hierarchy>", "holds no node"),
        ("<hierarchy><node bounds='[1,2][3]'/></hierarchy>", r"node 0: bounds '\[1,2\]\[3\]'"),
        ("ERROR: could not get idle state.", "not well-formed XML"),
    ],
)
def test_broken_dumps_are_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(HierarchyError, match=message):
        parse_hierarchy(text)


def test_bounds_notation() -> None:
    assert parse_bounds("[0,0][1080,2400]").area == 1080 * 2400
    assert parse_bounds(" [5,6][7,8] ").text() == "[5,6][7,8]"
    assert parse_bounds("[10,10][10,50]").area == 0
    with pytest.raises(HierarchyError):
        parse_bounds("0,0,10,10")


def test_export_round_trips_structure_and_attributes() -> None:
    nodes = parse_hierarchy(DUMP)
    again = parse_hierarchy(hierarchy_xml(nodes))
    # Nodes that carry every attribute come back equal; the one written with only ``clickable``
    # comes back with the others spelled out (enabled by default, the rest false).
    assert again[:5] == nodes[:5]
    assert again[6] == nodes[6]
    assert again[5].model_copy(update={"flags": nodes[5].flags}) == nodes[5]
    assert again[5].flags["enabled"]
    assert not again[5].flags["scrollable"]
    assert parse_hierarchy(hierarchy_xml(again)) == again
    assert hierarchy_xml(nodes).startswith("<?xml version='1.0' encoding='UTF-8'")


def test_export_nests_by_depth() -> None:
    box = Bounds(left=0, top=0, right=10, bottom=10)
    nodes = [
        UIElement(class_name="a", bounds=box, depth=1),
        UIElement(class_name="b", bounds=box, depth=2),
        UIElement(class_name="c", bounds=box, depth=3),
        UIElement(class_name="d", bounds=box, depth=2),
        UIElement(class_name="e", bounds=box, depth=1),
    ]
    xml = hierarchy_xml(nodes)
    assert [node.depth for node in parse_hierarchy(xml)] == [1, 2, 3, 2, 1]
    assert xml.count('index="1"') == 2  # d is b's sibling, e is a's


def test_the_element_list_keeps_what_an_agent_can_address() -> None:
    elements = ui_elements(parse_hierarchy(DUMP))
    # The bare layouts and the zero-width text go; text, a described button, a field and a
    # switch stay, in document order.
    assert [element.class_name.rsplit(".", 1)[1] for element in elements] == [
        "TextView",
        "ImageButton",
        "EditText",
        "Switch",
    ]


def test_rendered_elements_say_what_is_set() -> None:
    lines = render_elements(ui_elements(parse_hierarchy(DUMP))).splitlines()
    assert len(lines) == 4
    assert lines[1].startswith("UI element 1: ")
    fab = json.loads(lines[1].split(": ", 1)[1])
    assert fab == {
        "index": 1,
        "content_description": "Create a new file or folder",
        "class_name": "android.widget.ImageButton",
        "resource_name": "net.gsantner.markor:id/fab",
        "bbox_pixels": [880, 1850, 1021, 1991],
        "is_clickable": True,
        "is_long_clickable": True,
    }
    field = json.loads(lines[2].split(": ", 1)[1])
    assert field["hint_text"] == "Name"
    assert field["is_editable"] is True
    switch = json.loads(lines[3].split(": ", 1)[1])
    assert switch["is_checked"] is True
    assert switch["is_enabled"] is False
