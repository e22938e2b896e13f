"""The control server's wait for a still screen on a real Xvfb: it grabs the framebuffer only
after the X server reports drawing (DAMAGE), not at all where nothing was drawn since its last
grab, and still returns the screen as drawn last.

The control server runs on the desktop's own Python (Debian's python3 with Xlib and Pillow), so
the scene runs there, in a subprocess, against an Xvfb of its own."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from sandboxes.desktop.local import CONTROL_SERVER_PARENT

SYSTEM_PYTHON = "/usr/bin/python3"

SCENE = r"""
import json, threading, time
from Xlib import display
from control_server import screen as screen_module
from control_server.screen import Screen

screen = Screen(NAME)
grabs = []
plain_grab = screen._grab
def counted_grab():
    grabs.append(time.monotonic())
    return plain_grab()
screen._grab = counted_grab

def white_window(client, x, y, width, height):
    root = client.screen()
    window = root.root.create_window(
        x, y, width, height, 0, root.root_depth, background_pixel=root.white_pixel
    )
    window.map()
    client.sync()
    return window

def draw(count, gap):
    client = display.Display(NAME)
    window = white_window(client, 10, 10, 300, 200)
    pen = window.create_gc(foreground=client.screen().black_pixel)
    for n in range(count):
        time.sleep(gap)
        window.fill_rectangle(pen, 20 + n * 20, 20, 10, 10)
        client.sync()
    client.close()

result = {}
_, settled, waited = screen.settled_screenshot(0.6, 5.0)
result["idle"] = {"settled": settled, "waited": waited, "grabs": len(grabs)}
grabs.clear()
drawer = threading.Thread(target=draw, args=(4, 0.25))
drawer.start()
image, settled, waited = screen.settled_screenshot(0.6, 10.0)
drawer.join()
result["drawn"] = {
    "settled": settled,
    "waited": waited,
    "grabs": len(grabs),
    "last_square": image.getpixel((10 + 20 + 3 * 20 + 5, 10 + 20 + 5)),
}
# Drawing after that wait's last grab (a white window, left open): the next wait grabs and
# shows it.
painter = display.Display(NAME)
white_window(painter, 400, 300, 100, 100)
grabs.clear()
image, settled, _ = screen.settled_screenshot(0.3, 5.0)
result["redrawn"] = {"grabs": len(grabs), "square": image.getpixel((450, 350))}
# Nothing drawn since that wait's last grab: the next wait makes none and answers that screen.
grabs.clear()
again, settled, _ = screen.settled_screenshot(0.3, 5.0)
result["again"] = {"settled": settled, "grabs": len(grabs), "same": again == image}
painter.close()
result["watching"] = isinstance(screen._changes, screen_module.ScreenChanges)
screen.close()
print(json.dumps(result))
"""


def test_a_still_screen_costs_at_most_one_grab_and_drawing_is_waited_for(bare_display: str) -> None:
    assert Path(SYSTEM_PYTHON).exists(), "the desktop side's python3 is installed by .ci/run"
    scene = SCENE.replace("NAME", repr(bare_display))
    done = subprocess.run(
        [SYSTEM_PYTHON, "-c", scene],
        env={**os.environ, "PYTHONPATH": str(CONTROL_SERVER_PARENT), "DISPLAY": bare_display},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["watching"], "the X server's DAMAGE reports were not used"
    idle = result["idle"]
    # Nothing drew: the first grab is the answer, however long the quiet time.
    assert idle["settled"]
    assert idle["grabs"] == 1
    assert 0.6 <= idle["waited"] < 2.0
    drawn = result["drawn"]
    # Four squares 0.25 s apart: the wait lasts past the last one plus the quiet time, and the
    # screen returned shows the last square.
    assert drawn["settled"]
    assert drawn["waited"] >= 4 * 0.25 + 0.6 - 0.1
    assert drawn["last_square"] == [0, 0, 0]
    # Each report of drawing costs a grab; the quiet time between them costs none (polling
    # every 0.04 s would have grabbed about 40 times).
    assert 2 <= drawn["grabs"] <= 12
    redrawn = result["redrawn"]
    assert redrawn["grabs"] >= 1
    assert redrawn["square"] == [255, 255, 255]
    again = result["again"]
    assert again["settled"]
    assert again["grabs"] == 0
    assert again["same"]
