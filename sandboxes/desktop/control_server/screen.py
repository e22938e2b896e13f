"""The X screen as the control server sees it: screenshots, the pointer and the windows.

One X connection per server, shared under a lock: a client that opened a display per request
would soon exhaust the X server's client slots. Screenshots are grabbed through shared memory
(``shared_memory_grab``) where the X server allows it, else by Pillow's XCB code (which
connects, grabs and disconnects in C; python-xlib's pure-Python reply parsing of 8 MB costs
several times more) and written as PNG with the rows unfiltered and zlib at level 1: a
desktop is mostly flat colour, so this is as small as Pillow's adaptive filtering gives within
a sixth, at a third of the CPU time.

Waiting for a still screen grabs only after the X server reports drawing (the DAMAGE extension,
``ScreenChanges``): a screen nobody draws on costs no grab at all, where grabbing the 8 MB
framebuffer every few hundredths of a second kept a desktop's server and X server busy for a
third of a core while it waited. Without DAMAGE the wait grabs at a fixed interval.
"""

from __future__ import annotations

import select
import struct
import threading
import time
import zlib
from typing import Any, Literal

from PIL import Image, ImageChops, features
from Xlib import X, display
from Xlib.error import XError

from .shared_memory_grab import SharedMemoryGrabber


class Screen:
    """The X display the desktop runs on (``DISPLAY``)."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name
        self._display: Any = display.Display(name)
        self._root: Any = self._display.screen().root
        self._lock = threading.Lock()
        self._changes: ScreenChanges | _NoReports | None = None
        """The damage watch, made at the first wait."""
        self._changes_lock = threading.Lock()
        self._latest: Image.Image | None = None
        """The last grab of the last still-screen wait (the screen then, without the pointer)."""
        self._grabber: SharedMemoryGrabber | Literal[False] | None = None
        """The shared-memory grabber, made at the first grab (``False`` where it cannot work)."""
        self._grabber_lock = threading.Lock()

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
        """The framebuffer as it is now (no pointer): through shared memory where the X server
        can, else through the X socket."""
        with self._grabber_lock:
            if self._grabber is None:
                try:
                    self._grabber = SharedMemoryGrabber(self.name)
                except (OSError, AttributeError):  # AttributeError: a library without MIT-SHM
                    self._grabber = False
            grabber = self._grabber
        if grabber:
            try:
                return grabber.grab()
            except OSError:
                with self._grabber_lock:
                    self._grabber = False
                grabber.close()
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
        self, quiet: float, timeout: float, interval: float = 0.04, *, after_change: bool = False
    ) -> tuple[Image.Image | None, bool, float]:
        """The screen once its framebuffer stayed the same, byte for byte but for a blinking
        text cursor, for ``quiet`` seconds, or as it is after ``timeout`` seconds; with whether
        it settled and the seconds waited. The screen is grabbed again only after the X server
        reported drawing (and ``interval`` later, so that a burst of drawing costs one grab),
        or every ``interval`` where it cannot report it; where nothing was drawn since the last
        wait's last grab, that grab stands for the screen and none is made at the start.
        Comparing raw grabs here costs a few milliseconds a look, where a PNG sent to the client
        and compared there costs tens.

        ``after_change``: first wait (within ``timeout``) until something is drawn after the
        last wait's last grab; no image (None) when nothing is. A client that found the last
        screen wrong asks for the next one this way instead of asking again and again for a
        screen nobody drew on."""
        with self._changes_lock:
            changes = self._damage_watch()
            started = time.monotonic()
            last = self._latest
            drawn = last is None or changes.drawn_within(timeout if after_change else 0.0)
            if after_change:
                if not drawn:
                    return None, False, time.monotonic() - started
                time.sleep(interval)  # the drawing has only begun: grab once a burst of it is done
            changes.forget()
            # Nothing drawn since the last wait's last grab: that grab is the screen now.
            image = latest = self._grab() if drawn or last is None else last
            previous = image.tobytes()
            same_since = time.monotonic() if after_change else started
            while True:
                now = time.monotonic()
                if now - same_since >= quiet:
                    settled = True
                    break
                if now - started >= timeout:
                    settled = False
                    break
                still_for = min(quiet - (now - same_since), timeout - (now - started))
                if not changes.drawn_within(still_for):
                    continue
                time.sleep(interval)
                changes.forget()
                grabbed = latest = self._grab()
                current = grabbed.tobytes()
                if current != previous and not _only_a_cursor_blinked(image, grabbed):
                    image, previous, same_since = grabbed, current, time.monotonic()
            self._latest = latest
        return self._with_pointer(image), settled, time.monotonic() - started

    def _damage_watch(self) -> ScreenChanges | _NoReports:
        """The damage watch of this display, made the first time (``_NoReports`` where the X
        server has no DAMAGE)."""
        if self._changes is None:
            try:
                self._changes = ScreenChanges(self.name)
            except (XError, OSError, RuntimeError):
                self._changes = _NoReports()
        return self._changes

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
        """Close the X connections."""
        if isinstance(self._grabber, SharedMemoryGrabber):
            self._grabber.close()
        if isinstance(self._changes, ScreenChanges):
            self._changes.close()
        self._display.close()


class ScreenChanges:
    """Whether anything was drawn on the screen, as the X server's DAMAGE extension reports it:
    one event when the root window's damage goes from none to some (drawing in any window shows
    there), re-armed by ``forget``. Its own X connection, used by one thread at a time."""

    def __init__(self, name: str | None) -> None:
        from Xlib.ext import damage

        self._display: Any = display.Display(name)
        if not self._display.has_extension("DAMAGE"):
            self._display.close()
            raise RuntimeError("the X server has no DAMAGE extension")
        self._display.damage_query_version()
        root = self._display.screen().root
        self._damage = root.damage_create(damage.DamageReportNonEmpty)
        self._display.sync()

    def forget(self) -> None:
        """Drop the drawing reported so far: the next report is of drawing after this call."""
        while self._display.pending_events():
            self._display.next_event()
        self._display.damage_subtract(self._damage)
        self._display.sync()

    def drawn_within(self, seconds: float) -> bool:
        """Whether drawing was reported since the last ``forget``, waiting up to ``seconds``
        for it."""
        if self._display.pending_events():
            return True
        readable, _, _ = select.select([self._display.fileno()], [], [], max(seconds, 0.0))
        return bool(readable) and bool(self._display.pending_events())

    def close(self) -> None:
        self._display.close()


class _NoReports:
    """``ScreenChanges`` for an X server without DAMAGE: drawing may have happened at any
    moment, so the wait grabs the screen every ``interval``."""

    def forget(self) -> None:
        pass

    def drawn_within(self, seconds: float) -> bool:
        return True


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


def pgm_bytes(image: Image.Image) -> bytes:
    """An image in grey (Pillow's ``convert("L")``, the grey a screen comparison works on) as a
    binary PGM (P5): a short header and one byte a pixel."""
    width, height = image.size
    return b"P5\n%d %d\n255\n" % (width, height) + image.convert("L").tobytes()


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
