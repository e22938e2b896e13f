"""Grabs through MIT-SHM on a real Xvfb: the same pixels as a grab through the X socket, each
grab a copy of its own, the screen's grabs made that way, and no shared memory segment left
behind, whether the grabber is closed or its process is killed.

The control server runs on the desktop's own Python (Debian's python3 with Pillow), so the
scenes run there, in subprocesses, against an Xvfb of their own."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from sandboxes.desktop.local import CONTROL_SERVER_PARENT

SYSTEM_PYTHON = "/usr/bin/python3"

SCENE = r"""
import json
from PIL import ImageGrab
from Xlib import display
from control_server.screen import Screen
from control_server.shared_memory_grab import SharedMemoryGrabber

def segments():
    with open("/proc/sysvipc/shm") as table:
        return len(table.readlines()) - 1

client = display.Display(NAME)
root = client.screen().root
depth = client.screen().root_depth
window = root.create_window(0, 0, 400, 300, 0, depth, background_pixel=0x3366CC)
window.map()
client.sync()
result = {"before": segments()}
grabber = SharedMemoryGrabber(NAME)
result["while_open"] = segments()
first = grabber.grab()
socket_grab = ImageGrab.grab(xdisplay=NAME)
result["same_as_socket"] = first.tobytes() == socket_grab.tobytes()
result["size"] = list(first.size)
result["mode"] = first.mode
result["window"] = list(first.getpixel((200, 150)))
window.fill_rectangle(window.create_gc(foreground=0xFF0000), 10, 10, 50, 50)
client.sync()
second = grabber.grab()
result["drawn"] = list(second.getpixel((30, 30)))
result["first_kept"] = list(first.getpixel((30, 30)))
grabber.close()
result["after_close"] = segments()
screen = Screen(NAME)
result["screen_grab"] = list(screen._grab().getpixel((30, 30)))
result["screen_uses_it"] = isinstance(screen._grabber, SharedMemoryGrabber)
screen.close()
try:
    SharedMemoryGrabber(":9999")
    result["no_display"] = "no error"
except OSError as error:
    result["no_display"] = str(error)
print(json.dumps(result))
"""

KILLED = r"""
import os, signal
from control_server.shared_memory_grab import SharedMemoryGrabber
grabber = SharedMemoryGrabber(NAME)
grabber.grab()
print("attached", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _run(scene: str, display: str) -> subprocess.CompletedProcess[str]:
    assert Path(SYSTEM_PYTHON).exists(), "the desktop side's python3 is installed by .ci/run"
    return subprocess.run(
        [SYSTEM_PYTHON, "-c", scene.replace("NAME", repr(display))],
        env={**os.environ, "PYTHONPATH": str(CONTROL_SERVER_PARENT), "DISPLAY": display},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _segments() -> int:
    return len(Path("/proc/sysvipc/shm").read_text().splitlines()) - 1


def test_shared_memory_grabs_show_the_screen_and_leave_no_segment(bare_display: str) -> None:
    done = _run(SCENE, bare_display)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["same_as_socket"]
    assert result["size"] == [800, 600]
    assert result["mode"] == "RGB"
    assert result["window"] == [0x33, 0x66, 0xCC]
    # A later grab sees later drawing; an earlier grab is a copy and keeps what it saw.
    assert result["drawn"] == [255, 0, 0]
    assert result["first_kept"] == [0x33, 0x66, 0xCC]
    assert result["screen_grab"] == [255, 0, 0]
    assert result["screen_uses_it"]
    # One segment while the grabber is open, none once it is closed.
    assert result["while_open"] == result["before"] + 1
    assert result["after_close"] == result["before"]
    assert "cannot open the X display" in result["no_display"]


def test_a_killed_grabbers_segment_is_freed(bare_display: str) -> None:
    before = _segments()
    done = _run(KILLED, bare_display)
    assert done.returncode == -9
    assert done.stdout.strip() == "attached"
    # Marked for removal at attach time: it goes once the X server has dropped the dead
    # client's connection.
    deadline = time.monotonic() + 10
    while _segments() > before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _segments() == before
