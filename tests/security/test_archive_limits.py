"""Hostile WARC files read with the real ``warcio``: a record that decompresses past its limit (also
through two layers of gzip), a file cut short and a record whose header lies about its length are
errors naming the record's byte offset, never pages loaded in silence."""

from __future__ import annotations

import gzip
import io
import re
import zlib
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from sandboxes.browser.archive import WARC_BODY_LIMIT, ArchiveError, load_archive

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


def _gzip_of_zeros(size: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip container
    block = bytes(2**24)
    parts = [packer.compress(block) for _ in range(size // len(block))]
    return b"".join(parts) + packer.flush()


def test_a_gzip_in_gzip_record_is_refused_naming_the_limit_and_offset(tmp_path: Path) -> None:
    """A payload sent with ``Content-Encoding: gzip`` inside a gzipped WARC: two layers, each
    unpacked by the reader, 1 GiB of body from a file of a few kilobytes."""
    inner = _gzip_of_zeros(2**30)
    path = _warc(
        tmp_path / "nested.warc.gz",
        [
            ("http://site.test/", PAGE, [("Content-Type", "text/html")]),
            (
                "http://site.test/nested",
                inner,
                [("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
            ),
        ],
        gz=True,
    )
    assert path.stat().st_size < 8 * 2**10
    first_record = len(gzip.compress(b""))  # the second record starts past the first
    with pytest.raises(ArchiveError) as refused:
        load_archive(path)
    message = str(refused.value)
    match = re.search(r"record at byte (\d+) \(http://site.test/nested\)", message)
    assert match is not None, message
    assert int(match.group(1)) > first_record
    assert f"decompresses past {WARC_BODY_LIMIT:,} bytes" in message
