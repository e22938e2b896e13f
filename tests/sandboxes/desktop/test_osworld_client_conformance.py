"""OSWorld's own client drives this project's control server, as OSWorld's harness calls it.

``desktop_env.controllers.python.PythonController`` comes from the ``desktop-env`` wheel
(installed with ``--no-deps``: the controller needs only ``requests``). Its harness uploads and
opens a task's file through ``SetupController``, which imports Playwright and Google Drive
libraries; those two requests are made here exactly as it makes them (the multipart form
``file_path`` + ``file_data``, the JSON ``{"path": ...}``). The desktop is a container of the
desktop image whose server listens on TCP, as an OSWorld VM's does.
"""

from __future__ import annotations

import io
import json
import time
import urllib.parse
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
import requests
from PIL import Image

from sandboxes.desktop.observations import find_nodes
from tests.sandboxes.desktop.helpers import word_document

pytestmark = [pytest.mark.docker, pytest.mark.desktop]

T = TypeVar("T")

DOCUMENT = "/home/user/Desktop/conformance.docx"


def _until(probe: Callable[[], T | None], timeout: float = 90.0) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"nothing from {probe} within {timeout:g} s")
        time.sleep(0.5)


def test_osworlds_python_controller_drives_our_server(remote_desktop: str) -> None:
    controller_module = pytest.importorskip(
        "desktop_env.controllers.python",
        reason="OSWorld's client: pip install --no-deps desktop-env (the dev extra)",
    )
    port = urllib.parse.urlsplit(remote_desktop).port
    controller: Any = controller_module.PythonController(vm_ip="127.0.0.1", server_port=port)
    controller.retry_interval = 0.5  # its retries wait 5 s each; the server may still start

    # Screen size, as the harness reads it to scale coordinates.
    size = _until(controller.get_vm_screen_size)
    assert size == {"width": 1920, "height": 1080}

    # File transfer in: SetupController's upload and open requests.
    data = word_document("Quarterly memo", "Second paragraph")
    uploaded = requests.post(
        f"{remote_desktop}/setup/upload",
        data={"file_path": DOCUMENT},
        files={"file_data": ("conformance.docx", data)},
        timeout=60,
    )
    assert uploaded.status_code == 200, uploaded.text
    opened = requests.post(
        f"{remote_desktop}/setup/open_file",
        headers={"Content-Type": "application/json"},
        data=json.dumps({"path": DOCUMENT}),
        timeout=120,
    )
    assert opened.status_code == 200, opened.text

    # The accessibility tree: OSWorld's XML, showing the document's text.
    def memo_shown() -> str | None:
        tree = controller.get_accessibility_tree()
        return tree if tree and find_nodes(tree, text_contains="Quarterly memo") else None

    tree = _until(memo_shown)
    assert tree.startswith("<desktop-frame")

    # A screenshot: a PNG of the screen's size.
    png = controller.get_screenshot()
    assert png is not None
    assert png.startswith(b"\x89PNG")
    assert Image.open(io.BytesIO(png)).size == (1920, 1080)

    # Execute: the harness's python -c with its pyautogui prefix, and its platform probe.
    answer = controller.execute_python_command("print(pyautogui.size())")
    assert answer["status"] == "success"
    assert "1920" in answer["output"]
    assert controller.get_vm_platform() == "Linux"

    # An action through execute_action (computer_13), then seen in the tree.
    (paragraph,) = find_nodes(tree, text_contains="Quarterly memo")
    x, y = paragraph.center
    controller.execute_action({"action_type": "CLICK", "parameters": {"x": x, "y": y}})
    controller.execute_action({"action_type": "PRESS", "parameters": {"key": "end"}})
    controller.execute_action({"action_type": "TYPING", "parameters": {"text": " Q4"}})
    _until(
        lambda: find_nodes(controller.get_accessibility_tree() or "<x/>", text_contains="memo Q4")
    )

    # File transfer out: the harness's get_file reads the uploaded document back.
    assert controller.get_file(DOCUMENT) == data
    assert controller.get_file("/home/user/Desktop/missing.docx") is None
