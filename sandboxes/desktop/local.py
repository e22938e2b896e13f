"""The ``local`` desktop backend: each desktop a bubblewrap box of host processes.

A box (``sandboxes.confinement.box_command``) holds the whole desktop session (Xvfb, D-Bus,
AT-SPI, openbox, LibreOffice and the control server, see ``control_server.session``): its own
network namespace (no network at all; the X display, the buses and the control server exist only
inside it, so many desktops run at once without clashing over display numbers or ports), its own
pid namespace (when the box's first process dies, the kernel kills the rest), an unprivileged user
(``nobody``, when the runtime is root) and a home folder of its own holding the document and the
LibreOffice profile. The home folder is a RAM file system of the provider's home size (its disk
quota), filled at start from a folder the host prepared. Recorded code therefore runs inside the
box, never on the host.

The control server listens on a Unix socket in a folder of the desktop's host folder, bound at
``CONTROL_FOLDER`` in the box: never in the home folder, which the box's user owns and where
recorded code could put a link in the socket's place. The host opens that folder to the box's
user while the session starts and closes it once the socket is there, then reaches the socket
only as ``sandboxes.sandbox_sockets`` does (no link followed, a socket of the box's user, the
connection made to the very file checked).

Each desktop gets a memory cgroup (``sandboxes.memory``) capped at the provider's limit, and a
pids cgroup (``sandboxes.processes``) capped at its process limit; a step stopped by either says
which (``LocalDesktopHandle.limit_events``).
bubblewrap dies with the runtime (``--die-with-parent``), taking the desktop with it; ``gc``
removes the folders and cgroups a killed run left (``collect_desktop_leftovers``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from pathlib import Path, PurePosixPath

import psutil

from dataset.models import Task
from sandboxes.base import SandboxError
from sandboxes.confinement import (
    BOX_USER,
    BoxSpec,
    box_command,
    remove_tree,
    require_bubblewrap,
)
from sandboxes.desktop.client import DesktopClient, DesktopControlError
from sandboxes.desktop.desktop_python import ensure_desktop_packages
from sandboxes.desktop.image import HOME
from sandboxes.desktop.sandbox import (
    DesktopHandle,
    DesktopProvider,
    DesktopSandbox,
    DesktopStartError,
    DocumentFile,
    memory_cap_note,
    wait_for_document_tree,
    wait_for_window,
)
from sandboxes.memory import CGROUP_ROOT, MemoryCap, remove_cgroup
from sandboxes.processes import ProcessCap, process_limit_note
from sandboxes.runs import (
    current_run,
    run_id_of,
    run_is_alive,
    scratch_roots,
    track_process,
    trusted_below,
    untrack_process,
)
from sandboxes.sandbox_sockets import SandboxSocket, close_folder, open_folder
from storage.confined import UnsafeFileError, open_confined

DESKTOP_HOME = Path(HOME)
"""Where a desktop's home folder shows inside its box: the same path as in the desktop image
(and an OSWorld VM), so that file dialogs and paths on screen read alike on every backend."""

CONTROL_SERVER_PARENT = Path(__file__).resolve().parent
"""The folder holding the ``control_server`` package, put on the box's ``PYTHONPATH``."""

SOCKET_NAME = "control.sock"
"""The control server's socket, in the control folder."""

CONTROL_NAME = "control"
"""The host folder (in the desktop's folder) bound at ``CONTROL_FOLDER``."""

CONTROL_FOLDER = Path("/run/agentjudge")
"""Inside the box, the folder holding the control socket (the same place as on Docker)."""

PROFILE_NAME = ".office-profile"
"""LibreOffice's profile folder, in the desktop's home folder."""

RUNTIME_NAME = ".runtime"
"""The desktop user's runtime folder (``XDG_RUNTIME_DIR``, mode 0700), in its home folder."""

CGROUP_NOTE = "cgroup"
"""A file in the desktop's folder naming its memory cgroup (for ``gc``)."""

PIDS_NOTE = "pids-cgroup"
"""A file in the desktop's folder naming its pids cgroup (for ``gc``)."""

DESKTOP_TAG = "desktop"
"""The name tag of desktop folders and cgroups (``aj_<run>_desktop_<n>``)."""

_SYSTEM_READ_ONLY = (Path("/var/cache/fontconfig"), Path("/var/lib/dbus"))
"""Host folders a desktop reads besides ``/usr`` and ``/etc`` (font caches, the machine id)."""


class LocalDesktopHandle(DesktopHandle):
    """A box on the host running one desktop."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        folder: Path,
        cap: MemoryCap | None,
        process_cap: ProcessCap | None = None,
    ) -> None:
        self.process = process
        self.folder = folder
        """The desktop's host folder: the prepared home (``home``, copied into the box's own
        home at start), the session log and the cgroup notes."""
        self.cap = cap
        self.process_cap = process_cap
        self._peak: int | None = None
        self._stopped = False

    def limit_events(self) -> dict[str, int]:
        """Processes the desktop's memory cgroup killed and forks its pids cgroup refused."""
        events: dict[str, int] = {}
        if self._stopped:
            return events
        if self.cap is not None:
            kills = self.cap.oom_kills()
            if kills is not None:
                events[memory_cap_note(self.cap.limit_bytes())] = kills
        if self.process_cap is not None:
            refused = self.process_cap.refusals()
            if refused is not None:
                events[process_limit_note(self.process_cap.limit())] = refused
        return events

    def peak_memory_bytes(self) -> int | None:
        """The cgroup's peak usage (kept after the desktop stopped)."""
        if self.cap is not None and not self._stopped:
            self._peak = self.cap.peak_bytes()
        return self._peak

    async def stop(self) -> None:
        if self._stopped:
            return
        self.peak_memory_bytes()
        self._stopped = True
        try:
            await asyncio.shield(asyncio.to_thread(self._kill))
            with contextlib.suppress(ProcessLookupError):
                await asyncio.shield(self.process.wait())
        finally:
            untrack_process(self.process.pid)
            await asyncio.to_thread(_remove_caps, self.cap, self.process_cap)
            await asyncio.to_thread(remove_tree, self.folder)

    def _kill(self) -> None:
        try:
            box = psutil.Process(self.process.pid)
            inside = box.children(recursive=True)
        except psutil.Error:
            inside = []
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        for process in inside:
            with contextlib.suppress(psutil.Error):
                process.kill()
        psutil.wait_procs(inside, timeout=5)


class LocalDesktopProvider(DesktopProvider):
    """Desktops as boxes of host processes (see the module's docstring)."""

    backend = "local"

    async def launch_desktop(
        self,
        document: DocumentFile | None,
        *,
        task: Task | None = None,
        task_dir: Path | None = None,
    ) -> DesktopSandbox:
        bwrap = require_bubblewrap()
        for program in ("Xvfb", "soffice", "openbox", "dbus-daemon"):
            if shutil.which(program) is None:
                raise SandboxError(
                    f"local desktops need {program}, which is not installed (see the README's "
                    "Desktops section for the Debian packages)"
                )
        packages = await ensure_desktop_packages()
        run = current_run()
        name = run.new_name(DESKTOP_TAG)
        folder = run.directory() / name
        folder.mkdir(mode=0o700)
        cap: MemoryCap | None = None
        process_cap: ProcessCap | None = None
        process: asyncio.subprocess.Process | None = None
        try:
            home = await asyncio.to_thread(_make_home, folder, document)
            control = folder / CONTROL_NAME
            control.mkdir(mode=0o700)
            open_folder(control, _box_uid())
            cap, process_cap = await asyncio.to_thread(self._make_caps, name, folder)
            target = DESKTOP_HOME / document.location if document else None
            width, height = self.screen
            command = [
                "/usr/bin/python3", "-m", "control_server", "session",
                "--socket", str(CONTROL_FOLDER / SOCKET_NAME),
                "--profile", str(DESKTOP_HOME / PROFILE_NAME),
                "--display", ":1",
                "--size", f"{width}x{height}",
                *(["--document", str(target)] if target else []),
            ]  # fmt: skip
            spec = BoxSpec(
                command=command,
                cwd=DESKTOP_HOME,
                read_only=[
                    CONTROL_SERVER_PARENT,
                    packages,
                    *(path for path in _SYSTEM_READ_ONLY if path.exists()),
                ],
                environment={
                    "PATH": f"{DESKTOP_HOME}/.bin:/usr/local/bin:/usr/bin:/bin",
                    "PYTHONPATH": f"{CONTROL_SERVER_PARENT}:{packages}",
                    "XDG_RUNTIME_DIR": f"{DESKTOP_HOME}/{RUNTIME_NAME}",
                    "PYTHONDONTWRITEBYTECODE": "1",
                },
                interpreter=False,
                work_mount=DESKTOP_HOME,
                work_bytes=self.home_bytes,
                bound=[(control, CONTROL_FOLDER)],
            )
            argv = box_command(spec, home, bwrap=bwrap)
            # Join the cgroups first, so every process of the box is in them.
            for joined in (cap, process_cap):
                if joined is not None:
                    argv = ["/bin/sh", "-c", _JOIN, str(joined.procs_file), *argv]
            log = (folder / "session.log").open("wb")
            try:
                process = await asyncio.create_subprocess_exec(
                    *argv,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=log,
                    stderr=asyncio.subprocess.STDOUT,
                    start_new_session=True,
                )
            finally:
                log.close()
            track_process(process.pid)
            handle = LocalDesktopHandle(process, folder, cap, process_cap)
        except BaseException:
            if process is not None:
                await LocalDesktopHandle(process, folder, cap, process_cap).stop()
            else:
                await asyncio.to_thread(_remove_caps, cap, process_cap)
                await asyncio.to_thread(remove_tree, folder)
            raise
        socket = SandboxSocket(
            control / SOCKET_NAME, _box_uid(), f"desktop {name}'s control socket"
        )
        client = DesktopClient(socket=socket)
        sandbox = DesktopSandbox(
            name,
            client,
            handle,
            self,
            task=task,
            task_dir=task_dir,
            home=PurePosixPath(DESKTOP_HOME),
            document=PurePosixPath(str(target)) if target else None,
        )
        self.remember(sandbox)
        try:
            await self._wait_ready(sandbox, process, folder, document)
        except BaseException:
            await sandbox.destroy()
            raise
        return sandbox

    def _make_caps(self, name: str, folder: Path) -> tuple[MemoryCap | None, ProcessCap | None]:
        """The desktop's memory and pids cgroups (each None where none can be made here), noted
        in its folder for ``gc``."""
        cap = MemoryCap.create(name, self.memory_bytes)
        if cap is not None:
            (folder / CGROUP_NOTE).write_text(str(cap.folder))
        process_cap = ProcessCap.create(name, self.processes)
        if process_cap is not None:
            (folder / PIDS_NOTE).write_text(str(process_cap.folder))
        return cap, process_cap

    async def _wait_ready(
        self,
        sandbox: DesktopSandbox,
        process: asyncio.subprocess.Process,
        folder: Path,
        document: DocumentFile | None,
    ) -> None:
        waiter = asyncio.create_task(sandbox.client.wait_until_up(self.ready_timeout))
        ended = asyncio.create_task(process.wait())
        try:
            done, _ = await asyncio.wait({waiter, ended}, return_when=asyncio.FIRST_COMPLETED)
            if ended in done:
                raise DesktopStartError(
                    f"desktop {sandbox.name} stopped while starting: {_log_tail(folder)}"
                )
            try:
                await waiter
            except DesktopControlError as error:
                raise DesktopStartError(
                    f"desktop {sandbox.name} did not answer within {self.ready_timeout:g} s: "
                    f"{_log_tail(folder)}"
                ) from error
        finally:
            for task in (waiter, ended):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, DesktopControlError):
                    await task
        # The socket is made: nothing more of the box's user goes into the host folder.
        await asyncio.to_thread(close_folder, folder / CONTROL_NAME)
        if document is None:
            return
        if not await wait_for_window(sandbox.client, document.location.name, self.ready_timeout):
            titles = [title for _, title in await sandbox.client.windows() or []]
            raise DesktopStartError(
                f"desktop {sandbox.name}: no window showed {document.location.name} within "
                f"{self.ready_timeout:g} s (windows: {titles}): {_log_tail(folder)}"
            )
        if not await wait_for_document_tree(sandbox.client, self.ready_timeout):
            raise DesktopStartError(
                f"desktop {sandbox.name}: {document.location.name} never showed in the "
                f"accessibility tree within {self.ready_timeout:g} s: {_log_tail(folder)}"
            )


def _remove_caps(cap: MemoryCap | None, process_cap: ProcessCap | None) -> None:
    """Remove the desktop's cgroups (with whatever still runs in them)."""
    if cap is not None:
        cap.remove()
    if process_cap is not None:
        remove_cgroup(process_cap.folder)


_JOIN = 'echo $$ > "$0" && exec "$@"'
"""A shell line that moves itself into the cgroup named first, then runs the rest."""


def _make_home(folder: Path, document: DocumentFile | None) -> Path:
    """The desktop's prepared home folder (owned by the box user), with the document and a
    ``python`` command in it: the box copies it into its own home at start."""
    home = folder / "home"
    (home / ".bin").mkdir(parents=True)
    (home / "tmp").mkdir()
    (home / RUNTIME_NAME).mkdir(mode=0o700)
    (home / ".bin" / "python").symlink_to("/usr/bin/python3")
    if document is not None:
        # Confined to the home folder: no '..' part or link below it is followed.
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
        try:
            descriptor = open_confined(home / document.location, flags, within=home)
        except UnsafeFileError as error:
            raise SandboxError(f"the desktop's document {document.location}: {error}") from None
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(document.data)
    if os.geteuid() == 0:
        for root, folders, files in os.walk(home):
            os.chown(root, BOX_USER, BOX_USER)
            for name in [*folders, *files]:
                os.lchown(os.path.join(root, name), BOX_USER, BOX_USER)
    home.chmod(0o700)
    return home


def _box_uid() -> int:
    """The uid the box's processes run as, as the host sees it."""
    return BOX_USER if os.geteuid() == 0 else os.geteuid()


def _log_tail(folder: Path, limit: int = 3000) -> str:
    try:
        text = (folder / "session.log").read_text(errors="replace")
    except OSError:
        return "(no session log)"
    return text[-limit:].strip() or "(the session log is empty)"


async def collect_desktop_leftovers() -> list[str]:
    """Remove the memory cgroups (with any process left in them) of dead runs' desktops; their
    folders go with the run directories (collected last)."""
    removed: list[str] = []
    for root in scratch_roots():
        notes = [
            *root.glob(f"aj_*/aj_*_{DESKTOP_TAG}_*/{CGROUP_NOTE}"),
            *root.glob(f"aj_*/aj_*_{DESKTOP_TAG}_*/{PIDS_NOTE}"),
        ]
        for note in sorted(notes):
            run_id = run_id_of(note.parent.name)
            if run_id is None or run_is_alive(run_id) or not trusted_below(root, note):
                continue
            cgroup = Path(os.path.normpath(note.read_text().strip()))
            # Only a cgroup named for this desktop, in the cgroup file system, is emptied.
            owned = cgroup.name == note.parent.name and cgroup.is_relative_to(CGROUP_ROOT)
            if owned and await asyncio.to_thread(remove_cgroup, cgroup):
                removed.append(f"desktop cgroup {cgroup}")
            note.unlink(missing_ok=True)
    return removed


def is_local_desktop_folder(path: Path) -> bool:
    """Whether ``path`` is a local desktop's folder (``aj_<run>_desktop_<n>``)."""
    return run_id_of(path.name) is not None and f"_{DESKTOP_TAG}_" in path.name
