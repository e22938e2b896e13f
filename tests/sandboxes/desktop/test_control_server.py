"""The control server's HTTP protocol, spoken by the client: over a local desktop's Unix socket,
and over TCP on 127.0.0.1 (as a container's or an OSWorld VM's server is reached)."""

from __future__ import annotations

import ast
import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2
import psutil
import pytest
import pytest_asyncio

from sandboxes.desktop.client import DesktopClient, DesktopControlError
from sandboxes.desktop.local import CONTROL_SERVER_PARENT, LocalDesktopProvider
from sandboxes.desktop.sandbox import DesktopSandbox
from tests.sandboxes.desktop.helpers import start, wait_for_node, word_document

pytestmark = [pytest.mark.desktop, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def desktop() -> AsyncIterator[DesktopSandbox]:
    async with LocalDesktopProvider() as provider:
        sandbox = await start(provider, "protocol.docx", word_document("Protocol checks"))
        yield sandbox


IDLE_SCREEN_SCENE = """
import select, time
from Xlib import display
from Xlib.ext import damage
watch = display.Display()
watch.damage_query_version()
report = watch.screen().root.damage_create(damage.DamageReportNonEmpty)
watch.sync()
time.sleep(2.0)
reports, end = 0, time.monotonic() + 3.0
while True:
    while watch.pending_events():
        watch.next_event()
    watch.damage_subtract(report)
    watch.sync()
    left = end - time.monotonic()
    if left <= 0 or not select.select([watch.fileno()], [], [], left)[0]:
        break
    reports += watch.pending_events() > 0
print(reports)
"""
"""Counts the X server's reports of drawing anywhere on the screen during 3 s, after 2 s to let
the screen come to rest."""


async def test_a_document_nobody_touches_draws_nothing(desktop: DesktopSandbox) -> None:
    # Writer's text cursor is in the document; were it blinking, it would redraw every 0.6 s
    # and no still-screen wait would find the screen still for long.
    await wait_for_node(desktop, tag="paragraph", text_contains="Protocol checks")
    watched = await desktop.client.execute(["python3", "-c", IDLE_SCREEN_SCENE], timeout=30)
    assert watched.returncode == 0, watched.error
    assert int(watched.output.strip()) == 0


async def test_files_go_in_and_come_out(desktop: DesktopSandbox) -> None:
    client = desktop.client
    await client.upload_file("/home/user/inbox/notes.txt", b"line one\nline two\n")
    assert await client.download_file("/home/user/inbox/notes.txt") == b"line one\nline two\n"
    listing = await client.execute(["ls", "/home/user/inbox"])
    assert listing.ok
    assert listing.output == "notes.txt\n"
    with pytest.raises(
        DesktopControlError, match=r"/file answered 404: no file /home/user/missing"
    ):
        await client.download_file("/home/user/missing")


async def test_commands_scripts_and_python_report_output_and_exit_codes(
    desktop: DesktopSandbox,
) -> None:
    client = desktop.client
    shell = await client.execute("echo $HOME; echo oops >&2; exit 3", shell=True)
    assert (shell.output, shell.error, shell.returncode, shell.ok) == (
        "/home/user\n",
        "oops\n",
        3,
        False,
    )
    script = await client.run_bash_script("cd /home/user && pwd && test -d .office-profile")
    assert script.ok
    assert script.output == "/home/user\n"
    python = await client.run_python("import sys; print(sys.version_info[0]); sys.exit(4)")
    assert (python.output, python.returncode, python.status) == ("3\n", 4, "error")
    slow = await client.execute(["sleep", "30"], timeout=1)
    assert slow.status == "error"
    assert "timed out" in slow.error


async def test_bad_requests_name_the_endpoint_and_the_reason(desktop: DesktopSandbox) -> None:
    client = desktop.client
    with pytest.raises(DesktopControlError, match=r"/nothing answered 404: no endpoint"):
        await client._request("GET", "/nothing")
    with pytest.raises(DesktopControlError, match=r"answered 400: missing field 'command'"):
        await client._request("POST", "/execute", json={"shell": True})
    with pytest.raises(DesktopControlError, match=r"answered 400: the body is not JSON"):
        await client._request(
            "POST", "/execute", content=b"{not json", headers={"Content-Type": "application/json"}
        )
    # OSWorld's own client posts JSON without a JSON content type: it is read as JSON.
    response = await client._request("POST", "/execute", content=b'{"command": ["true"]}')
    assert response.json()["returncode"] == 0


async def test_a_second_document_opens_and_windows_are_activated_and_closed(
    desktop: DesktopSandbox,
) -> None:
    client = desktop.client
    await client.upload_file("/home/user/second.docx", word_document("The second document"))
    await client.open_file("/home/user/second.docx", timeout=60)
    await wait_for_node(desktop, tag="paragraph", text_contains="The second document")
    await client.activate_window("protocol.docx")
    await client.close_window("second.docx")
    for _ in range(100):
        titles = [title for _, title in await client.windows() or []]
        if not any("second.docx" in title for title in titles):
            break
        await asyncio.sleep(0.1)
    assert any("protocol.docx" in title for title in titles)
    assert not any("second.docx" in title for title in titles)
    with pytest.raises(DesktopControlError, match="no window 'no such window'"):
        await client.activate_window("no such window")
    with pytest.raises(DesktopControlError, match=r"no file /home/user/absent\.docx"):
        await client.open_file("/home/user/absent.docx")


async def test_the_server_waits_for_a_window_title_in_one_request(
    desktop: DesktopSandbox,
) -> None:
    client = desktop.client
    await client.upload_file("/home/user/third.docx", word_document("The third document"))
    waiting = asyncio.ensure_future(client.windows(title="third.docx", timeout=60))
    await asyncio.sleep(0.5)
    assert not waiting.done()  # no such window yet: the server holds the answer
    await client.open_file("/home/user/third.docx", timeout=60)
    titles = [title for _, title in await waiting or []]
    assert any("third.docx" in title for title in titles)
    await client.close_window("third.docx")
    started = asyncio.get_running_loop().time()
    titles = [title for _, title in await client.windows(title="no such title", timeout=0.5) or []]
    assert asyncio.get_running_loop().time() - started >= 0.5
    assert any("protocol.docx" in title for title in titles)
    with pytest.raises(DesktopControlError, match="'timeout' must be 0-60 s"):
        await client.windows(title="protocol.docx", timeout=61)


@pytest.fixture(scope="module")
def tcp_server(bare_display: str) -> Iterator[int]:
    """The control server in ``serve`` mode on a 127.0.0.1 port, over a bare Xvfb."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        ["/usr/bin/python3", "-m", "control_server", "serve", "--port", str(port)],
        env={**os.environ, "DISPLAY": bare_display, "PYTHONPATH": str(CONTROL_SERVER_PARENT)},
        cwd="/",
    )
    try:
        yield port
    finally:
        server.kill()
        server.wait()


async def test_the_tcp_server_listens_on_loopback_only(tcp_server: int) -> None:
    async with DesktopClient(f"http://127.0.0.1:{tcp_server}") as client:
        await client.wait_until_up(20)
        assert await client.screen_size() == (800, 600)
        shot = await client.screenshot()
        assert shot.startswith(b"\x89PNG")
        result = await client.execute([sys.executable, "-c", "print(6 * 7)"])
        assert result.output == "42\n"
    listening = [
        (connection.laddr[0], connection.laddr[1])
        for connection in psutil.net_connections("tcp")
        if connection.status == psutil.CONN_LISTEN
        and connection.laddr
        and connection.laddr[1] == tcp_server
    ]
    assert listening == [("127.0.0.1", tcp_server)]
    outside = next(
        (a.address for addrs in psutil.net_if_addrs().values() for a in addrs
         if a.family == socket.AF_INET and not a.address.startswith("127.")),
        None,
    )  # fmt: skip
    if outside is not None:
        with pytest.raises(httpx2.ConnectError):
            async with httpx2.AsyncClient() as raw:
                await raw.get(f"http://{outside}:{tcp_server}/screen_size")


async def test_the_server_package_needs_only_the_standard_library_and_debian_packages() -> None:
    allowed = {"gi", "Xlib", "PIL", "pyautogui"}  # pyautogui: the desktop's, for its runner
    for path in Path(CONTROL_SERVER_PARENT / "control_server").glob("*.py"):
        for statement in ast.walk(ast.parse(path.read_text())):
            if isinstance(statement, ast.Import):
                tops = [alias.name.split(".")[0] for alias in statement.names]
            elif isinstance(statement, ast.ImportFrom) and not statement.level:
                tops = [(statement.module or "").split(".")[0]]
            else:
                continue
            for top in tops:
                assert top in sys.stdlib_module_names or top in allowed, f"{path.name}: {top}"


async def test_pyautogui_code_runs_warm_with_the_semantics_of_python_c(
    desktop: DesktopSandbox,
) -> None:
    client = desktop.client
    code = (
        "import os, sys, pathlib, pyautogui\n"
        "parent = pathlib.Path(f'/proc/{os.getppid()}/cmdline').read_bytes()\n"
        "print(__name__, sys.argv, pyautogui.size(), b'pyautogui_runner' in parent)\n"
        "sys.exit(3)"
    )
    result = await client.execute(["python3", "-c", code])
    assert result.output == "__main__ ['-c'] Size(width=1920, height=1080) True\n"
    assert result.returncode == 3
    slow = await client.execute(
        ["python3", "-c", "import pyautogui, time; time.sleep(30)"], timeout=1
    )
    assert (slow.status, slow.returncode) == ("error", -9)
    assert "timed out" in slow.error
    for x in (100, 200):  # each run has an X connection of its own, and still moves the pointer
        moved = await client.execute(
            ["python", "-c", f"import pyautogui; pyautogui.moveTo({x}, 50)"]
        )
        assert moved.ok, moved.error
        assert await client.cursor_position() == (x, 50)
    failed = await client.execute(["python3", "-c", "import pyautogui\nraise ValueError('bad')"])
    assert failed.returncode == 1
    assert "ValueError: bad" in failed.error


async def test_a_settled_screenshot_waits_for_the_screen_to_stop_changing(
    desktop: DesktopSandbox,
) -> None:
    from sandboxes.screens import compare_screens

    before = await desktop.client.screenshot()
    # Type into the document and ask at once: the answer must show the text, painted and still.
    await desktop.client.execute(
        ["python3", "-c", "import pyautogui\npyautogui.typewrite('settled text here')"]
    )
    settled = await desktop.client.settled_screenshot(0.3, 10.0)
    assert settled is not None  # this project's server watches the screen itself
    shot, still = settled
    assert still
    assert shot.startswith(b"\x89PNG")
    assert not compare_screens(before, shot).same  # the typing is on it
    again = await desktop.client.screenshot()
    assert compare_screens(shot, again).same  # and nothing changed after it
    # A screen that never stays still for the asked time is answered after the timeout.
    response = await desktop.client._request(
        "GET", "/screenshot", params={"settle": "5", "timeout": "0.2"}
    )
    assert response.headers["x-screen-settled"] == "0"
    assert float(response.headers["x-screen-waited"]) < 2.0
    bad = await desktop.client._client.get("/screenshot", params={"settle": "many"})
    assert bad.status_code == 400
    assert "'settle'" in bad.text


async def test_the_next_screen_is_answered_only_once_something_is_drawn(
    desktop: DesktopSandbox,
) -> None:
    from sandboxes.desktop.screens import wait_for_changed_screen
    from sandboxes.screens import compare_screens

    client = desktop.client
    # At rest: a document nobody touches draws nothing once it stayed still for 2 s.
    settled = await client.settled_screenshot(2.0, 30.0)
    assert settled is not None
    assert settled[1]
    # Nobody draws: after the time asked for, no screen and no body.
    started = asyncio.get_running_loop().time()
    assert await wait_for_changed_screen(client, within=1.0, quiet=0.2) is None
    assert asyncio.get_running_loop().time() - started >= 1.0
    response = await client._request(
        "GET", "/screenshot", params={"settle": "0.2", "timeout": "0.3", "changed": "1"}
    )
    assert response.status_code == 204
    assert response.content == b""
    assert response.headers["x-screen-settled"] == "0"
    # Something is drawn while the client waits: the answer is that screen, once still.
    waiting = asyncio.ensure_future(wait_for_changed_screen(client, within=20.0, quiet=0.3))
    await asyncio.sleep(0.5)
    assert not waiting.done()
    typing = "import pyautogui\npyautogui.typewrite(' and the next words')"
    await client.execute(["python3", "-c", typing])
    shot = await waiting
    assert shot is not None
    assert not compare_screens(settled[0], shot, fine=True).same  # the typing is on it
    assert compare_screens(shot, await client.screenshot(), fine=True).same  # and it was still


async def test_a_screenshot_comes_as_raw_grey_pixels_when_asked(desktop: DesktopSandbox) -> None:
    import io

    from PIL import Image

    # A still screen (the text cursor does not blink), so that every answer shows one screen.
    settled = await desktop.client.settled_screenshot(0.3, 10.0, "pgm")
    assert settled is not None
    raw, still = settled
    assert still
    png = await desktop.client.screenshot()
    pgm = await desktop.client.screenshot("pgm")
    assert raw.startswith(b"P5")
    assert pgm.startswith(b"P5")
    width, height = await desktop.client.screen_size()
    assert len(pgm) >= width * height  # uncompressed, one byte a pixel
    images = [Image.open(io.BytesIO(data)) for data in (raw, pgm, png)]
    assert [image.mode for image in images] == ["L", "L", "RGB"]
    assert {image.size for image in images} == {(width, height)}
    # The grey of the PNG's colours, pixel for pixel.
    assert images[0].tobytes() == images[1].tobytes() == images[2].convert("L").tobytes()
    bad = await desktop.client._client.get("/screenshot", params={"format": "bmp"})
    assert bad.status_code == 400
    assert "'format'" in bad.text


HELD_KEY_SCENE = """
import time
from Xlib import X, XK, display
from Xlib.ext import xtest
screen_display = display.Display()
screen = screen_display.screen()
window = screen.root.create_window(
    0, 0, 400, 300, 0, screen.root_depth, event_mask=X.KeyPressMask | X.KeyReleaseMask
)
window.map()
screen_display.sync()
time.sleep(0.5)
window.set_input_focus(X.RevertToParent, X.CurrentTime)
screen_display.sync()
time.sleep(0.3)
key = screen_display.keysym_to_keycode(XK.string_to_keysym("Right"))
xtest.fake_input(screen_display, X.KeyPress, key)
screen_display.sync()
time.sleep(1.2)
xtest.fake_input(screen_display, X.KeyRelease, key)
screen_display.sync()
time.sleep(0.3)
presses = 0
while screen_display.pending_events():
    presses += screen_display.next_event().type == X.KeyPress
window.destroy()
screen_display.close()
print(presses)
"""
"""Holds the right arrow key down for 1.2 s (longer than X's 660-ms repeat delay) in a window of
its own on the desktop's display and prints how many key presses the window got."""


async def test_a_key_held_down_past_the_repeat_delay_is_pressed_once(
    desktop: DesktopSandbox,
) -> None:
    # A busy machine can release a recorded key press late; a repeat would replay it twice.
    held = await desktop.client.execute(["python3", "-c", HELD_KEY_SCENE], timeout=30)
    assert held.returncode == 0, held.error
    assert held.output.strip() == "1"
