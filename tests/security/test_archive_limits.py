"""Hostile WARC files read with the real ``warcio``: a record that decompresses past its limit, a
file cut short and a record whose header lies about its length are errors naming the record's
byte offset, never pages loaded in silence."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from sandboxes.browser.archive import ArchiveError, load_archive

PAGE = b"<html><body><p>an archived page</p></body></html>"


def _warc(path: Path, pages: list[tuple[str, bytes, list[tuple[str, str]]]], *, gz: bool) -> Path:
    with path.open("wb") as stream:
        writer = WARCWriter(stream, gzip=gz)
        for url, body, headers in pages:
            http = StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")
            record = writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), http_headers=http
            )
            writer.write_record(record)
    return path


def test_a_record_decompressing_past_its_limit_is_refused_naming_its_offset(
    tmp_path: Path,
) -> None:
    path = _warc(
        tmp_path / "bomb.warc.gz",
        [
            ("http://site.test/", PAGE, [("Content-Type", "text/html")]),
            ("http://site.test/big", b"\0" * (300 * 2**20), [("Content-Type", "text/html")]),
        ],
        gz=True,
    )
    assert path.stat().st_size < 2 * 2**20  # a small file that expands to 300 MiB
    with pytest.raises(ArchiveError, match=r"record at byte \d+ \(http://site.test/big\)"):
        load_archive(path)


def test_a_truncated_warc_is_an_error_naming_the_cut_record(tmp_path: Path) -> None:
    whole = _warc(
        tmp_path / "whole.warc",
        [
            ("http://site.test/", PAGE, [("Content-Type", "text/html")]),
            ("http://site.test/next", PAGE * 20, [("Content-Type", "text/html")]),
        ],
        gz=False,
    )
    assert len(load_archive(whole)) == 2
    cut = tmp_path / "cut.warc"
    cut.write_bytes(whole.read_bytes()[:-300])
    with pytest.raises(
        ArchiveError, match=r"record at byte \d+ \(http://site.test/next\): truncated"
    ):
        load_archive(cut)


def test_a_record_that_declares_more_than_it_holds_is_an_error(tmp_path: Path) -> None:
    whole = _warc(
        tmp_path / "whole.warc",
        [("http://site.test/", PAGE, [("Content-Type", "text/html")])],
        gz=False,
    )
    data = whole.read_bytes()
    start = data.index(b"Content-Length: ") + len(b"Content-Length: ")
    end = data.index(b"\r\n", start)
    declared = int(data[start:end])
    lying = tmp_path / "lying.warc"
    lying.write_bytes(data[:start] + str(declared + 5000).encode() + data[end:])
    with pytest.raises(ArchiveError, match=r"record at byte 0 \(http://site.test/\): truncated"):
        load_archive(lying)
