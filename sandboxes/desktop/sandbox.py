"""Desktop sandboxes on any backend: the sandbox, its snapshot, the restore hook, the provider.

A ``DesktopSandbox`` is one running desktop reached through a ``DesktopClient``; the backend
keeps what it needs to stop it in a ``DesktopHandle``. Every action performed through the sandbox
is remembered. A live desktop cannot be copied exactly on these machines (no working
checkpointing of a process tree), so freezing keeps a *recipe* instead of the desktop: the
task's initial state, the actions performed, and the document as it is saved on disk at that
moment. A ``RestoreMethod`` turns the recipe back into a desktop for each judge:

- ``replay`` (the default): a fresh desktop from the initial state, with every action performed
  again, with a pause between actions. Faithful wherever the actions are deterministic.
- ``reopen-files``: a fresh desktop opened on the saved document. Exact for tasks whose end state
  lives entirely in the saved file (the judge sees the file as saved, not unsaved edits, window
  layout, selection or open dialogs), and much faster than a replay.

A backend that can snapshot a live desktop exactly adds another ``RestoreMethod``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import ClassVar

from dataset.actions import Computer13Action, PyAutoGuiAction
from dataset.assets import state_file
from dataset.models import DocumentState, EmptyState, Task
from sandboxes.base import (
    Sandbox,
    SandboxError,
    SandboxNotReadyError,
    SandboxProvider,
    Snapshot,
)
from sandboxes.desktop.actions import ActionOutcome, perform_action
from sandboxes.desktop.client import DesktopClient, DesktopControlError, ImageFormat
from sandboxes.desktop.observations import (
    DEFAULT_TOKEN_BUDGET,
    Observation,
    ObservationKind,
    observe,
)
from sandboxes.desktop.screens import POLL_INTERVAL, SETTLE_QUIET, wait_for_still_screen
from sandboxes.desktop.setup_steps import carry_out_setup, setup_steps
from sandboxes.runs import current_run

logger = logging.getLogger(__name__)

DEFAULT_SCREEN = (1920, 1080)
"""The desktop's screen size unless the provider is given another (OSWorld's)."""

DEFAULT_MEMORY_BYTES = 3 * 2**30
"""The memory cap of one desktop (all its processes together)."""

DEFAULT_PROCESSES = 1024
"""The most processes and threads one desktop may hold at once (its process limit)."""

DEFAULT_HOME_BYTES = 1 * 2**30
"""The disk quota of one desktop's home folder (a RAM file system, so it counts towards the
memory cap too: kept below it, so a full home is named as such rather than as memory)."""

FULL_BYTES = 2 * 2**20
"""A home with less room left than this after a failed step is reported as full."""

DEFAULT_READY_TIMEOUT = 120.0
"""Seconds a desktop may take to answer and show its document (LibreOffice needs 2-3 s of CPU
to start; on a machine shared by many jobs that can stretch to a minute)."""

DEFAULT_START_ATTEMPTS = 2
"""Starts tried per desktop before its failure to get ready is reported. Now and then under load
(about one start in a hundred) LibreOffice runs but never shows the document's window, or the
session loses its display while starting; a second start of the same desktop then works."""

FIRST_STILL_INTERVAL = 1.0
"""Before a desktop's first replayed action: seconds the screen must stay unchanged."""
FIRST_STILL_TIMEOUT = 30.0
"""Before a desktop's first replayed action: seconds to wait at most for a still screen."""

DEFAULT_ACTION_PAUSE = 0.0
"""Seconds a replay waits after each action before it watches the screen settle (none: the
settling wait starts at once)."""

RESTORE_QUIET = 0.6
"""Seconds a judge's restored desktop must show an unchanged screen after each action: restoring
has no recorded screen to wait for, so it waits longer than replay's ``SETTLE_QUIET`` for a
LibreOffice that is slow to start painting on a busy machine."""

DesktopAction = Computer13Action | PyAutoGuiAction
"""An action a desktop performs."""

OFFICE_APPLICATIONS = {
    ".docx": "writer", ".doc": "writer", ".odt": "writer", ".rtf": "writer", ".txt": "writer",
    ".xlsx": "calc", ".xls": "calc", ".ods": "calc", ".csv": "calc",
    ".pptx": "impress", ".ppt": "impress", ".odp": "impress",
}  # fmt: skip
"""The LibreOffice application that opens each document type."""


class DesktopStartError(SandboxNotReadyError):
    """A desktop whose processes were started but which never got ready: its session stopped
    while starting, its control server did not answer in time, or no window or accessibility
    tree showed its document. Such a start is worth trying again (a session that stops every
    time costs a second or two more); a missing image, program or document is checked before
    any start and raises ``SandboxError``."""


@dataclass(frozen=True)
class DocumentFile:
    """A document to place in a new desktop and open at its start."""

    location: PurePosixPath
    """Where it goes, relative to the desktop user's home folder."""
    data: bytes
    """Its content."""


def document_location(state: DocumentState) -> PurePosixPath:
    """Where a task's document lives in a desktop, relative to the home folder: the part of
    ``open_at`` below ``/home/<user>`` (or ``/root``), else the file's own name."""
    if state.open_at:
        path = PurePosixPath(state.open_at)
        parts = path.parts
        if ".." in parts or not path.is_absolute():
            # ``DocumentState`` refuses such a path; a model built without validation must not
            # bring it here either, as the local backend writes the document on the host.
            raise SandboxError(f"open_at {state.open_at!r}: must be absolute, without '..' parts")
        if len(parts) > 3 and parts[:2] == ("/", "home"):
            return PurePosixPath(*parts[3:])
        if len(parts) > 2 and parts[:2] == ("/", "root"):
            return PurePosixPath(*parts[2:])
        return PurePosixPath(path.name)
    return PurePosixPath(PurePosixPath(state.path).name)


def memory_cap_note(limit_bytes: int | None) -> str:
    """How a step whose process the desktop's memory cap killed is reported."""
    size = f"{limit_bytes / 2**20:,.0f} MiB" if limit_bytes is not None else "its size"
    return f"killed by the desktop's memory cap ({size}): the action needed more memory"


class DesktopHandle(ABC):
    """What a backend keeps of one running desktop."""

    @abstractmethod
    async def stop(self) -> None:
        """Stop the desktop and remove everything it used. Safe to call twice."""

    def peak_memory_bytes(self) -> int | None:
        """The most memory the desktop used at once, when the backend can tell."""
        return None

    def limit_events(self) -> dict[str, int]:
        """For each limit of the desktop the backend can watch, how many times it stopped a
        process so far (a kill by the memory cap, a fork refused by the process limit), keyed by
        how a step it stopped is reported."""
        return {}


class DesktopSandbox(Sandbox):
    """One running desktop."""

    kind: ClassVar[str] = "desktop"

    def __init__(
        self,
        name: str,
        client: DesktopClient,
        handle: DesktopHandle,
        provider: DesktopProvider,
        *,
        task: Task | None,
        task_dir: Path | None,
        home: PurePosixPath,
        document: PurePosixPath | None,
    ) -> None:
        self.name = name
        self.read_only = False
        self.client = client
        self.handle = handle
        self.provider = provider
        self.task = task
        self.task_dir = task_dir
        self.home = home
        """The desktop user's home folder, as the desktop sees it."""
        self.document = document
        """The document opened at start, as an absolute path inside the desktop."""
        self.performed: list[DesktopAction] = []
        """Every action performed through this sandbox, in order."""
        self.drawn = False
        """Whether its screen was seen still since it started (``wait_until_drawn``)."""
        self._destroyed = False

    def __repr__(self) -> str:
        return f"DesktopSandbox({self.name})"

    async def perform(
        self, action: DesktopAction, *, wait_seconds: float = 1.0, timeout: float = 60.0
    ) -> ActionOutcome:
        """Perform one action inside the desktop and remember it. A failure during which a
        limit of the desktop killed a process says which limit."""
        before = self.handle.limit_events()
        outcome = await perform_action(
            self.client, action, wait_seconds=wait_seconds, timeout=timeout
        )
        self.performed.append(action)
        if outcome.status != "failed":
            return outcome
        after = self.handle.limit_events()
        said = [note for note, count in after.items() if count > before.get(note, count)]
        if await self._home_is_full():
            said.append(
                f"stopped by the desktop home's disk quota ({self.provider.home_bytes / 2**20:,.0f}"
                f" MiB): the home folder is full"
            )
        if said:
            note = "\n".join(said)
            outcome = outcome.model_copy(
                update={"error": f"{outcome.error.rstrip()}\n{note}" if outcome.error else note}
            )
        return outcome

    async def _home_is_full(self) -> bool:
        """Whether the home folder's file system has (almost) no room left, asked inside the
        desktop (the home is the desktop's own file system on every backend)."""
        try:
            result = await self.client.execute(
                ["stat", "--file-system", "--format", "%S %a", str(self.home)], timeout=10
            )
            block, available = (int(part) for part in result.output.split())
        except (DesktopControlError, ValueError):
            return False
        return block * available < FULL_BYTES

    async def perform_settled(
        self,
        action: DesktopAction,
        *,
        pause: float = DEFAULT_ACTION_PAUSE,
        quiet: float | None = None,
        image_format: ImageFormat = "png",
    ) -> tuple[ActionOutcome, bytes]:
        """Perform ``action`` as replay does, so that every replay of a recording ends alike:
        before a fresh desktop's first action, wait until LibreOffice has drawn its window (the
        screen still for ``FIRST_STILL_INTERVAL``); then perform, wait ``pause`` (a WAIT waits
        that long too) and until the screen stayed unchanged for ``quiet`` seconds (default:
        the provider's ``settle_quiet``). Returns the outcome and that screen (in
        ``image_format``: see ``DesktopClient.screenshot``)."""
        if not self.performed:
            await self.wait_until_drawn()
        outcome = await self.perform(action, wait_seconds=pause)
        if pause and outcome.signal != "WAIT":
            await asyncio.sleep(pause)
        quiet = self.provider.settle_quiet if quiet is None else quiet
        return outcome, await wait_for_still_screen(
            self.client, quiet=quiet, poll=self.provider.settle_poll, image_format=image_format
        )

    async def wait_until_drawn(self) -> None:
        """Wait, once, until LibreOffice has drawn its window: the screen still for
        ``FIRST_STILL_INTERVAL`` (at most ``FIRST_STILL_TIMEOUT``). A desktop made for replay
        or a judge does it as it starts (``DesktopProvider.create``), so that one made ahead
        of need pays it before it is needed; replay's first action does it otherwise."""
        if self.drawn:
            return
        await wait_for_still_screen(
            self.client,
            timeout=FIRST_STILL_TIMEOUT,
            quiet=FIRST_STILL_INTERVAL,
            poll=self.provider.settle_poll,
            image_format="pgm",  # only waited for
        )
        self.drawn = True

    async def observe(
        self,
        kind: ObservationKind = "screenshot_a11y_tree",
        *,
        token_budget: int | None = DEFAULT_TOKEN_BUDGET,
    ) -> Observation:
        """What the desktop shows now."""
        return await observe(self.client, kind, token_budget=token_budget)

    async def read_document(self) -> bytes | None:
        """The document's bytes as saved on the desktop's disk now (None without one)."""
        if self.document is None:
            return None
        return await self.client.download_file(str(self.document))

    async def freeze(self) -> DesktopSnapshot:
        """Keep the recipe of this desktop's state (initial state, actions, saved document),
        then stop it."""
        snapshot = await self._recipe()
        await self.destroy()
        return snapshot

    async def freeze_for_clones(self) -> DesktopSnapshot:
        """Keep the recipe of this desktop's state, and this desktop itself as the snapshot's
        first clone: the first judge gets the replayed desktop as it is, at no cost and exactly
        as replay left it; later clones are made by the restore method. Destroying the snapshot
        stops the desktop if nobody took it."""
        snapshot = await self._recipe()
        snapshot.kept = self
        return snapshot

    async def _recipe(self) -> DesktopSnapshot:
        """The snapshot of this desktop's state: its task, actions and saved document."""
        if self._destroyed:
            raise SandboxError(f"{self.name} was destroyed; it cannot be frozen")
        saved: bytes | None = None
        with contextlib.suppress(DesktopControlError):
            saved = await self.read_document()
        return DesktopSnapshot(
            current_run().new_name("desktopsnap"),
            self.provider,
            task=self.task,
            task_dir=self.task_dir,
            actions=list(self.performed),
            document=self.document.relative_to(self.home) if self.document else None,
            saved_document=saved,
        )

    async def destroy(self) -> None:
        """Stop the desktop and remove its folders, processes and cgroup."""
        if self._destroyed:
            return
        self._destroyed = True
        try:
            await self.client.aclose()
        finally:
            await self.handle.stop()
            self.provider.forget(self)


class RestoreMethod(ABC):
    """How a snapshot's state is made into a new desktop for a judge (the restore hook)."""

    name: ClassVar[str]
    """The method's name (``replay``, ``reopen-files``)."""

    @abstractmethod
    async def restore(self, snapshot: DesktopSnapshot) -> DesktopSandbox:
        """A new desktop holding ``snapshot``'s state."""


class ReplayRestore(RestoreMethod):
    """A fresh desktop from the task's initial state, with the snapshot's actions performed
    again as replay performed them (``DesktopSandbox.perform_settled``: ``pause`` after each,
    then a screen unchanged for ``quiet`` seconds)."""

    name: ClassVar[str] = "replay"

    def __init__(self, pause: float = DEFAULT_ACTION_PAUSE, quiet: float = RESTORE_QUIET) -> None:
        self.pause = pause
        self.quiet = quiet

    async def restore(self, snapshot: DesktopSnapshot) -> DesktopSandbox:
        sandbox = await snapshot.provider.start_from(snapshot.task, snapshot.task_dir)
        try:
            for action in snapshot.actions:
                await sandbox.perform_settled(action, pause=self.pause, quiet=self.quiet)
        except BaseException:
            await sandbox.destroy()
            raise
        return sandbox


class ReopenFilesRestore(RestoreMethod):
    """A fresh desktop opened on the document as the snapshot's desktop had saved it."""

    name: ClassVar[str] = "reopen-files"

    async def restore(self, snapshot: DesktopSnapshot) -> DesktopSandbox:
        if snapshot.document is None or snapshot.saved_document is None:
            raise SandboxError(
                f"{snapshot.name} holds no saved document: restore it by replay instead"
            )
        return await snapshot.provider.start_desktop(
            DocumentFile(snapshot.document, snapshot.saved_document),
            task=snapshot.task,
            task_dir=snapshot.task_dir,
        )


RESTORE_METHODS: dict[str, type[RestoreMethod]] = {
    ReplayRestore.name: ReplayRestore,
    ReopenFilesRestore.name: ReopenFilesRestore,
}
"""The restore methods by name; an exact snapshot method is added here."""


class DesktopSnapshot(Snapshot):
    """The recipe of a desktop's state; each clone is a new desktop made by the restore method."""

    kind: ClassVar[str] = "desktop"

    def __init__(
        self,
        name: str,
        provider: DesktopProvider,
        *,
        task: Task | None,
        task_dir: Path | None,
        actions: list[DesktopAction],
        document: PurePosixPath | None,
        saved_document: bytes | None,
    ) -> None:
        self.name = name
        self.provider = provider
        self.task = task
        self.task_dir = task_dir
        self.actions = actions
        """The actions performed on the frozen desktop, in order."""
        self.document = document
        """The document's place relative to the home folder."""
        self.saved_document = saved_document
        """The document's bytes as saved when the desktop was frozen."""
        self.kept: DesktopSandbox | None = None
        """The frozen desktop itself, still running, when it was frozen for clones
        (``DesktopSandbox.freeze_for_clones``): handed out as the next clone made without a
        ``method``."""

    async def clone(
        self, *, writable: bool = True, method: RestoreMethod | None = None
    ) -> DesktopSandbox:
        """A new desktop in this state, made by ``method`` (default: the kept desktop when
        there is one, else the provider's method). A desktop cannot be shared: a read-only clone
        is a private desktop too."""
        if method is None and self.kept is not None:
            kept, self.kept = self.kept, None
            return kept
        return await (method or self.provider.restore_method).restore(self)

    async def destroy(self) -> None:
        """Stop the kept desktop if nobody took it; the recipe holds nothing else."""
        kept, self.kept = self.kept, None
        if kept is not None:
            await kept.destroy()


class DesktopProvider(SandboxProvider):
    """Starts desktops on one backend; ``aclose`` stops every desktop still running."""

    kind: ClassVar[str] = "desktop"

    prepares_ahead: ClassVar[bool] = True
    """A desktop takes seconds to start and a judge's one a replay more: worth making ahead."""

    settle_quiet: ClassVar[float] = SETTLE_QUIET
    """Seconds the screen must stay unchanged after each action before it counts as settled."""
    settle_poll: ClassVar[float] = POLL_INTERVAL
    """Seconds between screenshots where the control server cannot watch the screen itself."""

    def __init__(
        self,
        *,
        screen: tuple[int, int] = DEFAULT_SCREEN,
        memory_bytes: int = DEFAULT_MEMORY_BYTES,
        home_bytes: int = DEFAULT_HOME_BYTES,
        processes: int = DEFAULT_PROCESSES,
        ready_timeout: float = DEFAULT_READY_TIMEOUT,
        restore_method: RestoreMethod | None = None,
        start_attempts: int = DEFAULT_START_ATTEMPTS,
    ) -> None:
        if start_attempts < 1:
            raise ValueError(f"start_attempts must be at least 1, not {start_attempts}")
        self.screen = screen
        self.memory_bytes = memory_bytes
        self.home_bytes = home_bytes
        self.processes = processes
        """The process limit of each desktop (processes and threads together)."""
        self.ready_timeout = ready_timeout
        self.start_attempts = start_attempts
        self.restore_method = restore_method or ReplayRestore()
        self._live: set[DesktopSandbox] = set()

    async def create(self, task: Task, task_dir: Path) -> DesktopSandbox:
        """A desktop showing the task's document (or an empty desktop), drawn and still
        (``DesktopSandbox.wait_until_drawn``)."""
        sandbox = await self.start_from(task, task_dir)
        try:
            await sandbox.wait_until_drawn()
        except BaseException:
            await sandbox.destroy()
            raise
        return sandbox

    async def start_from(self, task: Task | None, task_dir: Path | None) -> DesktopSandbox:
        """A desktop in the task's initial state."""
        if task is None or task_dir is None:
            return await self.start_desktop(None, task=task, task_dir=task_dir)
        state = task.initial_state
        if isinstance(state, EmptyState):
            return await self.start_desktop(None, task=task, task_dir=task_dir)
        if not isinstance(state, DocumentState):
            raise SandboxError(
                f"task {task.id}: a desktop starts from a document, not from {state.kind!r}"
            )
        source = state_file(task_dir, state.path)
        try:
            data = await asyncio.to_thread(source.read_bytes)
        except OSError as error:
            raise SandboxError(
                f"task {task.id}: initial_state.path: cannot read {source}: {error}"
            ) from error
        sandbox = await self.start_desktop(
            DocumentFile(document_location(state), data), task=task, task_dir=task_dir
        )
        if setup_steps(task):
            try:
                await carry_out_setup(sandbox.client, task)
            except BaseException:
                await sandbox.destroy()
                raise
        return sandbox

    async def start_desktop(
        self,
        document: DocumentFile | None,
        *,
        task: Task | None = None,
        task_dir: Path | None = None,
    ) -> DesktopSandbox:
        """Start a desktop, with ``document`` placed in its home and opened, and wait until it
        answers and shows the document's window. A start that never gets ready is removed and
        made again, ``start_attempts`` times in all; the last failure is raised with the count."""
        failed = 0
        while True:
            try:
                return await self.launch_desktop(document, task=task, task_dir=task_dir)
            except DesktopStartError as error:
                failed += 1
                if failed == self.start_attempts:
                    if failed == 1:
                        raise
                    raise DesktopStartError(
                        f"{failed} starts never got ready; the last: {error}"
                    ) from error
                logger.warning("desktop start %d failed, starting again: %s", failed, error)

    @abstractmethod
    async def launch_desktop(
        self,
        document: DocumentFile | None,
        *,
        task: Task | None = None,
        task_dir: Path | None = None,
    ) -> DesktopSandbox:
        """One start of a desktop (see ``start_desktop``), removed again when it fails; raises
        ``DesktopStartError`` when its processes ran but it never got ready."""

    def remember(self, sandbox: DesktopSandbox) -> None:
        """Note a started desktop, so ``aclose`` stops it if nobody else does."""
        self._live.add(sandbox)

    def forget(self, sandbox: DesktopSandbox) -> None:
        """Drop a stopped desktop from the live ones."""
        self._live.discard(sandbox)

    async def aclose(self) -> None:
        """Stop every desktop still running."""
        errors: list[BaseException] = []
        for sandbox in list(self._live):
            try:
                await sandbox.destroy()
            except Exception as error:  # stopping the others matters more
                errors.append(error)
        if errors:
            raise SandboxError("; ".join(str(error) for error in errors))


WINDOW_WAIT_SLICE = 10.0
"""Seconds one ``GET /windows?title=...`` may wait inside the server before the client asks
again (so a server that stops answering is noticed)."""


async def wait_for_window(client: DesktopClient, title_part: str, timeout: float) -> bool:
    """Poll until a window title holds ``title_part``; False after ``timeout`` seconds (or when
    the server cannot list windows)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # This project's server waits itself (one request); others answer at once.
        wait = min(WINDOW_WAIT_SLICE, max(deadline - time.monotonic(), 0.0))
        windows = await client.windows(title=title_part, timeout=wait)
        if windows is None:
            return False
        if any(title_part in title for _, title in windows):
            return True
        await asyncio.sleep(0.05)
    return False


_SHOWN_DOCUMENT = re.compile(r"<document-[a-z-]+\b[^>]*\bst:showing=\"true\"")
"""A document node (``document-text``, ``document-spreadsheet``, ...) that is showing."""


async def wait_for_document_tree(client: DesktopClient, timeout: float) -> bool:
    """Poll until the accessibility tree shows a document node; False after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _SHOWN_DOCUMENT.search(await client.accessibility_tree()):
            return True
        await asyncio.sleep(0.1)
    return False
