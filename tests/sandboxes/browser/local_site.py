"""A small site served over HTTP on 127.0.0.1 for archiving tests (``site`` fixture helper)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sandboxes.browser.archive import load_archive
from sandboxes.browser.sandbox import BrowserProvider

FILES = {
    "/index.html": (
        "text/html; charset=utf-8",
        b"<!doctype html><html><head><title>Local news</title>"
        b"<link rel='stylesheet' href='/style.css'></head>"
        b"<body><h1 id='headline'>Bridge reopens</h1><img src='/logo.png' alt='logo'>"
        b"<a href='/about.html'>About</a></body></html>",
    ),
    "/about.html": (
        "text/html; charset=utf-8",
        b"<!doctype html><html><head><title>About</title></head><body><p>Since 1901.</p>"
        b"</body></html>",
    ),
    "/style.css": ("text/css", b"#headline { color: rgb(200, 10, 20); }"),
    "/logo.png": ("image/png", b"\x89PNG\r\n\x1a\n" + bytes(range(64))),
}


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        entry = FILES.get(self.path)
        if entry is None:
            self.send_error(404)
            return
        kind, body = entry
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@contextmanager
def serving() -> Iterator[str]:
    """Serve ``FILES`` on a free local port; yield the base address."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def check_offline(archive_path: Path, base: str) -> None:
    """The archive shows the page, its style applied, with no request outside it."""
    archive = load_archive(archive_path)
    async with BrowserProvider() as provider:
        sandbox = await provider.open(archive, [f"{base}/index.html"])
        page = sandbox.session.page
        color = await page.eval_on_selector("#headline", "e => getComputedStyle(e).color")
        assert color == "rgb(200, 10, 20)"
        loaded = await page.eval_on_selector("img", "e => e.complete")
        assert loaded is True
        assert sandbox.session.traffic.refused == []
