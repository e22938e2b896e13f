"""``python3 -m control_server``: serve an existing desktop, or start a whole desktop session.

``serve`` answers for the display in ``DISPLAY``; ``session`` starts the desktop first (see
``session``). Either listens on a Unix socket (``--socket``) or on ``--host``/``--port``
(127.0.0.1 by default; a container publishes it to the host's 127.0.0.1 only).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import sys
from pathlib import Path


def _size(text: str) -> tuple[int, int]:
    width, _, height = text.partition("x")
    return int(width), int(height)


def _keep_freed_buffers() -> None:
    """Raise glibc's ``mmap`` and trim thresholds (32 MB, 256 MB) so that the screen-sized
    buffers of grabs and answers are reused, not faulted in page by page anew each time (a
    screenshot cost 25 ms with about 4,000 page faults, 7 ms with none). The host's replay does
    the same (``sandboxes.process_memory``); this server runs alone inside the desktop and
    imports nothing of the host's."""
    with contextlib.suppress(OSError, AttributeError):
        mallopt = ctypes.CDLL(None).mallopt
        mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        mallopt(-3, 32 * 2**20)  # M_MMAP_THRESHOLD
        mallopt(-1, 256 * 2**20)  # M_TRIM_THRESHOLD


def main(argv: list[str] | None = None) -> int:
    _keep_freed_buffers()
    parser = argparse.ArgumentParser(prog="control_server", description=__doc__)
    parser.add_argument("mode", choices=["serve", "session"])
    parser.add_argument("--socket", help="listen on this Unix socket instead of a TCP port")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5000)
    parser.add_argument("--display", default=os.environ.get("DISPLAY", ":1"))
    parser.add_argument("--size", type=_size, default=(1920, 1080), help="WIDTHxHEIGHT")
    parser.add_argument("--profile", type=Path, default=Path.home() / ".agentjudge-office")
    parser.add_argument("--document", type=Path, help="the document LibreOffice opens at start")
    options = parser.parse_args(argv)
    if options.mode == "session":
        from .session import run_session

        return run_session(
            display=options.display,
            size=options.size,
            profile=options.profile,
            document=options.document,
            socket_path=options.socket,
            host=options.host,
            port=options.port,
        )
    from .http_api import ServerState, make_server
    from .screen import Screen
    from .session import office_command

    state = ServerState(Screen(options.display), office_command(options.profile))
    server = make_server(state, host=options.host, port=options.port, socket_path=options.socket)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever(poll_interval=0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
