"""Archiving pages from a live browser, against an HTTP server the test starts on 127.0.0.1:
every page and what it loads lands in the archive (WARC or folder), byte for byte, and the
archive then serves them offline with the server gone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxes.browser.archive import load_archive
from sandboxes.browser.recording import read_url_list, record_pages
from tests.sandboxes.browser.local_site import FILES, check_offline, serving


@pytest.fixture
def site() -> Iterator[str]:
    with serving() as base:
        yield base


async def test_recording_to_a_warc_file(site: str, tmp_path: Path) -> None:
    output = tmp_path / "pages.warc.gz"
    urls = [f"{site}/index.html", f"{site}/about.html", "http://127.0.0.1:9/dead"]
    report = await record_pages(urls, output, timeout_seconds=10, allow_private=True)
    assert report.pages == urls[:2]
    assert list(report.failures) == ["http://127.0.0.1:9/dead"]
    archive = load_archive(output)
    for path, (kind, body) in FILES.items():
        captured = archive.lookup(site + path)
        assert captured is not None, path
        assert captured.body() == body
        assert captured.status == 200
        assert captured.content_type == kind
    await check_offline(output, site)


def test_a_bad_url_list_names_the_line(tmp_path: Path) -> None:
    urls_file = tmp_path / "urls.txt"
    urls_file.write_text("# keep\nhttps://example.org/\n\nftp://example.org/file\n")
    with pytest.raises(ValueError, match=r"urls\.txt:4: not an http\(s\) address"):
        read_url_list(urls_file)
    urls_file.write_text("# keep\nhttps://example.org/\n\nhttps://example.org/b\n")
    assert read_url_list(urls_file) == ["https://example.org/", "https://example.org/b"]
