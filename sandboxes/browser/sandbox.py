"""Browser sandboxes: a browser context over a page archive, frozen as the pages it had open.

Owns ``BrowserProvider`` (one Chromium per provider, started on first use; archives read once
per provider and shared; one spare context kept ready for the next sandbox), ``BrowserSandbox``
(one user's ``BrowserSession``) and ``BrowserSnapshot``. A browser's only state worth keeping
is which pages were open: the archive never changes, so freezing keeps the open tabs' addresses
and every clone is a new context (its own cookies and storage) that reopens them. Read-only
views and writable clones are alike (nothing a judge does reaches the archive); each is
private, since two users cannot share one page. ``backend`` is ``local``: the browser runs on
this host, boxed and off the network (``sandboxes.chromium``).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import ClassVar

from dataset.assets import state_file
from dataset.models import PageArchiveState, Task
from sandboxes.base import Sandbox, SandboxError, SandboxProvider, Snapshot
from sandboxes.browser.archive import ArchiveError, PageArchive, load_archive
from sandboxes.browser.session import BrowserSession
from sandboxes.chromium import ChromiumProcess
from sandboxes.runs import current_run


class BrowserSandbox(Sandbox):
    """One browser context over an archive (``session``), with its open tabs."""

    kind: ClassVar[str] = "browser"

    def __init__(
        self,
        provider: BrowserProvider,
        session: BrowserSession,
        *,
        name: str,
        read_only: bool,
    ) -> None:
        self.provider = provider
        self.session = session
        self.name = name
        self.read_only = read_only

    @property
    def archive(self) -> PageArchive:
        """The archive every request is answered from."""
        return self.session.archive

    def open_urls(self) -> list[str]:
        """The addresses of the open tabs, in tab order."""
        return [page.url for page in self.session.tabs]

    async def freeze(self) -> BrowserSnapshot:
        """Keep the open tabs' addresses (and which was current), close the context."""
        if self.read_only:
            raise SandboxError(f"{self.name}: a read-only view cannot be frozen")
        snapshot = BrowserSnapshot(
            self.provider,
            self.archive,
            name=current_run().new_name("browsersnap"),
            urls=self.open_urls(),
            current=self.session.current,
        )
        await self.destroy()
        self.provider.snapshots.add(snapshot)
        return snapshot

    async def destroy(self) -> None:
        """Close the context. Safe to call twice."""
        await self.session.close()
        self.provider.sandboxes.discard(self)


class BrowserSnapshot(Snapshot):
    """The pages a browser had open, over an archive that never changes."""

    kind: ClassVar[str] = "browser"

    def __init__(
        self,
        provider: BrowserProvider,
        archive: PageArchive,
        *,
        name: str,
        urls: list[str],
        current: int,
    ) -> None:
        self.provider = provider
        self.archive = archive
        self.name = name
        self.urls = urls
        """The open tabs' addresses when frozen."""
        self.current = current
        """Which of them was the current tab."""

    async def clone(self, *, writable: bool = True) -> BrowserSandbox:
        """A new private context with the frozen tabs reopened (read-only or not: a browser
        cannot be shared between users, and nothing reaches the archive)."""
        sandbox = await self.provider.open(self.archive, self.urls, read_only=not writable)
        sandbox.session.current = min(self.current, max(len(sandbox.session.tabs) - 1, 0))
        return sandbox

    async def destroy(self) -> None:
        """Forget the snapshot (the archive stays with the provider)."""
        self.provider.snapshots.discard(self)


class BrowserProvider(SandboxProvider):
    """Browser sandboxes on this host: one Chromium, one context per sandbox."""

    kind: ClassVar[str] = "browser"
    backend: ClassVar[str] = "local"

    def __init__(self, *, keep_spare: bool = True) -> None:
        self.sandboxes: set[BrowserSandbox] = set()
        self.snapshots: set[BrowserSnapshot] = set()
        self._process: ChromiumProcess | None = None
        self._archives: dict[Path, PageArchive] = {}
        self._lock = asyncio.Lock()
        self._closed = False
        self._spare: tuple[PageArchive, asyncio.Task[BrowserSession]] | None = None
        self.keep_spare = keep_spare
        """Whether a spare browser context is kept ready for the next sandbox."""

    async def browser(self) -> ChromiumProcess:
        """The provider's Chromium, started on first use (and again if it died)."""
        async with self._lock:
            if self._closed:
                raise SandboxError("the browser provider is closed")
            if self._process is None or self._process.closed:
                if self._process is not None:
                    await self._process.close()
                self._process = await ChromiumProcess.start()
            return self._process

    async def archive(self, path: Path) -> PageArchive:
        """The archive at ``path``, read once per provider."""
        key = path.resolve()
        if key not in self._archives:
            self._archives[key] = await asyncio.to_thread(load_archive, path)
        return self._archives[key]

    async def _new_session(self, archive: PageArchive) -> BrowserSession:
        process = await self.browser()
        context = await process.new_context()
        try:
            session = await BrowserSession.open(context, archive, process.new_context)
        except BaseException:
            await context.close()
            raise
        session.memory_limits = process.memory_note()
        return session

    async def _session(self, archive: PageArchive) -> BrowserSession:
        """A fresh session over ``archive``: the spare one made after the last open when it is
        for this archive, else a new one; then another spare is made in the background.

        Most of a context's start is its first tab's renderer process; judges of one trajectory
        open their browsers one after another over the same archive, so each finds its browser
        ready. One spare at most, for the latest archive."""
        spare, self._spare = self._spare, None
        session: BrowserSession | None = None
        if spare is not None:
            spare_archive, task = spare
            if spare_archive is archive:
                with contextlib.suppress(Exception):
                    session = await task
            else:
                await _discard(task)
        if session is None or session.closed:
            session = await self._new_session(archive)
        if not self._closed and self.keep_spare:
            self._spare = (archive, asyncio.create_task(self._new_session(archive)))
        return session

    async def open(
        self, archive: PageArchive, urls: list[str] | None = None, *, read_only: bool = False
    ) -> BrowserSandbox:
        """A new sandbox over ``archive`` with ``urls`` open, one tab each (blank when none)."""
        session = await self._session(archive)
        sandbox = BrowserSandbox(
            self, session, name=current_run().new_name("browser"), read_only=read_only
        )
        self.sandboxes.add(sandbox)
        try:
            for number, url in enumerate(url for url in urls or [] if url != "about:blank"):
                page = session.page if number == 0 else await session.new_tab()
                await page.goto(url, wait_until="load")
        except BaseException:
            await sandbox.destroy()
            raise
        return sandbox

    async def create(self, task: Task, task_dir: Path) -> BrowserSandbox:
        """A sandbox over the task's archive, on its start page when it names one."""
        state = task.initial_state
        if not isinstance(state, PageArchiveState):
            raise SandboxError(
                f"tasks/{task.id}: a browser sandbox starts from a page_archive, not {state.kind}"
            )
        try:
            archive = await self.archive(state_file(task_dir, state.path))
        except ArchiveError as error:
            raise SandboxError(f"tasks/{task.id}: initial_state.path: {error}") from None
        return await self.open(archive, [state.start_url] if state.start_url else [])

    async def aclose(self) -> None:
        """Close every sandbox, forget every snapshot, stop the browser."""
        self._closed = True
        if self._spare is not None:
            await _discard(self._spare[1])
            self._spare = None
        for sandbox in list(self.sandboxes):
            with contextlib.suppress(Exception):
                await sandbox.destroy()
        self.snapshots.clear()
        if self._process is not None:
            await self._process.close()
            self._process = None


async def _discard(task: asyncio.Task[BrowserSession]) -> None:
    """Close a spare session, or stop its making."""
    if not task.done():
        task.cancel()
    try:
        session = await task
    except BaseException:  # cancelled, or it failed: nothing to close
        return
    await session.close()
