"""Archiving pages from a live browser, against an HTTP server the test starts on 127.0.0.1:
every page and what it loads lands in the archive (WARC or folder), byte for byte, and the
archive then serves them offline with the server gone."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentjudge.cli import app
from sandboxes.browser.archive import load_archive
from sandboxes.browser.recording import read_url_list, record_pages
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


@pytest.fixture
def site() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def _check_offline(archive_path: Path, base: str) -> None:
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


async def test_recording_to_a_warc_file(site: str, tmp_path: Path) -> None:
    output = tmp_path / "pages.warc.gz"
    urls = [f"{site}/index.html", f"{site}/about.html", "http://127.0.0.1:9/dead"]
    report = await record_pages(urls, output, timeout_seconds=10)
    assert report.pages == urls[:2]
    assert list(report.failures) == ["http://127.0.0.1:9/dead"]
    archive = load_archive(output)
    for path, (kind, body) in FILES.items():
        captured = archive.lookup(site + path)
        assert captured is not None, path
        assert captured.body() == body
        assert captured.status == 200
        assert captured.content_type == kind
    await _check_offline(output, site)


def test_the_archive_command_writes_a_folder(site: str, tmp_path: Path) -> None:
    urls_file = tmp_path / "urls.txt"
    urls_file.write_text(f"# pages to keep\n{site}/index.html\n\n{site}/about.html\n")
    output = tmp_path / "archive"
    result = CliRunner().invoke(app, ["archive", str(urls_file), str(output)])
    assert result.exit_code == 0, result.output
    assert "archived 2 of 2 pages (4 responses)" in result.output
    archive = load_archive(output)
    assert sorted(archive.urls()) == sorted(site + path for path in FILES)
    captured = archive.lookup(f"{site}/logo.png")
    assert captured is not None
    assert captured.body() == FILES["/logo.png"][1]
    import asyncio

    asyncio.run(_check_offline(output, site))


def test_a_bad_url_list_names_the_line(tmp_path: Path) -> None:
    urls_file = tmp_path / "urls.txt"
    urls_file.write_text("https://example.org/\nftp://example.org/file\n")
    with pytest.raises(ValueError, match=r"urls.txt:2: not an http\(s\) address"):
        read_url_list(urls_file)
    result = CliRunner().invoke(app, ["archive", str(urls_file), str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "urls.txt:2" in result.output
