"""Recording pages from a live browser into a page archive (a WARC file or a page folder).

Owns ``record_pages``: open each address of a list in a headless Chromium that *does* reach the
network (the one place this runtime lets a browser out, for users who have the web), keep every
response the page loads (the document and its styles, scripts, images, frames), and write them
as an archive ``sandboxes.browser.archive`` reads: a page folder (``pages.json`` and ``files/``)
or a gzipped WARC file (``.warc.gz``, ``response`` records with their HTTP headers, after a
``warcinfo`` record). The first capture of an address wins; an address that fails to load is
reported and the others go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import ipaddress
import mimetypes
import shutil
import socket
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from sandboxes.browser.archive import (
    FolderPage,
    archive_key,
    is_warc,
    write_index,
)
from sandboxes.chromium import ChromiumProcess

if TYPE_CHECKING:
    from playwright.async_api import Response, Route

ArchiveFormat = Literal["warc", "folder"]

SETTLE_MS = 2_000
"""How long a page may keep loading after its ``load`` event (late images, fetches)."""


@dataclass
class Capture:
    """One recorded response."""

    url: str
    status: int
    headers: dict[str, str]
    body: bytes
    captured_at: str


@dataclass
class RecordingReport:
    """What ``record_pages`` did."""

    output: Path
    """The archive written."""
    pages: list[str] = field(default_factory=list)
    """The listed addresses that loaded."""
    failures: dict[str, str] = field(default_factory=dict)
    """Listed addresses that did not load, with the reason."""
    responses: int = 0
    """Responses written (documents and everything they loaded)."""


def read_url_list(path: Path) -> list[str]:
    """The addresses of a URL list: one per line; blank lines and ``#`` comments skipped. A line
    that is not an http(s) address raises ``ValueError`` naming the file and line."""
    urls: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if urlsplit(text).scheme not in ("http", "https") or not urlsplit(text).netloc:
            raise ValueError(f"{path}:{number}: not an http(s) address: {text!r}")
        urls.append(text)
    return urls


async def record_pages(
    urls: list[str],
    output: Path,
    *,
    archive_format: ArchiveFormat | None = None,
    timeout_seconds: float = 30.0,
    allow_private: bool = False,
) -> RecordingReport:
    """Open every address in a live browser and write what loaded to ``output`` (a WARC file
    when its name ends in ``.warc``/``.warc.gz`` or ``archive_format`` says so, else a folder).

    Requests (pages and everything they load) to loopback, private, link-local or otherwise
    non-public addresses are refused unless ``allow_private``: a listed page must not make the
    archive keep what a service on this machine or its network answers."""
    chosen: ArchiveFormat = archive_format or ("warc" if is_warc(output) else "folder")
    captures: dict[str, Capture] = {}
    pending: set[asyncio.Task[None]] = set()
    report = RecordingReport(output=output)

    async def keep(response: Response) -> None:
        url = response.url
        if urlsplit(url).scheme not in ("http", "https") or archive_key(url) in captures:
            return
        try:
            body = b"" if 300 <= response.status < 400 else await response.body()
        except Exception:
            return  # a response without a body (aborted, or a redirect)
        captures.setdefault(
            archive_key(url),
            Capture(
                url=url,
                status=response.status,
                headers=await response.all_headers(),
                body=body,
                captured_at=datetime.now(UTC).isoformat(timespec="seconds"),
            ),
        )

    def on_response(response: Response) -> None:
        task = asyncio.get_running_loop().create_task(keep(response))
        pending.add(task)
        task.add_done_callback(pending.discard)

    process = await ChromiumProcess.start(offline=False)
    try:
        context = await process.new_context()
        if not allow_private:
            await context.route("**/*", _public_only)
        context.on("response", on_response)
        page = await context.new_page()
        for url in urls:
            try:
                response = await page.goto(url, wait_until="load", timeout=timeout_seconds * 1000)
            except Exception as error:
                report.failures[url] = str(error).strip().splitlines()[0]
                continue
            if response is None:
                report.failures[url] = "no response"
                continue
            with contextlib.suppress(Exception):  # still busy: keep what arrived
                await page.wait_for_load_state("networkidle", timeout=SETTLE_MS)
            report.pages.append(url)
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        await context.close()
    finally:
        await process.close()
    ordered = sorted(captures.values(), key=lambda capture: capture.url)
    if chosen == "warc":
        await asyncio.to_thread(_write_warc, output, ordered)
    else:
        await asyncio.to_thread(_write_folder, output, ordered)
    report.responses = len(ordered)
    return report


async def _public_only(route: Route) -> None:
    host = urlsplit(route.request.url).hostname
    if host is not None and await asyncio.to_thread(is_private_host, host):
        await route.abort("addressunreachable")
    else:
        await route.continue_()


def is_private_host(host: str) -> bool:
    """Whether ``host`` is, or resolves to, an address that is not public (loopback, private,
    link-local, reserved); a name that does not resolve counts as private."""
    try:
        found = socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return True
    for _, _, _, _, address in found:
        ip = ipaddress.ip_address(str(address[0]).split("%", 1)[0])
        if not ip.is_global:
            return True
    return False


def _file_name(capture: Capture) -> str:
    digest = hashlib.sha256(capture.url.encode()).hexdigest()[:20]
    kind = capture.headers.get("content-type", "").split(";")[0].strip()
    suffix = (mimetypes.guess_extension(kind) if kind else None) or ".bin"
    return f"files/{digest}{suffix}"


_NOT_STORED = frozenset({"content-encoding", "transfer-encoding", "content-length", "set-cookie"})


def _write_folder(output: Path, captures: list[Capture]) -> None:
    if output.exists():
        shutil.rmtree(output / "files", ignore_errors=True)
    (output / "files").mkdir(parents=True, exist_ok=True)
    pages: list[FolderPage] = []
    for capture in captures:
        name = _file_name(capture)
        (output / name).write_bytes(capture.body)
        headers = {
            key: value
            for key, value in capture.headers.items()
            if key not in _NOT_STORED and key != "content-type"
        }
        pages.append(
            FolderPage(
                url=capture.url,
                file=name,
                content_type=capture.headers.get("content-type", "application/octet-stream"),
                status=capture.status,
                headers=headers,
                captured_at=capture.captured_at,
            )
        )
    write_index(output, pages)


def _write_warc(output: Path, captures: list[Capture]) -> None:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    output.parent.mkdir(parents=True, exist_ok=True)
    temporary = output.with_name(output.name + ".tmp")
    with temporary.open("wb") as stream:
        writer = WARCWriter(stream, gzip=output.name.endswith(".gz"))
        writer.write_record(
            writer.create_warcinfo_record(
                output.name, {"software": "agentjudge archive", "format": "WARC/1.1"}
            )
        )
        for capture in captures:
            headers = [
                (key, value) for key, value in capture.headers.items() if key not in _NOT_STORED
            ]
            headers.append(("content-length", str(len(capture.body))))
            http_headers = StatusAndHeaders(
                f"{capture.status} {_reason(capture.status)}", headers, protocol="HTTP/1.1"
            )
            record = writer.create_warc_record(
                capture.url,
                "response",
                payload=io.BytesIO(capture.body),
                http_headers=http_headers,
                warc_headers_dict={"WARC-Date": capture.captured_at},
            )
            writer.write_record(record)
    temporary.replace(output)


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"
