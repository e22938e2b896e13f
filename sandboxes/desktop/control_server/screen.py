"""The X screen as the control server sees it: screenshots, the pointer and the windows.

One X connection per server, shared under a lock: a client that opened a display per request
would soon exhaust the X server's client slots. Screenshots are grabbed by Pillow's XCB code
(which connects, grabs and disconnects in C; python-xlib's pure-Python reply parsing of 8 MB
costs several times more) and written as PNG with the rows unfiltered and zlib at level 1: a
desktop is mostly flat colour, so this is as small as Pillow's adaptive filtering gives within
a sixth, at a third of the CPU time.
"""

from __future__ import annotations

import struct
import threading
import time
import zlib
from typing import Any

from PIL import Image, ImageChops, features
from Xlib import X, display


class Screen:
    """The X display the desktop runs on (``DISPLAY``)."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name
        self._display: Any = display.Display(name)
        self._root: Any = self._display.screen().root
        self._lock = threading.Lock()

    def size(self) -> tuple[int, int]:
        """Width and height of the screen in pixels."""
        screen = self._display.screen()
        return int(screen.width_in_pixels), int(screen.height_in_pixels)

    def cursor_position(self) -> tuple[int, int]:
        """Where the pointer is, in screen pixels."""
        with self._lock:
            pointer = self._root.query_pointer()
        return int(pointer.root_x), int(pointer.root_y)

    def _grab(self) -> Image.Image:
        """The framebuffer as it is now (no pointer)."""
        if features.check("xcb"):
            from PIL import ImageGrab

            return ImageGrab.grab(xdisplay=self.name)
        width, height = self.size()
        with self._lock:
            raw = self._root.get_image(0, 0, width, height, X.ZPixmap, 0xFFFFFFFF)
        return Image.frombytes("RGB", (width, height), raw.data, "raw", "BGRX")

    def _with_pointer(self, image: Image.Image) -> Image.Image:
        image = image.convert("RGB")
        with self._lock:
            pointer = self._root.query_pointer()
        _draw_pointer(image, int(pointer.root_x), int(pointer.root_y))
        return image

    def screenshot(self) -> Image.Image:
        """The whole screen as an RGB image, with the pointer drawn in as a small arrow."""
        return self._with_pointer(self._grab())

    def settled_screenshot(
        self, quiet: float, timeout: float, interval: float = 0.04
    ) -> tuple[Image.Image, bool, float]:
        """The screen once its framebuffer stayed the same, byte for byte but for a blinking
        text cursor, for ``quiet`` seconds (grabbed every ``interval``), or as it is after
        ``timeout`` seconds; with whether it settled and the seconds waited. Comparing raw
        grabs here costs a few milliseconds a look, where a PNG sent to the client and compared
        there costs tens."""
        started = time.monotonic()
        image = self._grab()
        previous = image.tobytes()
        same_since = started
        while True:
            now = time.monotonic()
            if now - same_since >= quiet:
                settled = True
                break
            if now - started >= timeout:
                settled = False
                break
            time.sleep(interval)
            grabbed = self._grab()
            current = grabbed.tobytes()
            if current != previous and not _only_a_cursor_blinked(image, grabbed):
                image, previous, same_since = grabbed, current, time.monotonic()
        return self._with_pointer(image), settled, time.monotonic() - started

    def screenshot_png(self) -> bytes:
        """The whole screen as PNG bytes (see ``screenshot``)."""
        return png_bytes(self.screenshot())

    def window_titles(self) -> list[tuple[int, str]]:
        """The managed top-level windows (``_NET_CLIENT_LIST``) with their titles."""
        with self._lock:
            client_list = self._display.intern_atom("_NET_CLIENT_LIST")
            net_name = self._display.intern_atom("_NET_WM_NAME")
            utf8 = self._display.intern_atom("UTF8_STRING")
            listing = self._root.get_full_property(client_list, X.AnyPropertyType)
            windows: list[tuple[int, str]] = []
            for window_id in listing.value if listing is not None else []:
                window = self._display.create_resource_object("window", window_id)
                try:
                    title = window.get_full_property(net_name, utf8)
                    text = title.value.decode("utf-8", "replace") if title else ""
                except Exception:  # a window that closed meanwhile
                    continue
                windows.append((int(window_id), text))
        return windows

    def close(self) -> None:
        """Close the X connection."""
        self._display.close()


CURSOR_BOX = (3, 64)
"""Width and height in pixels within which all of a change between two grabs may be a text
cursor blinking (a bar one or two pixels wide, as tall as a line or a cell)."""


def _only_a_cursor_blinked(before: Image.Image, after: Image.Image) -> bool:
    """Whether everything that differs between two grabs fits in a text cursor's box."""
    box = ImageChops.difference(before, after).getbbox()
    if box is None:
        return True
    return box[2] - box[0] <= CURSOR_BOX[0] and box[3] - box[1] <= CURSOR_BOX[1]


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bytes(image: Image.Image) -> bytes:
    """An RGB image as PNG: 8-bit RGB, rows unfiltered, zlib level 1."""
    width, height = image.size
    pixels = image.tobytes()
    row = width * 3
    rows = b"".join(b"\x00" + pixels[start : start + row] for start in range(0, row * height, row))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows, 1))
        + _chunk(b"IEND", b"")
    )


_ARROW = (
    "X...........",
    "XX..........",
    "XWX.........",
    "XWWX........",
    "XWWWX.......",
    "XWWWWX......",
    "XWWWWWX.....",
    "XWWWWWWX....",
    "XWWWWWWWX...",
    "XWWWWWWWWX..",
    "XWWWWWXXXXX.",
    "XWWXWWX.....",
    "XWX.XWWX....",
    "XX..XWWX....",
    "X....XWWX...",
    ".....XXX....",
)


def _draw_pointer(image: Image.Image, x: int, y: int) -> None:
    """Paint a plain arrow at the pointer (Xvfb's framebuffer holds no cursor)."""
    width, height = image.size
    pixels = image.load()
    if pixels is None:
        return
    for row, line in enumerate(_ARROW):
        for column, cell in enumerate(line):
            px, py = x + column, y + row
            if cell == "." or not (0 <= px < width and 0 <= py < height):
                continue
            pixels[px, py] = (0, 0, 0) if cell == "X" else (255, 255, 255)
