"""A small archived site for browser tests: a page folder written on the fly.

Pages: a home page with links (one to a page that is not archived, one opening a new tab), a
search form (text box, drop-down, button) whose GET submission is archived, a page that
changes on hover, a page whose text appears late, and a page that tries to reach a local port
(``probe``) every way a page can: image, script, fetch, beacon, WebSocket, iframe, prefetch.
"""

from __future__ import annotations

import json
from pathlib import Path

BASE = "https://wiki.example"

HOME = f"{BASE}/"
LYON = f"{BASE}/wiki/Lyon"
RESULTS = f"{BASE}/search?q=lyon&lang=fr"
HOVER = f"{BASE}/hover"
LATE = f"{BASE}/late"
PROBE = f"{BASE}/probe"
MISSING = f"{BASE}/wiki/Atlantis"


def _page(title: str, body: str) -> str:
    return f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>"


def site_pages(port: int = 9) -> dict[str, str]:
    """URL → HTML of every archived page; ``port`` is the local port the probe page calls."""
    local = f"127.0.0.1:{port}"
    return {
        HOME: _page(
            "Encyclopedia",
            "<h1>Encyclopedia</h1>"
            "<a href='/wiki/Lyon'>Lyon</a> "
            "<a href='/wiki/Atlantis'>Atlantis</a> "
            "<a href='/wiki/Lyon' target='_blank'>Lyon in a new tab</a>"
            "<form action='/search'>"
            "<input name='q' aria-label='Search terms'>"
            "<select name='lang' aria-label='Language'>"
            "<option value='en'>English</option><option value='fr'>French</option></select>"
            "<button type='submit'>Search</button></form>",
        ),
        LYON: _page("Lyon", "<h1>Lyon</h1><p>Lyon has 522,250 inhabitants (2021 census).</p>"),
        RESULTS: _page(
            "Search results",
            "<h1>Results for lyon (French)</h1><ul><li><a href='/wiki/Lyon'>Lyon</a></li></ul>",
        ),
        HOVER: _page(
            "Hover",
            "<button onmouseover=\"document.getElementById('tip').textContent='Founded 43 BC'\">"
            "Founding</button><p id='tip'>hover the button</p>",
        ),
        LATE: _page(
            "Late",
            "<p id='out'>loading</p><script>setTimeout(() => "
            "{document.getElementById('out').textContent = 'Census figures ready'}, 300)"
            "</script>",
        ),
        PROBE: _page(
            "Probe",
            f"<link rel='prefetch' href='http://{local}/prefetch'>"
            f"<link rel='dns-prefetch' href='//{local}'>"
            f"<img src='http://{local}/pixel.png'>"
            f"<script src='http://{local}/script.js'></script>"
            f"<iframe src='http://{local}/frame'></iframe>"
            "<p id='status'>probing</p><script>"
            f"fetch('http://{local}/fetch').catch(() => null);"
            f"navigator.sendBeacon('http://{local}/beacon', 'x');"
            f"try {{ new WebSocket('ws://{local}/socket'); }} catch (e) {{}}"
            "setTimeout(() => {document.getElementById('status').textContent = 'probed'}, 200);"
            "</script>",
        ),
    }


def write_site(folder: Path, port: int = 9) -> Path:
    """Write the site as a page folder at ``folder``; return it."""
    (folder / "files").mkdir(parents=True, exist_ok=True)
    pages = []
    for number, (url, html) in enumerate(site_pages(port).items()):
        name = f"files/page{number}.html"
        (folder / name).write_text(html, encoding="utf-8")
        pages.append({"url": url, "file": name, "content_type": "text/html; charset=utf-8"})
    index = {"format": "agentjudge-page-archive", "version": 1, "pages": pages}
    (folder / "pages.json").write_text(json.dumps(index, indent=2), encoding="utf-8")
    return folder


class ConnectionCounter:
    """A TCP listener on 127.0.0.1 that counts every connection made to it (and answers none):
    the witness that nothing a browser does reaches the port."""

    def __init__(self) -> None:
        import socket

        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(64)
        self._socket.settimeout(0.1)
        self.port: int = self._socket.getsockname()[1]
        self.connections = 0
        self._running = True
        import threading

        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        import contextlib

        while self._running:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                continue
            self.connections += 1
            with contextlib.suppress(OSError):
                connection.close()

    def close(self) -> None:
        self._running = False
        self._thread.join(timeout=2)
        self._socket.close()

    def __enter__(self) -> ConnectionCounter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
