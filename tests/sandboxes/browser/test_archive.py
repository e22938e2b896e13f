"""Reading page archives: page folders (with every problem named by file and field) and WARC
files written by warcio (compressed bodies decoded, non-response records skipped)."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from sandboxes.browser.archive import (
    ArchiveError,
    archive_key,
    load_archive,
    not_archived_response,
)


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("HTTPS://Wiki.Example/Page#section", "https://wiki.example/Page"),
        ("https://wiki.example:443/a?b=1", "https://wiki.example/a?b=1"),
        ("http://wiki.example:80", "http://wiki.example/"),
        ("http://wiki.example:8080/x", "http://wiki.example:8080/x"),
    ],
)
def test_archive_keys(url: str, key: str) -> None:
    assert archive_key(url) == key


def _folder(root: Path, pages: list[dict[str, object]], files: dict[str, bytes]) -> Path:
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(body)
    index = {"format": "agentjudge-page-archive", "version": 1, "pages": pages}
    (root / "pages.json").write_text(json.dumps(index))
    return root


def test_a_page_folder_is_read(tmp_path: Path) -> None:
    root = _folder(
        tmp_path,
        [
            {"url": "https://shop.example/", "file": "a.html"},
            {
                "url": "https://shop.example/old",
                "file": "a.html",
                "status": 301,
                "headers": {"Location": "/", "Content-Length": "5"},
            },
            {"url": "https://shop.example/", "file": "b.html"},  # a later capture: ignored
        ],
        {"a.html": b"first", "b.html": b"second"},
    )
    archive = load_archive(root)
    assert len(archive) == 2
    home = archive.lookup("https://shop.example/#top")
    assert home is not None
    assert home.body() == b"first"
    assert home.content_type == "text/html; charset=utf-8"
    moved = archive.lookup("https://shop.example/old")
    assert moved is not None
    assert moved.status == 301
    assert moved.headers["location"] == "/"
    assert "content-length" not in moved.headers
    assert archive.lookup("https://shop.example/new") is None


def test_every_folder_problem_is_named(tmp_path: Path) -> None:
    (tmp_path / "outside.html").write_text("x")
    root = tmp_path / "archive"
    root.mkdir()
    (root / "link.html").symlink_to(tmp_path / "outside.html")
    _folder(
        root,
        [
            {"url": "https://a.example/", "file": "missing.html"},
            {"url": "ftp://a.example/", "file": "ok.html"},
            {"url": "https://a.example/x", "file": "link.html"},
        ],
        {"ok.html": b"ok"},
    )
    with pytest.raises(ArchiveError) as raised:
        load_archive(root)
    message = str(raised.value)
    assert "pages[0].file: missing.html does not exist" in message
    assert "pages[1].url: only http and https" in message
    assert "pages[2].file: link.html leaves the archive folder" in message


def test_a_malformed_index_names_its_field(tmp_path: Path) -> None:
    (tmp_path / "pages.json").write_text(
        json.dumps({"format": "agentjudge-page-archive", "pages": [{"url": "https://a/"}]})
    )
    with pytest.raises(ArchiveError, match=r"pages.json: pages\[0\].file: Field required"):
        load_archive(tmp_path)
    (tmp_path / "pages.json").write_text(
        json.dumps({"pages": [{"url": "https://a/", "file": "../x"}]})
    )
    with pytest.raises(ArchiveError, match=r"pages\[0\].file"):
        load_archive(tmp_path)


def test_not_an_archive(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match=r"no pages\.json"):
        load_archive(tmp_path)
    with pytest.raises(ArchiveError, match="no such page archive"):
        load_archive(tmp_path / "nothing.tar")
    (tmp_path / "bad.warc.gz").write_bytes(b"not a warc at all")
    with pytest.raises(ArchiveError, match=r"bad\.warc\.gz"):
        load_archive(tmp_path / "bad.warc.gz")


def _warc(path: Path) -> Path:
    with path.open("wb") as stream:
        writer = WARCWriter(stream, gzip=True)
        body = gzip.compress(b"<html><title>News</title>Compressed body</html>")
        headers = StatusAndHeaders(
            "200 OK",
            [
                ("Content-Type", "text/html"),
                ("Content-Encoding", "gzip"),
                ("Content-Length", str(len(body))),
            ],
            protocol="HTTP/1.1",
        )
        writer.write_record(
            writer.create_warc_record(
                "https://news.example/today",
                "response",
                payload=io.BytesIO(body),
                http_headers=headers,
            )
        )
        writer.write_record(
            writer.create_warc_record(
                "https://news.example/logo.svg",
                "resource",
                payload=io.BytesIO(b"<svg/>"),
                warc_content_type="image/svg+xml",
            )
        )
        writer.write_record(
            writer.create_warc_record(
                "https://news.example/today",
                "request",
                payload=io.BytesIO(b"GET /today HTTP/1.1\r\n\r\n"),
                warc_content_type="application/http; msgtype=request",
            )
        )
    return path


def test_a_warc_file_is_read(tmp_path: Path) -> None:
    archive = load_archive(_warc(tmp_path / "news.warc.gz"))
    assert sorted(archive.urls()) == [
        "https://news.example/logo.svg",
        "https://news.example/today",
    ]
    page = archive.lookup("https://news.example/today")
    assert page is not None
    assert page.body() == b"<html><title>News</title>Compressed body</html>"
    assert "content-encoding" not in page.headers
    assert page.content_type == "text/html"
    assert page.captured_at is not None
    logo = archive.lookup("https://news.example/logo.svg")
    assert logo is not None
    assert logo.content_type == "image/svg+xml"


def test_the_refusal_page_names_the_address() -> None:
    status, headers, body = not_archived_response("https://x.example/<script>")
    assert status == 404
    assert headers["x-agentjudge-archive"] == "miss"
    assert b"https://x.example/&lt;script&gt;" in body
    status, headers, body = not_archived_response("https://x.example/a.js", document=False)
    assert headers["content-type"].startswith("text/plain")
