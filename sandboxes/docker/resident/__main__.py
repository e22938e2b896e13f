"""``python3 -m resident --socket PATH``: serve the tree's operations on a Unix socket.

One thread per connection; requests are served one at a time (each takes a few milliseconds),
so no operation ever sees another half done. The socket is created under a temporary name and
renamed into place once it listens, so its appearance means the helper is ready.
"""

from __future__ import annotations

import argparse
import io
import os
import socketserver
import threading
from typing import Any

from .operations import (
    OPERATIONS,
    PAYLOAD_BYTES,
    PAYLOAD_STREAM,
    ROOT,
    SNAPSHOTS,
    HelperError,
    Tree,
    error_code,
)
from .protocol import (
    PayloadReader,
    PayloadWriter,
    ProtocolError,
    read_header,
    write_header,
    write_message,
)

_LOCK = threading.Lock()


def serve_one(tree: Tree, header: dict[str, Any], source: Any, target: Any) -> None:
    """Answer one request whose header was read from ``source``; write the answer to ``target``."""
    operation = header.get("op")
    arguments = header.get("args") or []
    reader = PayloadReader(source)
    try:
        if operation not in OPERATIONS or not isinstance(arguments, list):
            raise HelperError("EINVAL", f"unknown operation {operation!r}")
        if operation in PAYLOAD_BYTES:
            arguments = [*arguments, reader.read()]
        elif operation in PAYLOAD_STREAM:
            arguments = [*arguments, io.BufferedReader(reader)]
        with _LOCK:
            result, payload = getattr(tree, f"do_{operation}")(*arguments)
            reader.drain()
            if callable(payload):
                write_message_streamed(target, result, payload)
            else:
                write_message(target, {"result": result}, payload)
    except HelperError as error:
        reader.drain()
        write_message(target, {"error": error.code, "detail": error.detail})
    except OSError as error:
        reader.drain()
        write_message(target, {"error": error_code(error), "detail": str(error)})
    except (TypeError, ValueError) as error:
        reader.drain()
        write_message(target, {"error": "EINVAL", "detail": str(error)})


def write_message_streamed(target: Any, result: Any, write: Any) -> None:
    """An answer whose payload ``write`` produces into a file as it goes."""
    write_header(target, {"result": result})
    writer = PayloadWriter(target)
    write(writer)
    writer.finish()


class _Handler(socketserver.StreamRequestHandler):
    tree: Tree
    rfile: Any
    wfile: Any

    def handle(self) -> None:
        while True:
            try:
                header = read_header(self.rfile)
            except (ProtocolError, ValueError):
                return
            if header is None:
                return
            try:
                serve_one(self.tree, header, self.rfile, self.wfile)
            except (ProtocolError, BrokenPipeError, ConnectionResetError):
                return


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def main() -> None:
    parser = argparse.ArgumentParser(prog="python3 -m resident")
    parser.add_argument("--socket", required=True, help="where to listen")
    parser.add_argument("--root", default=ROOT, help="the tree's folder")
    parser.add_argument("--snapshots", default=SNAPSHOTS, help="the snapshots' folder")
    arguments = parser.parse_args()
    os.umask(0o022)
    os.makedirs(arguments.root, exist_ok=True)  # a tmpfs mount point, or made here
    _Handler.tree = Tree(arguments.root, arguments.snapshots)
    pending = f"{arguments.socket}.starting"
    for stale in (pending, arguments.socket):
        if os.path.lexists(stale):
            os.unlink(stale)
    server = _Server(pending, _Handler)
    os.rename(pending, arguments.socket)
    server.serve_forever()


if __name__ == "__main__":
    main()
