"""``make perf-sockets``: what checking a sandbox's socket costs (``sandboxes.sandbox_sockets``).

Measures, each as a median and a 95th percentile over many rounds, in microseconds:
- the check before every request (``SandboxSocket.check``: one ``lstat``);
- what a new connection adds (``SandboxSocket.open``: an ``O_PATH`` open and ``fstat``), and a
  whole new connection through the checked descriptor (``SandboxSocket.connect``, connecting to
  ``/proc/self/fd/N``) against a plain ``connect`` to the path, interleaved;
- one HTTP request of the desktop client (``DesktopClient.screen_size``) over a Unix socket,
  through ``SocketTransport`` (checked) and through httpx's stock Unix transport (unchecked),
  to a small HTTP server that closes every connection after its answer, as the control server
  does (so every request also makes a new connection: the dearest case).

Needs nothing but this machine (no desktop, no Docker).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import socketserver
import statistics
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx2

from sandboxes.desktop.client import DesktopClient
from sandboxes.sandbox_sockets import SandboxSocket


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.dumps({"width": 1920, "height": 1080}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self) -> tuple[Any, Any]:
        connection, _ = super().get_request()
        return connection, ("unix", 0)


def _figures(name: str, seconds: list[float]) -> None:
    micro = sorted(value * 1e6 for value in seconds)
    p95 = micro[int(len(micro) * 0.95) - 1]
    print(f"{name:<52} median {statistics.median(micro):8.1f} µs   p95 {p95:8.1f} µs")


def _timed(action: Callable[[], object], rounds: int) -> list[float]:
    spent = []
    for _ in range(rounds):
        began = time.perf_counter()
        action()
        spent.append(time.perf_counter() - began)
    return spent


async def _timed_async(action: Callable[[], Awaitable[object]], rounds: int) -> list[float]:
    spent = []
    for _ in range(rounds):
        began = time.perf_counter()
        await action()
        spent.append(time.perf_counter() - began)
    return spent


async def _requests(path: Path, guard: SandboxSocket, rounds: int) -> None:
    plain = DesktopClient(transport=httpx2.AsyncHTTPTransport(uds=str(path)))
    plain.base_url = "http://desktop"
    checked = DesktopClient(socket=guard)
    async with plain, checked:
        for client in (plain, checked):  # warm up
            await client.screen_size()
        # Interleaved, so that the machine's load falls on both alike.
        unchecked_times: list[float] = []
        checked_times: list[float] = []
        for _ in range(rounds // 50):
            unchecked_times += await _timed_async(plain.screen_size, 50)
            checked_times += await _timed_async(checked.screen_size, 50)
    _figures("request, stock Unix transport (unchecked)", unchecked_times)
    _figures("request, SocketTransport (checked)", checked_times)
    print(
        "checked minus unchecked (medians)".ljust(52),
        f"{(statistics.median(checked_times) - statistics.median(unchecked_times)) * 1e6:8.1f} µs",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000, help="rounds per figure")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aj-perf-sockets-") as folder:
        path = Path(folder) / "control.sock"
        server = _Server(str(path), _Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        guard = SandboxSocket(path, os.geteuid(), "the benchmark's socket")
        try:
            print(f"load average {os.getloadavg()[0]:.2f}; {options.rounds} rounds each")
            _figures("check before a request (lstat)", _timed(guard.check, options.rounds))

            def plain_connect() -> None:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
                    connection.connect(str(path))

            def checked_connect() -> None:
                guard.connect().close()

            def opened() -> None:
                os.close(guard.open())

            _figures("added per connection (O_PATH open, fstat)", _timed(opened, options.rounds))
            plain_times: list[float] = []
            checked_times: list[float] = []
            for _ in range(options.rounds // 50):  # interleaved, as below
                plain_times += _timed(plain_connect, 50)
                checked_times += _timed(checked_connect, 50)
            _figures("new connection, plain connect(path)", plain_times)
            _figures("new connection, checked descriptor", checked_times)
            asyncio.run(_requests(path, guard, options.rounds))
            print(f"load average {os.getloadavg()[0]:.2f}")
        finally:
            server.shutdown()
            server.server_close()


if __name__ == "__main__":
    main()
