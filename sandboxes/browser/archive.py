"""Page archives: the fixed set of web responses a browser sandbox answers every request from.

Owns the two on-disk forms of an archive and the lookup by URL:

- a **WARC file** (``.warc`` or ``.warc.gz``, read with ``warcio``): every ``response`` record
  (HTTP status, headers and the decoded body) and ``resource`` record (a body and its type)
  becomes an entry; the first capture of a URL wins; ``request``, ``revisit``, ``warcinfo`` and
  ``metadata`` records are skipped;
- a **page folder**: ``pages.json`` (the index) next to the captured files. The index is
  ``{"format": "agentjudge-page-archive", "version": 1, "pages": [...]}``, each page
  ``{"url", "file", "content_type", "status" (200), "headers" ({}), "captured_at" (optional)}``
  with ``file`` relative to the folder (never leaving it). ``archive_folder`` in
  ``sandboxes.browser.recording`` writes this form.

URLs are looked up without their fragment, with the scheme and host lowercased, the default port
dropped and an empty path read as ``/``. Anything not found gets ``not_archived_response``: a page
saying so, never the network. An archive is read once and never changes; bodies of a page folder
are read on first use.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dataset.models import RelativePath

INDEX_FILE = "pages.json"
"""The index of a page folder."""

FOLDER_FORMAT: Literal["agentjudge-page-archive"] = "agentjudge-page-archive"
"""The ``format`` value of a page folder's index."""

MISS_HEADER = "x-agentjudge-archive"
"""Response header naming where an answer came from: ``hit`` (the archive) or ``miss``."""

# Headers that describe the original transfer, not the decoded body we serve.
_TRANSFER_HEADERS = frozenset(
    {"content-encoding", "transfer-encoding", "content-length", "connection", "keep-alive"}
)


class ArchiveError(ValueError):
    """An archive that cannot be read; the message names the file and the field or record."""


def archive_key(url: str) -> str:
    """The form a URL is stored and looked up under (see the module docstring)."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port
    if port is not None and not (
        (scheme == "http" and port == 80) or (scheme == "https" and port == 443)
    ):
        host = f"{host}:{port}"
    if parts.username:
        host = f"{parts.username}@{host}"
    path = parts.path or "/"
    return urlunsplit((scheme, host, path, parts.query, ""))


@dataclass
class ArchivedResponse:
    """One captured answer: status, headers and body."""

    url: str
    """The URL as captured."""
    status: int
    """The HTTP status code."""
    headers: dict[str, str]
    """Response headers (lowercase names), without the ones describing the original transfer."""
    body_source: bytes | Path
    """The body, or the file holding it (read on first use)."""
    captured_at: str | None = None
    """When the page was captured (ISO 8601), when known."""

    @property
    def content_type(self) -> str:
        """The ``content-type`` header, or ``application/octet-stream``."""
        return self.headers.get("content-type", "application/octet-stream")

    def body(self) -> bytes:
        """The body's bytes (a page folder's file is read now and kept)."""
        if isinstance(self.body_source, Path):
            self.body_source = self.body_source.read_bytes()
        return self.body_source


@dataclass
class PageArchive:
    """The responses of one archive, by looked-up URL (``archive_key``)."""

    source: Path
    """The WARC file or page folder it was read from."""
    entries: dict[str, ArchivedResponse] = field(default_factory=dict)
    """Captured responses by key; the first capture of a URL wins."""

    def add(self, response: ArchivedResponse) -> None:
        """Add a capture unless its URL is already archived."""
        self.entries.setdefault(archive_key(response.url), response)

    def lookup(self, url: str) -> ArchivedResponse | None:
        """The capture of ``url`` (fragment ignored), or None when the archive lacks it."""
        return self.entries.get(archive_key(url))

    def urls(self) -> list[str]:
        """Every archived URL, as captured, sorted."""
        return sorted(response.url for response in self.entries.values())

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[ArchivedResponse]:
        return iter(self.entries.values())


def not_archived_response(url: str, *, document: bool = True) -> tuple[int, dict[str, str], bytes]:
    """What a request outside the archive gets: 404 with a page saying the address was not
    captured (plain text for anything but a document)."""
    headers = {MISS_HEADER: "miss", "cache-control": "no-store"}
    if not document:
        headers["content-type"] = "text/plain; charset=utf-8"
        return 404, headers, f"Not in the archive: {url}\n".encode()
    shown = html.escape(url)
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>Not in the archive</title>"
        "</head><body><h1>Not in the archive</h1>"
        f"<p>The address <code>{shown}</code> was not captured in this page archive.</p>"
        "<p>This browser reads a fixed copy of the web: only archived pages can be opened, "
        "and nothing is fetched from the network.</p></body></html>"
    )
    headers["content-type"] = "text/html; charset=utf-8"
    return 404, headers, page.encode()


# -- page folders --------------------------------------------------------------------------------


class FolderPage(BaseModel):
    """One captured page of a page folder's index."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    url: Annotated[str, Field(min_length=1)]
    """The page's URL (``http`` or ``https``)."""
    file: RelativePath
    """The file holding the body, relative to the folder."""
    content_type: str = "text/html; charset=utf-8"
    """The ``content-type`` the page is served with."""
    status: Annotated[int, Field(ge=100, le=599)] = 200
    """The HTTP status it is served with."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Other response headers to serve (``location`` for a redirect)."""
    captured_at: str | None = None
    """When it was captured (ISO 8601), if known."""


class FolderIndex(BaseModel):
    """A page folder's ``pages.json``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    format: Literal["agentjudge-page-archive"] = FOLDER_FORMAT
    """Names the file's format."""
    version: Literal[1] = 1
    """The format's version."""
    pages: list[FolderPage] = Field(default_factory=list)
    """The captured pages."""


def _problems(error: ValidationError, file: Path) -> str:
    lines = []
    for item in error.errors():
        location = "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in item["loc"]
        ).lstrip(".")
        lines.append(f"{file}: {location or 'index'}: {item['msg']}")
    return "; ".join(lines)


def _served_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {
        name.lower(): value
        for name, value in headers.items()
        if name.lower() not in _TRANSFER_HEADERS
    }


def read_folder(folder: Path) -> PageArchive:
    """Read a page folder; every problem (bad index, missing file, a file leaving the folder)
    raises ``ArchiveError`` naming the file and field."""
    index_file = folder / INDEX_FILE
    try:
        text = index_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ArchiveError(f"{folder}: not a page archive (no {INDEX_FILE})") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ArchiveError(f"{index_file}: cannot read: {error}") from None
    try:
        index = FolderIndex.model_validate_json(text)
    except ValidationError as error:
        raise ArchiveError(_problems(error, index_file)) from None
    root = folder.resolve()
    archive = PageArchive(source=folder)
    problems: list[str] = []
    for number, page in enumerate(index.pages):
        where = f"{index_file}: pages[{number}]"
        if urlsplit(page.url).scheme not in ("http", "https"):
            problems.append(f"{where}.url: only http and https pages can be archived")
            continue
        body = (folder / page.file).resolve()
        if not body.is_relative_to(root):
            problems.append(f"{where}.file: {page.file} leaves the archive folder")
            continue
        if not body.is_file():
            problems.append(f"{where}.file: {page.file} does not exist")
            continue
        headers = _served_headers(page.headers)
        headers["content-type"] = page.content_type
        archive.add(
            ArchivedResponse(
                url=page.url,
                status=page.status,
                headers=headers,
                body_source=body,
                captured_at=page.captured_at,
            )
        )
    if problems:
        raise ArchiveError("; ".join(problems))
    return archive


# -- WARC files ----------------------------------------------------------------------------------

WARC_BODY_LIMIT = 256 * 2**20
"""The largest body one WARC record may decompress to."""

WARC_BYTES_LIMIT = 2 * 2**30
"""The most all bodies of one WARC file may decompress to (a few KB of nested gzip can expand
to gigabytes)."""

WARC_RECORD_LIMIT = 200_000
"""The most records one WARC file may hold."""


def read_warc(path: Path) -> PageArchive:
    """Read a WARC file (gzipped or not); an unreadable record raises ``ArchiveError`` naming
    the file and the record's offset."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.exceptions import ArchiveLoadFailed

    archive = PageArchive(source=path)
    total = 0
    try:
        with path.open("rb") as stream:
            records = ArchiveIterator(stream)
            for count, record in enumerate(records, start=1):
                if count > WARC_RECORD_LIMIT:
                    raise ArchiveError(f"{path}: more than {WARC_RECORD_LIMIT:,} records")
                if record.rec_type not in ("response", "resource"):
                    continue
                url = record.rec_headers.get_header("WARC-Target-URI")
                if not url or urlsplit(url).scheme not in ("http", "https"):
                    continue
                captured = record.rec_headers.get_header("WARC-Date")
                try:
                    body = _bounded_body(record, WARC_BYTES_LIMIT - total)
                except Exception as error:
                    # The offset is asked for only now: warcio reads the record to its end
                    # to tell it.
                    where = f"{path}: record at byte {records.get_record_offset()} ({url})"
                    reason = error if isinstance(error, ArchiveError) else f"unreadable: {error}"
                    raise ArchiveError(f"{where}: {reason}") from None
                total += len(body)
                if record.rec_type == "response" and record.http_headers is not None:
                    status = int(record.http_headers.get_statuscode() or 200)
                    headers = _served_headers(dict(record.http_headers.headers))
                else:
                    status = 200
                    kind = record.rec_headers.get_header("Content-Type")
                    headers = {"content-type": kind or "application/octet-stream"}
                archive.add(
                    ArchivedResponse(
                        url=url,
                        status=status,
                        headers=headers,
                        body_source=body,
                        captured_at=captured,
                    )
                )
    except FileNotFoundError:
        raise ArchiveError(f"{path}: no such archive file") from None
    except ArchiveLoadFailed as error:
        raise ArchiveError(f"{path}: not a readable WARC file: {error}") from None
    if not archive.entries:
        raise ArchiveError(f"{path}: no http(s) response or resource records (is it a WARC file?)")
    return archive


def _bounded_body(record: Any, budget: int) -> bytes:
    """A record's body, decompressed, refused past ``WARC_BODY_LIMIT`` bytes or the archive's
    remaining ``budget``, or when the file ends before the length the record declares."""
    stream = record.content_stream()
    limit = min(WARC_BODY_LIMIT, budget)
    chunks: list[bytes] = []
    size = 0
    while chunk := stream.read(2**16):
        size += len(chunk)
        if size > limit:
            raise ArchiveError(
                f"its body decompresses past {limit:,} bytes (a record holds at most "
                f"{WARC_BODY_LIMIT:,}, an archive {WARC_BYTES_LIMIT:,})"
            )
        chunks.append(chunk)
    missing = getattr(record.raw_stream, "limit", 0)
    if missing:
        raise ArchiveError(
            f"truncated: the file ends {missing:,} bytes before the "
            f"{record.length:,} its record header declares"
        )
    return b"".join(chunks)


def is_warc(path: Path) -> bool:
    """Whether ``path`` names a WARC file (by its suffix) rather than a page folder."""
    return path.name.endswith((".warc", ".warc.gz"))


def load_archive(path: Path) -> PageArchive:
    """Read the archive at ``path``: a WARC file or a page folder."""
    if path.is_dir():
        return read_folder(path)
    if is_warc(path):
        return read_warc(path)
    if not path.exists():
        raise ArchiveError(f"{path}: no such page archive")
    raise ArchiveError(
        f"{path}: not a page archive (a .warc/.warc.gz file or a folder with {INDEX_FILE})"
    )


def write_index(folder: Path, pages: list[FolderPage]) -> Path:
    """Write a page folder's index atomically; return its path."""
    index = FolderIndex(pages=pages)
    target = folder / INDEX_FILE
    temporary = target.with_suffix(".json.tmp")
    temporary.write_text(
        json.dumps(index.model_dump(mode="json", exclude_none=True), indent=2) + "\n",
        encoding="utf-8",
    )
    temporary.replace(target)
    return target
