"""The ``osworld`` desktop backend: desktops that already run elsewhere, reached by URL.

For users who replay on OSWorld's own image, as AJ-Bench did: an OSWorld VM (or OSWorld's Docker
provider, which boots that VM in a container) runs OSWorld's control server on port 5000, and the
runtime drives it with the same ``DesktopClient`` as its own desktops. The project's control
server answers the same protocol over TCP, which is how this backend is tested.

Each URL is one desktop and serves one user at a time: ``OsworldDesktops.acquire`` leases a free
URL (waiting for one when all are busy), uploads the task's document and opens it; ``release``
hands the URL back after closing LibreOffice and deleting what was uploaded. That is the whole
reset this backend can do over HTTP: other changes a replay or a judge made (files saved
elsewhere, settings) stay on the machine. OSWorld itself reverts its VM to a snapshot between
tasks; do the same between runs when exactness matters.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import urllib.parse
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, PositiveFloat

from sandboxes.base import SandboxError
from sandboxes.desktop.client import DesktopClient, DesktopControlError

OFFICE_PROCESS = "soffice"
"""What ``release`` stops (LibreOffice's processes all carry it in their command line)."""


class OsworldOptions(BaseModel):
    """Where the existing desktops are and how they are used."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    urls: tuple[str, ...]
    """The control servers' URLs (``http://10.0.0.5:5000``), one per desktop."""
    home: str = "/home/user"
    """The desktop user's home (OSWorld's VM: ``/home/user``); documents are uploaded there."""
    ready_timeout: PositiveFloat = 60.0
    """Seconds a desktop's server may take to answer before it counts as unreachable."""
    open_timeout: PositiveFloat = 60.0
    """Seconds the opened document's window may take to show."""


def check_url(url: str) -> str:
    """``url`` without a trailing slash, or ``SandboxError`` when it is no http(s) URL."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise SandboxError(
            f"desktop URL {url!r} is not an http(s) URL of a control server "
            "(like http://127.0.0.1:5000)"
        )
    return url.rstrip("/")


class OsworldDesktop:
    """One leased desktop: its client, and what was uploaded to it."""

    def __init__(self, pool: OsworldDesktops, url: str, client: DesktopClient) -> None:
        self.pool = pool
        self.url = url
        self.client = client
        self.document: str | None = None
        """The uploaded document's path inside the desktop, once opened."""
        self._released = False

    def __repr__(self) -> str:
        return f"OsworldDesktop({self.url})"

    async def open_document(self, document: Path) -> str:
        """Upload ``document`` (a host file) to the desktop user's home and open it; return its
        path inside the desktop."""
        target = str(PurePosixPath(self.pool.options.home) / document.name)
        await self.client.upload_file(target, document.read_bytes())
        self.document = target
        await self.client.open_file(target, timeout=self.pool.options.open_timeout)
        return target

    async def export_files(self, paths: Sequence[str], destination: Path) -> dict[str, Path]:
        """Download files from the desktop into ``destination`` (each under its own name);
        return where each path that could be read went."""
        destination.mkdir(parents=True, exist_ok=True)
        exported: dict[str, Path] = {}
        for path in paths:
            try:
                data = await self.client.download_file(path)
            except DesktopControlError as error:
                if "answered 404" in str(error):
                    continue
                raise
            target = destination / PurePosixPath(path).name
            target.write_bytes(data)
            exported[path] = target
        return exported

    async def release(self) -> None:
        """Close LibreOffice, delete the uploaded document (and its lock file), and hand the
        URL back. Safe to call twice."""
        if self._released:
            return
        self._released = True
        try:
            with contextlib.suppress(DesktopControlError):
                await self.client.execute(["pkill", "-f", OFFICE_PROCESS], timeout=15)
            if self.document is not None:
                folder = PurePosixPath(self.document).parent
                lock = folder / f".~lock.{PurePosixPath(self.document).name}#"
                with contextlib.suppress(DesktopControlError):
                    await self.client.execute(["rm", "-f", self.document, str(lock)], timeout=15)
        finally:
            await self.client.aclose()
            self.pool.give_back(self.url)

    async def destroy(self) -> None:
        """``release`` (the desktop itself is not ours to remove)."""
        await self.release()


class OsworldDesktops:
    """The pool of existing desktops given by URL; one lease per URL at a time."""

    def __init__(self, options: OsworldOptions) -> None:
        if not options.urls:
            raise SandboxError("the osworld desktop backend needs at least one desktop URL")
        self.options = options
        self.urls = tuple(check_url(url) for url in options.urls)
        if len(set(self.urls)) != len(self.urls):
            raise SandboxError(f"a desktop URL is given twice: {', '.join(options.urls)}")
        self._free: asyncio.Queue[str] = asyncio.Queue()
        for url in self.urls:
            self._free.put_nowait(url)
        self._leased: set[str] = set()

    async def acquire(self, document: Path | None = None) -> OsworldDesktop:
        """Lease a free desktop (waiting for one), check that it answers, and open
        ``document`` on it."""
        url = await self._free.get()
        self._leased.add(url)
        client = DesktopClient(url)
        desktop = OsworldDesktop(self, url, client)
        try:
            started = time.monotonic()
            try:
                await client.wait_until_up(self.options.ready_timeout)
            except DesktopControlError as error:
                raise SandboxError(
                    f"the OSWorld desktop at {url} did not answer within"
                    f" {self.options.ready_timeout:g} s ({time.monotonic() - started:.1f} s spent)"
                ) from error
            if document is not None:
                await desktop.open_document(document)
        except BaseException:
            await desktop.release()
            raise
        return desktop

    def give_back(self, url: str) -> None:
        """Return a leased URL to the pool (``OsworldDesktop.release`` calls it)."""
        if url in self._leased:
            self._leased.discard(url)
            self._free.put_nowait(url)

    @property
    def leased(self) -> frozenset[str]:
        """The URLs currently in use."""
        return frozenset(self._leased)
