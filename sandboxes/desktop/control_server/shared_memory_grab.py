"""Screen grabs through the X server's MIT-SHM extension: the server copies its framebuffer into
a shared memory segment instead of sending 8 MB through the X socket.

A grab through the socket (``GetImage``) cost about 20 ms of the control server's CPU and 7 ms of
Xvfb's on a 1920x1080 screen, and replay takes two or three a step. Through shared memory the
X server copies the pixels once and the server reads them in place. The segment is marked for
removal as soon as both sides are attached, so the kernel frees it when the last of them exits,
even one killed outright. Used where the X server offers the extension and shares the server's
IPC namespace (Xvfb started by the same session); ``SharedMemoryGrabber`` raises ``OSError``
otherwise, and the caller grabs through the socket.

Only libX11 and libXext (both on any X desktop) are used, through ``ctypes``: Python's X
libraries have no MIT-SHM. Xlib reports errors asynchronously and exits the process by default,
so an error handler that only records them is installed for the process (the server's other X
clients, python-xlib and Pillow's XCB code, do not go through Xlib's C library).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import threading
from typing import Any

from PIL import Image

_IPC_PRIVATE = 0
_IPC_CREAT = 0o1000
_IPC_RMID = 0
_Z_PIXMAP = 2
_ALL_PLANES = 0xFFFFFFFFFFFFFFFF


class _SegmentInfo(ctypes.Structure):
    """``XShmSegmentInfo``."""

    _fields_ = [
        ("shmseg", ctypes.c_ulong),
        ("shmid", ctypes.c_int),
        ("shmaddr", ctypes.c_void_p),
        ("readOnly", ctypes.c_int),
    ]


class _Image(ctypes.Structure):
    """The leading fields of ``XImage`` (the rest are not read)."""

    _fields_ = [
        ("width", ctypes.c_int),
        ("height", ctypes.c_int),
        ("xoffset", ctypes.c_int),
        ("format", ctypes.c_int),
        ("data", ctypes.c_void_p),
        ("byte_order", ctypes.c_int),
        ("bitmap_unit", ctypes.c_int),
        ("bitmap_bit_order", ctypes.c_int),
        ("bitmap_pad", ctypes.c_int),
        ("depth", ctypes.c_int),
        ("bytes_per_line", ctypes.c_int),
        ("bits_per_pixel", ctypes.c_int),
    ]


_ERROR_HANDLER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
_errors: list[int] = []
"""Error codes Xlib reported since the last check (the handler below appends them)."""


def _note_error(display: int | None, event: int | None) -> int:
    # XErrorEvent: type (int), display (pointer), resourceid (XID), serial, error_code (uchar).
    code = ctypes.cast(event, ctypes.POINTER(ctypes.c_ubyte * 40)).contents[32] if event else 0
    _errors.append(int(code))
    return 0


_record_error = _ERROR_HANDLER(_note_error)
"""``_note_error`` as Xlib's error handler (kept referenced for the process's life)."""


def _library(name: str, soname: str) -> Any:
    return ctypes.CDLL(ctypes.util.find_library(name) or soname)


@functools.cache
def _libraries() -> tuple[Any, Any, Any]:
    """libX11, libXext and the C library, with the prototypes of the functions used (set once
    a process), and the error handler installed."""
    x11, xext = _library("X11", "libX11.so.6"), _library("Xext", "libXext.so.6")
    libc = ctypes.CDLL(None, use_errno=True)
    display, number = ctypes.c_void_p, ctypes.c_int
    x11.XOpenDisplay.restype = display
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XDefaultScreen.argtypes = [display]
    x11.XCloseDisplay.argtypes = [display]
    x11.XSync.argtypes = [display, number]
    for function in ("XRootWindow", "XDefaultVisual", "XDefaultDepth", "XDisplayWidth",
                     "XDisplayHeight"):  # fmt: skip
        getattr(x11, function).argtypes = [display, number]
    x11.XRootWindow.restype = ctypes.c_ulong
    x11.XDefaultVisual.restype = ctypes.c_void_p
    x11.XSetErrorHandler.argtypes = [_ERROR_HANDLER]
    x11.XSetErrorHandler.restype = ctypes.c_void_p
    xext.XShmQueryExtension.argtypes = [display]
    xext.XShmCreateImage.restype = ctypes.POINTER(_Image)
    xext.XShmCreateImage.argtypes = [
        display, ctypes.c_void_p, ctypes.c_uint, number, ctypes.c_void_p,
        ctypes.POINTER(_SegmentInfo), ctypes.c_uint, ctypes.c_uint,
    ]  # fmt: skip
    xext.XShmAttach.argtypes = [display, ctypes.POINTER(_SegmentInfo)]
    xext.XShmDetach.argtypes = [display, ctypes.POINTER(_SegmentInfo)]
    xext.XShmGetImage.argtypes = [
        display, ctypes.c_ulong, ctypes.POINTER(_Image), number, number, ctypes.c_ulong,
    ]  # fmt: skip
    libc.shmget.argtypes = [number, ctypes.c_size_t, number]
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = [number, ctypes.c_void_p, number]
    libc.shmdt.argtypes = [ctypes.c_void_p]
    libc.shmctl.argtypes = [number, number, ctypes.c_void_p]
    libc.free.argtypes = [ctypes.c_void_p]
    x11.XSetErrorHandler(_record_error)
    return x11, xext, libc


class SharedMemoryGrabber:
    """Grabs of one X display's root window through MIT-SHM, one at a time."""

    def __init__(self, name: str | None) -> None:
        self._x11, self._xext, self._libc = _libraries()
        self._lock = threading.Lock()
        self._info = _SegmentInfo(shmid=-1)
        self._image: Any = None
        self._display = self._x11.XOpenDisplay(name.encode() if name else None)
        if not self._display:
            raise OSError(f"cannot open the X display {name!r}")
        try:
            self._attach()
        except OSError:
            self.close()
            raise

    def _attach(self) -> None:
        x11, xext, libc, display = self._x11, self._xext, self._libc, self._display
        if not xext.XShmQueryExtension(display):
            raise OSError("the X server has no MIT-SHM extension")
        screen = x11.XDefaultScreen(display)
        self.root = x11.XRootWindow(display, screen)
        self.size = (x11.XDisplayWidth(display, screen), x11.XDisplayHeight(display, screen))
        image = xext.XShmCreateImage(
            display, x11.XDefaultVisual(display, screen), x11.XDefaultDepth(display, screen),
            _Z_PIXMAP, None, ctypes.byref(self._info), *self.size,
        )  # fmt: skip
        if not image or image.contents.bits_per_pixel != 32:
            raise OSError("the X server's screen is not 32 bits a pixel")
        self._image = image
        self._stride = image.contents.bytes_per_line
        length = self._stride * self.size[1]
        shmid = libc.shmget(_IPC_PRIVATE, length, _IPC_CREAT | 0o600)
        if shmid < 0:
            raise OSError(ctypes.get_errno(), "shmget failed")
        self._info.shmid = shmid
        address = libc.shmat(shmid, None, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "shmat failed")
        self._info.shmaddr = image.contents.data = address
        self._info.readOnly = 0
        _errors.clear()
        attached = xext.XShmAttach(display, ctypes.byref(self._info))
        x11.XSync(display, 0)
        # Marked for removal now: it goes when the X server and this process have detached.
        libc.shmctl(shmid, _IPC_RMID, None)
        if not attached or _errors:
            raise OSError("the X server could not attach the segment (another IPC namespace?)")
        self._buffer = (ctypes.c_char * length).from_address(address)

    def grab(self) -> Image.Image:
        """The root window as an RGB image; ``OSError`` when the X server refused."""
        with self._lock:
            _errors.clear()
            grabbed = self._xext.XShmGetImage(
                self._display, self.root, self._image, 0, 0, _ALL_PLANES
            )
            if not grabbed or _errors:
                raise OSError("the X server refused the shared-memory grab")
            return Image.frombuffer("RGB", self.size, self._buffer, "raw", "BGRX", self._stride, 1)

    def close(self) -> None:
        """Detach the segment and close the display connection."""
        with self._lock:
            if self._display and self._info.shmaddr:
                self._xext.XShmDetach(self._display, ctypes.byref(self._info))
                self._x11.XSync(self._display, 0)
            if self._info.shmaddr:
                self._libc.shmdt(ctypes.c_void_p(self._info.shmaddr))
                self._info.shmaddr = None
            if self._image:  # the XImage itself (XDestroyImage would free its data too)
                self._libc.free(ctypes.cast(self._image, ctypes.c_void_p))
                self._image = None
            if self._display:
                self._x11.XCloseDisplay(self._display)
                self._display = None
