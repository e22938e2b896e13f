"""``agentjudge archive``, the browser kind's command: record pages from a live browser into an
archive, against an HTTP server the test starts on 127.0.0.1; a bad URL list is exit code 2
naming the line."""

from __future__ import annotations

import asyncio
from pathlib import Path

from typer.testing import CliRunner

from agentjudge.cli import app
from sandboxes.browser.archive import load_archive
from tests.sandboxes.browser.local_site import FILES, check_offline, serving


def test_the_archive_command_writes_a_folder(tmp_path: Path) -> None:
    with serving() as site:
        _archive_folder(site, tmp_path)


def _archive_folder(site: str, tmp_path: Path) -> None:
    urls_file = tmp_path / "urls.txt"
    urls_file.write_text(f"# pages to keep\n{site}/index.html\n\n{site}/about.html\n")
    output = tmp_path / "archive"
    result = CliRunner().invoke(app, ["archive", str(urls_file), str(output), "--allow-private"])
    assert result.exit_code == 0, result.output
    assert "archived 2 of 2 pages (4 responses)" in result.output
    archive = load_archive(output)
    assert sorted(archive.urls()) == sorted(site + path for path in FILES)
    captured = archive.lookup(f"{site}/logo.png")
    assert captured is not None
    assert captured.body() == FILES["/logo.png"][1]
    asyncio.run(check_offline(output, site))


def test_a_bad_url_list_names_the_line(tmp_path: Path) -> None:
    urls_file = tmp_path / "urls.txt"
    urls_file.write_text("https://example.org/\nftp://example.org/file\n")
    result = CliRunner().invoke(app, ["archive", str(urls_file), str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "urls.txt:2" in result.output
