"""What the client and the tree comparison do with the known behaviour of OSWorld's own control
server (``desktop_env/server/main.py``; listed in ``../shared/real-formats/README.md``).

OSWorld's server cannot run here (it needs its VM's packages), so its documented answers are
served through httpx's ``MockTransport``: a 500 from ``/cursor_position``, 404 for the
endpoints it lacks, the fork's ``/execute`` failing on Linux, a tree whose LibreOffice widgets sit
25 px too high and whose values are written with ``str(float)``.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx2
import pytest

from sandboxes.desktop.client import DesktopClient, DesktopControlError
from sandboxes.desktop.control_server.tree_geometry import corrected_tree
from sandboxes.desktop.observations import normalised_number, tree_nodes

ST = "https://accessibility.ubuntu.example.org/ns/state"
CP = "https://accessibility.ubuntu.example.org/ns/component"
ATTR = "https://accessibility.ubuntu.example.org/ns/attributes"
VAL = "https://accessibility.ubuntu.example.org/ns/value"

SHOWN = 'st:visible="true" st:showing="true" st:enabled="true"'


def _tree(pane_y: int, cell_y: int, value: str = "0.0") -> str:
    """A LibreOffice window as OSWorld's server writes it: a GTK panel drawn at y=25 holding a
    root pane that claims y=``pane_y``, with a cell and a spin button inside."""
    return (
        f'<desktop-frame xmlns:st="{ST}" xmlns:cp="{CP}" xmlns:attr="{ATTR}" xmlns:val="{VAL}">'
        '<frame name="Book.xlsx - LibreOffice Calc">'
        '<panel attr:toolkit="gtk" cp:screencoord="(0, 25)" cp:size="(1920, 1000)">'
        f'<root-pane cp:screencoord="(0, {pane_y})" cp:size="(1920, 1000)">'
        f'<table-cell name="A1" {SHOWN} cp:screencoord="(60, {cell_y})" cp:size="(80, 20)">'
        "Total</table-cell>"
        f'<spin-button name="Zoom" {SHOWN} val:value="{value}" cp:screencoord="(900, 980)"'
        ' cp:size="(60, 20)"/>'
        "</root-pane></panel></frame></desktop-frame>"
    )


def test_the_gtk3_offset_is_corrected_once() -> None:
    fixed = corrected_tree(_tree(pane_y=0, cell_y=200))
    (cell,) = [node for node in tree_nodes(fixed) if node.name == "A1"]
    assert cell.position == (60, 225)
    # A tree already corrected (this project's server) has nothing left to move.
    assert corrected_tree(fixed) == fixed
    assert corrected_tree(_tree(pane_y=25, cell_y=225)) == _tree(pane_y=25, cell_y=225)
    assert corrected_tree("not xml <") == "not xml <"


@pytest.mark.parametrize(
    ("written", "compared"),
    [
        ("0.0", "0"),
        ("0", "0"),
        ("12.5", "12.5"),
        ("100.0", "100"),
        ("1234567.0", "1.23457e+06"),
        ("1.23457e+06", "1.23457e+06"),
        ("-3.0", "-3"),
        ("abc", "abc"),
        ("nan", "nan"),
        ("", ""),
    ],
)
def test_numbers_compare_alike_from_either_server(written: str, compared: str) -> None:
    assert normalised_number(written) == compared


def test_a_value_from_osworlds_tree_reads_as_ours() -> None:
    ours = {node.name: node.text for node in tree_nodes(_tree(25, 225, value="0"))}
    theirs = {node.name: node.text for node in tree_nodes(_tree(25, 225, value="0.0"))}
    assert ours == theirs == {"A1": "Total", "Zoom": "0"}


def _osworld_like(
    handler: Callable[[httpx2.Request], httpx2.Response],
) -> DesktopClient:
    return DesktopClient("http://vm:5000", transport=httpx2.MockTransport(handler))


async def test_endpoints_osworlds_server_lacks_or_fails_are_named() -> None:
    def answer(request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if path == "/cursor_position":
            return httpx2.Response(500, text="Internal Server Error")
        if path == "/execute":
            reason = "module 'subprocess' has no attribute 'CREATE_NO_WINDOW'"
            return httpx2.Response(500, json={"status": "error", "message": reason})
        return httpx2.Response(404, text="Not Found")

    async with _osworld_like(answer) as client:
        with pytest.raises(DesktopControlError, match="cannot tell the pointer's position"):
            await client.cursor_position()
        with pytest.raises(DesktopControlError, match="has no /run_python"):
            await client.run_python("print(1)")
        with pytest.raises(DesktopControlError, match="has no /run_bash_script"):
            await client.run_bash_script("echo 1")
        with pytest.raises(DesktopControlError, match="Windows-only subprocess flag"):
            await client.execute(["python3", "-c", "print(1)"])
        assert await client.windows() is None  # no /windows: known, not an error


async def test_the_client_corrects_trees_of_servers_other_than_ours() -> None:
    tree = _tree(pane_y=0, cell_y=200)

    def osworld(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json={"AT": tree})

    def ours(request: httpx2.Request) -> httpx2.Response:
        headers = {"Server": "agentjudge-desktop/1 Python/3.11"}
        return httpx2.Response(200, content=json.dumps({"AT": tree}), headers=headers)

    async with _osworld_like(osworld) as client:
        (cell,) = [n for n in tree_nodes(await client.accessibility_tree()) if n.name == "A1"]
        assert cell.position == (60, 225)
    async with _osworld_like(ours) as client:
        assert await client.accessibility_tree() == tree  # ours corrects its trees itself
