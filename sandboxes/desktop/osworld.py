"""The ``osworld`` desktop backend: desktops that already run elsewhere, reached by URL.

For users who replay on OSWorld's own image, as AJ-Bench did: an OSWorld VM (or OSWorld's Docker
provider, which boots that VM inside a container) runs OSWorld's control server on port 5000,
and the runtime drives it with the same ``DesktopClient`` as its own desktops. The project's
control server answers the same protocol over TCP, which is how this backend is tested.

Each URL is one desktop and serves one sandbox at a time: ``start_desktop`` leases a free URL
(waiting while all are busy), uploads the task's document into the desktop user's home
(``/home/user`` on OSWorld's VM) through ``/setup/upload`` and opens it through
``/setup/open_file``; stopping the sandbox closes LibreOffice, deletes the uploaded document and
its lock file, and hands the URL back (what it could not undo is logged and listed in the
provider's ``not_undone``). That is all the reset this backend can do over HTTP:
other changes a replay or a judge made (files saved elsewhere, settings) stay on that machine.
OSWorld itself reverts its VM to a snapshot between tasks; do the same between runs when
exactness matters. Nothing here is collected by ``gc``: the desktops are not the runtime's.
"""

from __future__ import annotations

import asyncio
import logging
import urllib.parse
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from dataset.models import Task
from sandboxes.base import SandboxError
from sandboxes.desktop.client import DesktopClient, DesktopControlError
from sandboxes.desktop.sandbox import (
    DesktopHandle,
    DesktopProvider,
    DesktopSandbox,
    DesktopStartError,
    DocumentFile,
    RestoreMethod,
    wait_for_window,
)
from sandboxes.runs import current_run

OSWORLD_HOME = PurePosixPath("/home/user")
"""The desktop user's home folder on OSWorld's VM image."""

OFFICE_PROCESS = "soffice"
"""What stopping a sandbox ends (LibreOffice's processes all carry it in their command line)."""

logger = logging.getLogger(__name__)

CLEANUP_TIMEOUT = 15.0
"""Seconds each cleanup command may take on the remote desktop."""

OSWORLD_SETTLE_QUIET = 0.8
"""Seconds an OSWorld desktop's screen must stay unchanged after an action (one look apart)."""


def check_url(url: str) -> str:
    """``url`` without its trailing slash; ``SandboxError`` when it is no http(s) URL."""
    parsed = urllib.parse.urlsplit(url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise SandboxError(
            f"desktop URL {url!r} is not the http(s) URL of a control server "
            "(like http://192.168.1.20:5000)"
        )
    return url.strip().rstrip("/")


def parse_urls(text: str | Sequence[str]) -> tuple[str, ...]:
    """The URLs of a comma-separated list (or a sequence), checked, duplicates refused."""
    items = text.split(",") if isinstance(text, str) else list(text)
    urls = tuple(check_url(item) for item in items if item.strip())
    if not urls:
        raise SandboxError("the osworld desktop backend needs at least one desktop URL")
    if len(set(urls)) != len(urls):
        raise SandboxError(f"a desktop URL is given twice: {', '.join(urls)}")
    return urls


class OsworldDesktopHandle(DesktopHandle):
    """A leased remote desktop: what was put on it, and the pool to hand it back to."""

    def __init__(self, provider: OsworldDesktopProvider, url: str, client: DesktopClient) -> None:
        self.provider = provider
        self.url = url
        self.client = client
        self.uploaded: list[str] = []
        """Files this sandbox uploaded, deleted at stop."""
        self._stopped = False

    async def stop(self) -> None:
        """Close LibreOffice, delete the uploaded files and their lock files, hand the URL
        back. The sandbox closes the client; these commands use a client of their own. What
        could not be undone is logged as a warning and kept in the provider's ``not_undone``."""
        if self._stopped:
            return
        self._stopped = True
        failures: list[str] = []
        try:
            async with DesktopClient(self.url, timeout=CLEANUP_TIMEOUT + 5) as client:
                closing = await _undo(client, ["pkill", "-f", OFFICE_PROCESS])
                if closing is not None:
                    failures.append(f"LibreOffice may still run ({closing})")
                doomed: list[str] = []
                for path in self.uploaded:
                    posix = PurePosixPath(path)
                    doomed += [path, str(posix.parent / f".~lock.{posix.name}#")]
                if doomed:
                    removing = await _undo(client, ["rm", "-f", "--", *doomed])
                    if removing is not None:
                        failures.append(f"{', '.join(self.uploaded)} still there ({removing})")
        finally:
            if failures:
                note = (
                    f"the desktop at {self.url} was not put back: {'; '.join(failures)}; "
                    "undo this by hand or revert the VM to its snapshot before reusing it"
                )
                logger.warning("%s", note)
                self.provider.not_undone.append(note)
            self.provider.give_back(self.url)


async def _undo(client: DesktopClient, command: list[str]) -> str | None:
    """Run a cleanup command; None when it worked, else why not. ``pkill`` exiting 1 (nothing
    to end) counts as worked."""
    try:
        result = await client.execute(command, timeout=CLEANUP_TIMEOUT)
    except DesktopControlError as error:
        return str(error)
    worked = (0, None, 1) if command[0] == "pkill" else (0, None)
    if result.status == "success" and result.returncode in worked:
        return None
    said = (result.error or result.output)[-200:]
    return f"{' '.join(command[:2])} exited {result.returncode}: {said}"


class OsworldDesktopProvider(DesktopProvider):
    """Sandboxes on existing desktops given by URL, one sandbox per URL at a time."""

    backend = "osworld"

    prepares_ahead = False
    """Its desktops are a fixed set of machines: one made ahead would hold a machine that a
    run in progress may be waiting for."""

    settle_quiet = OSWORLD_SETTLE_QUIET
    settle_poll = OSWORLD_SETTLE_QUIET
    """One check over the still time: OSWorld's server cannot watch its screen itself, a
    screenshot is a slow round trip to a VM, and each one leaks an X connection in OSWorld's
    server (about 250 before X refuses clients)."""

    def __init__(
        self,
        urls: str | Sequence[str],
        *,
        home: PurePosixPath = OSWORLD_HOME,
        restore_method: RestoreMethod | None = None,
        **options: Any,
    ) -> None:
        """``urls``: the control servers (``http://host:5000``), a list or comma-separated;
        ``home``: the desktop user's home there; ``options``: ``DesktopProvider``'s (the ready
        timeout; the screen and memory cap are the remote machine's own)."""
        super().__init__(restore_method=restore_method, **options)
        self.urls = parse_urls(urls)
        self.home = home
        self._free: asyncio.Queue[str] | None = None
        self._leased: set[str] = set()
        self.not_undone: list[str] = []
        """What stopping its sandboxes could not undo on the desktops, one line per sandbox."""

    def _pool(self) -> asyncio.Queue[str]:
        if self._free is None:  # made on first use, inside the event loop that uses it
            self._free = asyncio.Queue()
            for url in self.urls:
                self._free.put_nowait(url)
        return self._free

    @property
    def leased(self) -> frozenset[str]:
        """The URLs in use by a sandbox now."""
        return frozenset(self._leased)

    def give_back(self, url: str) -> None:
        """Return a leased URL to the pool (the handle's ``stop`` calls it)."""
        if url in self._leased:
            self._leased.discard(url)
            self._pool().put_nowait(url)

    async def launch_desktop(
        self,
        document: DocumentFile | None,
        *,
        task: Task | None = None,
        task_dir: Path | None = None,
    ) -> DesktopSandbox:
        url = await self._pool().get()
        self._leased.add(url)
        client = DesktopClient(url)
        handle = OsworldDesktopHandle(self, url, client)
        target = self.home / document.location if document else None
        sandbox = DesktopSandbox(
            current_run().new_name("osworld"),
            client,
            handle,
            self,
            task=task,
            task_dir=task_dir,
            home=self.home,
            document=target,
        )
        self.remember(sandbox)
        try:
            await self._prepare(sandbox, handle, document, target)
        except BaseException:
            await sandbox.destroy()
            raise
        return sandbox

    async def _prepare(
        self,
        sandbox: DesktopSandbox,
        handle: OsworldDesktopHandle,
        document: DocumentFile | None,
        target: PurePosixPath | None,
    ) -> None:
        try:
            await sandbox.client.wait_until_up(self.ready_timeout)
        except DesktopControlError as error:
            raise SandboxError(
                f"the desktop at {handle.url} did not answer within {self.ready_timeout:g} s"
            ) from error
        if document is None or target is None:
            return
        try:
            await sandbox.client.upload_file(str(target), document.data)
            handle.uploaded.append(str(target))
            await sandbox.client.open_file(str(target), timeout=self.ready_timeout)
        except DesktopControlError as error:
            raise SandboxError(
                f"the desktop at {handle.url} could not open {target}: {error}"
            ) from error
        # OSWorld's server answers open_file before the window shows; ours after. Either way:
        if not await wait_for_window(sandbox.client, target.name, self.ready_timeout):
            windows = await sandbox.client.windows()
            if windows is not None:  # a server that lists no windows cannot be asked
                raise DesktopStartError(
                    f"the desktop at {handle.url}: no window showed {target.name} within "
                    f"{self.ready_timeout:g} s"
                )
