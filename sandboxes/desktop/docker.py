"""The ``docker`` desktop backend: one container of the desktop image per desktop.

A desktop container runs the project's control server (``sandboxes.desktop.control_server``,
bind-mounted read-only from the repository, so changing it needs no image rebuild) in its
``session`` mode: Xvfb, a session D-Bus, the AT-SPI bus, openbox and LibreOffice, as the image's
unprivileged ``user`` in ``/home/user``. The container has no network at all
(``network_mode=none``): the control server listens on a Unix socket in a per-desktop host folder
bind-mounted into the container, and the runtime's ``DesktopClient`` reaches it through that
socket, so nothing listens on any address; once the socket is there, the folder is closed to the
container's user, and the host reaches the socket only as ``sandboxes.sandbox_sockets`` does (no
link followed, a socket of the container's user, the connection made to the very file checked).
The task's document is copied into the home folder at start from a read-only
folder (``SEED_FOLDER``) and opened by the session; the saved document is read back through the
control server (``DesktopSandbox.read_document``).

Most of the image's bytes (``/usr/lib``, ``/usr/share``) are bind-mounted read-only from the
image's own layer where the engine keeps it as a plain folder (``system_mounts``), so desktops
share them in the page cache instead of reading them through a FUSE file system each.

Limits: a memory cap (RAM and swap alike), a cap on processes and threads (the provider's
process limit), a read-only root file system whose only writable places are RAM file systems of
fixed sizes (the home folder, of the provider's home size, holding the image's home; ``/tmp``,
``/var/tmp``, the runtime folder, ``/dev/shm``), every capability dropped, no privilege gain, and
an init process that reaps what LibreOffice leaves. A step that one of the caps stopped says
which (``limit_events``, read from the engine's cgroups). Every container carries the run's
labels (``sandboxes.docker.leftovers``), so ``agentjudge sandboxes gc`` removes those of a killed
run; their socket folders sit in the run's scratch folder and go with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import shutil
import tarfile
import threading
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

import docker
import docker.errors
from docker.models.containers import Container
from docker.types import Mount

from dataset.models import Task
from sandboxes.base import SandboxError
from sandboxes.desktop.client import DesktopClient, DesktopControlError
from sandboxes.desktop.image import (
    BUILD_COMMAND,
    HOME,
    OFFICE_PROFILE,
    RUNTIME_DIR,
    UID,
    desktop_image_tag,
)
from sandboxes.desktop.sandbox import (
    DesktopHandle,
    DesktopProvider,
    DesktopSandbox,
    DesktopStartError,
    DocumentFile,
    RestoreMethod,
    memory_cap_note,
    wait_for_window,
)
from sandboxes.docker.containers import remove_container
from sandboxes.docker.leftovers import run_labels
from sandboxes.memory import MemoryCap
from sandboxes.processes import process_limit_note, read_number, refused_forks
from sandboxes.runs import current_run
from sandboxes.sandbox_sockets import SandboxSocket, close_folder, open_folder, process_uid
from storage.confined import UnsafeFileError, open_confined

CONTROL_SERVER_SOURCE = Path(__file__).resolve().parent / "control_server"
"""The control server's folder in the repository, bind-mounted into every container."""

MOUNT_ROOT = "/opt/agentjudge"
"""Inside the container, the folder that holds ``control_server`` (on ``PYTHONPATH``)."""

SOCKET_FOLDER = "/run/agentjudge"
"""Inside the container, the bind-mounted folder that holds the control socket."""

SOCKET_NAME = "control.sock"
"""The control server's socket, in ``SOCKET_FOLDER``."""

SEED_FOLDER = "/run/agentjudge-seed"
"""Inside the container, the read-only folder whose contents the session copies into the home
folder before it starts (the task's document)."""

IMAGE_HOME_FOLDER = "/run/agentjudge-home"
"""Inside the container, a read-only copy of the image's own home folder (LibreOffice's profile,
the user's folders): the home is a RAM file system hiding it, so the session copies it in
first."""

OVERLAY_DRIVERS = frozenset({"overlay2", "fuse-overlayfs"})
"""Storage drivers that keep an image's layer as a plain folder (``GraphDriver.Data.UpperDir``)
on the engine's disk."""

STATUS_INTERVAL = 1.0
"""Seconds between asking the engine whether a starting desktop's container still runs."""

SYSTEM_FOLDERS = ("/usr/lib", "/usr/share")
"""The image's folders ``system_mounts`` mounts from its layer."""

SEED_NAME = "seed"
"""The host folder in the socket folder (owned by the host, so read-only to the container's
user) bind-mounted at ``SEED_FOLDER``."""

SCRATCH_BYTES = 256 * 2**20
"""Size of each of the container's other writable places (``/tmp``, ``/var/tmp``, the runtime
folder)."""

DISPLAY = ":0"
"""The only display in a container."""

SHARED_MEMORY_BYTES = 256 * 2**20
"""Size of each container's ``/dev/shm`` (X shared-memory images, LibreOffice)."""

CGROUP_MEMORY = Path("/sys/fs/cgroup/memory/docker")
"""Where the engine (cgroup v1, cgroupfs driver) keeps each container's memory cgroup."""

CGROUP_PIDS = Path("/sys/fs/cgroup/pids/docker")
"""Where the engine (cgroup v1, cgroupfs driver) keeps each container's pids cgroup."""

CGROUP_CPU = Path("/sys/fs/cgroup/cpuacct/docker")
"""Where the engine (cgroup v1, cgroupfs driver) keeps each container's CPU accounting."""


class DockerDesktopHandle(DesktopHandle):
    """A container running one desktop, and its socket folder on the host."""

    def __init__(
        self, container: Container, socket_folder: Path, on_stop: Callable[[], None] | None = None
    ) -> None:
        self.container = container
        self.socket_folder = socket_folder
        self.uid = UID
        """The uid of the container's user as the host sees it (``user_uid``, once started)."""
        self._on_stop = on_stop
        self._peak: int | None = None
        self._stopped = False

    def peak_memory_bytes(self) -> int | None:
        """The container's peak memory use (kept after it stopped)."""
        if not self._stopped:
            self._peak = _peak_memory(self.container) or self._peak
        return self._peak

    def user_uid(self) -> int:
        """The uid the container's processes run as, as the host sees it (its first process's,
        after any user-namespace mapping of the engine); the image's ``UID`` when unreadable."""
        with contextlib.suppress(docker.errors.DockerException, KeyError, TypeError, ValueError):
            self.container.reload()
            pid = int(self.container.attrs["State"]["Pid"])
            if pid > 0 and (uid := process_uid(pid)) is not None:
                return uid
        return UID

    def limit_events(self) -> dict[str, int]:
        """Processes the container's memory cap killed and forks its process limit refused,
        from the engine's cgroups (nothing where they cannot be read from here)."""
        events: dict[str, int] = {}
        if self._stopped:
            return events
        memory = CGROUP_MEMORY / str(self.container.id)
        kills = MemoryCap(memory, 1).oom_kills()  # the engine's cgroup, read as v1
        if kills is not None:
            limit = read_number(memory / "memory.limit_in_bytes")
            events[memory_cap_note(limit)] = kills
        pids = CGROUP_PIDS / str(self.container.id)
        refused = refused_forks(pids)
        if refused is not None:
            events[process_limit_note(read_number(pids / "pids.max"))] = refused
        return events

    def cpu_seconds(self) -> float | None:
        """CPU seconds the container's processes used so far (its cgroup's accounting), or None
        where the engine's cgroups cannot be read from here."""
        try:
            usage = (CGROUP_CPU / str(self.container.id) / "cpuacct.usage").read_text()
            return int(usage) / 1e9
        except (OSError, ValueError):
            return None

    def status(self) -> str:
        """The container's state (``running``, ``exited``; ``removed`` once gone)."""
        try:
            self.container.reload()
        except docker.errors.NotFound:
            return "removed"
        return str(self.container.status)

    def logs(self, tail: int = 40) -> str:
        """The last lines the container's session wrote (for error messages)."""
        try:
            raw = self.container.logs(tail=tail)
        except docker.errors.DockerException as error:
            return f"(no log: {error})"
        return bytes(raw).decode(errors="replace").strip() or "(the session log is empty)"

    async def stop(self) -> None:
        if self._stopped:
            return
        self.peak_memory_bytes()
        self._stopped = True
        try:
            await asyncio.shield(asyncio.to_thread(remove_container, self.container))
        finally:
            await asyncio.to_thread(shutil.rmtree, self.socket_folder, True)
            if self._on_stop is not None:
                self._on_stop()


class DockerDesktopProvider(DesktopProvider):
    """Desktops as containers of the desktop image (see the module's docstring)."""

    backend = "docker"

    def __init__(
        self,
        image: str | None = None,
        *,
        restore_method: RestoreMethod | None = None,
        **options: Any,
    ) -> None:
        """``image`` defaults to the current recipe's tag (build it first: ``make images``);
        ``options`` are ``DesktopProvider``'s (screen, memory cap, ready timeout)."""
        super().__init__(restore_method=restore_method, **options)
        self.image = image or desktop_image_tag()
        self._engine: docker.DockerClient | None = None
        self._image_home: Path | None = None
        """A host copy of the image's home folder (made at the first start)."""
        self._image_home_lock = threading.Lock()
        self._system_mounts: list[Mount] | None = None
        """``system_mounts``' answer, asked once."""
        self._created: set[str] = set()
        """Names of the containers this provider created, for a last sweep at ``aclose`` (a
        start cancelled while its worker thread still creates the container leaves one no
        sandbox holds)."""

    @property
    def engine(self) -> docker.DockerClient:
        """The Engine client (made on first use)."""
        if self._engine is None:
            try:
                self._engine = docker.from_env(timeout=300)
            except docker.errors.DockerException as error:
                raise SandboxError(f"the Docker engine is not reachable: {error}") from error
        return self._engine

    async def launch_desktop(
        self,
        document: DocumentFile | None,
        *,
        task: Task | None = None,
        task_dir: Path | None = None,
    ) -> DesktopSandbox:
        name = current_run().new_name("desktop")
        socket_folder = current_run().directory() / name
        self._created.add(name)
        creating = asyncio.ensure_future(
            asyncio.to_thread(self._start_container, name, socket_folder, document)
        )
        try:
            handle = await asyncio.shield(creating)
        except asyncio.CancelledError:  # the thread goes on: remove what it makes
            with contextlib.suppress(Exception):
                await (await creating).stop()
            raise
        target = PurePosixPath(HOME) / document.location if document else None
        label = f"desktop {name}'s control socket"
        socket = SandboxSocket(socket_folder / SOCKET_NAME, handle.uid, label)
        sandbox = DesktopSandbox(
            name,
            DesktopClient(socket=socket),
            handle,
            self,
            task=task,
            task_dir=task_dir,
            home=PurePosixPath(HOME),
            document=target,
        )
        self.remember(sandbox)
        try:
            await self._wait_ready(sandbox, handle, document)
        except BaseException:
            await sandbox.destroy()
            raise
        return sandbox

    def _command(self, document: PurePosixPath | None) -> list[str]:
        width, height = self.screen
        return [
            "/bin/sh", "-c",
            f'cp -RP {IMAGE_HOME_FOLDER}/. {SEED_FOLDER}/. "$HOME"/ && exec "$@"', "seed",
            "python3", "-m", "control_server", "session",
            "--socket", f"{SOCKET_FOLDER}/{SOCKET_NAME}",
            "--profile", OFFICE_PROFILE,
            "--display", DISPLAY,
            "--size", f"{width}x{height}",
            *(["--document", str(document)] if document else []),
        ]  # fmt: skip

    def _start_container(
        self, name: str, socket_folder: Path, document: DocumentFile | None
    ) -> DockerDesktopHandle:
        socket_folder.mkdir(mode=0o700)
        # The container's user creates the socket here; the folder sits in the run's private
        # (0700) scratch folder, so nobody else on the host reaches it.
        open_folder(socket_folder, None if os.geteuid() == UID else UID)
        seed = socket_folder / SEED_NAME
        target = PurePosixPath(HOME) / document.location if document else None
        try:
            image_home = self._copy_image_home()
            system = self.system_mounts()
            _make_seed(seed, document)
            container = self.engine.containers.create(
                self.image,
                command=self._command(target),
                name=name,
                user=f"{UID}:{UID}",
                working_dir=HOME,
                environment={
                    "PYTHONPATH": MOUNT_ROOT,
                    "PYTHONDONTWRITEBYTECODE": "1",
                    "XDG_RUNTIME_DIR": RUNTIME_DIR,
                },
                labels=run_labels("desktop"),
                network_mode="none",
                mounts=[
                    Mount(
                        f"{MOUNT_ROOT}/control_server",
                        str(CONTROL_SERVER_SOURCE),
                        type="bind",
                        read_only=True,
                    ),
                    Mount(SOCKET_FOLDER, str(socket_folder), type="bind"),
                    Mount(SEED_FOLDER, str(seed), type="bind", read_only=True),
                    Mount(IMAGE_HOME_FOLDER, str(image_home), type="bind", read_only=True),
                    *system,
                ],
                read_only=True,
                tmpfs={
                    HOME: f"size={self.home_bytes},uid={UID},gid={UID},mode=0755",
                    "/tmp": f"size={SCRATCH_BYTES},mode=1777",
                    "/var/tmp": f"size={SCRATCH_BYTES},mode=1777",
                    RUNTIME_DIR: f"size={SCRATCH_BYTES},uid={UID},gid={UID},mode=0700",
                },
                mem_limit=self.memory_bytes,
                memswap_limit=self.memory_bytes,
                shm_size=SHARED_MEMORY_BYTES,
                pids_limit=self.processes,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                init=True,
                detach=True,
            )
        except docker.errors.ImageNotFound as error:
            shutil.rmtree(socket_folder, ignore_errors=True)
            raise SandboxError(
                f"image {self.image} is missing (build it: {BUILD_COMMAND})"
            ) from error
        except docker.errors.DockerException as error:
            shutil.rmtree(socket_folder, ignore_errors=True)
            raise SandboxError(f"cannot create desktop container {name}: {error}") from error
        except BaseException:
            shutil.rmtree(socket_folder, ignore_errors=True)
            raise
        handle = DockerDesktopHandle(
            container, socket_folder, on_stop=lambda: self._created.discard(name)
        )
        try:
            container.start()
        except BaseException as error:
            remove_container(container)
            shutil.rmtree(socket_folder, ignore_errors=True)
            if isinstance(error, docker.errors.DockerException):
                raise SandboxError(f"cannot start desktop container {name}: {error}") from error
            raise
        handle.uid = handle.user_uid()
        return handle

    def _copy_image_home(self) -> Path:
        """The host copy of the image's home folder, made once per provider from a created (never
        started) container of the image, readable by the container's user."""
        with self._image_home_lock:
            if self._image_home is None or not self._image_home.is_dir():
                self._image_home = self._unpack_image_home()
            return self._image_home

    def system_mounts(self) -> list[Mount]:
        """``/usr/lib`` and ``/usr/share`` (libraries, LibreOffice, Python, fonts: nearly all
        the image's bytes) bind-mounted read-only from the image's own layer on the engine's
        disk, where the engine keeps the image as one overlay layer the host can see (an
        imported image, on ``overlay2`` or ``fuse-overlayfs``); else nothing, and they are read
        through the container's root file system as usual. (Not all of ``/usr``: the engine
        puts its init at ``/sbin/docker-init``, which is in ``/usr``.)

        Every container reads the same files then: LibreOffice's libraries stay in the page cache
        from one desktop to the next, where through ``fuse-overlayfs`` (the engine's driver
        where the kernel's overlayfs cannot be used) each new container reads them again through
        its own FUSE process (the FUSE processes' CPU per replayed run went from about 0.6 s to
        0.35 s on the GUI suite)."""
        if self._system_mounts is None:
            self._system_mounts = []
            try:
                attrs = self.engine.images.get(self.image).attrs
            except docker.errors.DockerException:
                return []  # the container's creation names what is wrong
            driver = attrs.get("GraphDriver") or {}
            layers = (attrs.get("RootFS") or {}).get("Layers") or []
            upper = (driver.get("Data") or {}).get("UpperDir")
            one_layer = driver.get("Name") in OVERLAY_DRIVERS and len(layers) == 1
            if one_layer and isinstance(upper, str):
                sources = {folder: Path(upper, folder.lstrip("/")) for folder in SYSTEM_FOLDERS}
                if all(source.is_dir() for source in sources.values()):
                    self._system_mounts = [
                        Mount(folder, str(source), type="bind", read_only=True)
                        for folder, source in sources.items()
                    ]
        return self._system_mounts

    def _unpack_image_home(self) -> Path:
        folder = current_run().directory() / current_run().new_name("imagehome")
        container = self.engine.containers.create(
            self.image, command=["true"], network_mode="none", labels=run_labels("desktop")
        )
        try:
            stream, _ = container.get_archive(HOME)
            archive = io.BytesIO(b"".join(stream))
        finally:
            remove_container(container)
        unpacked = folder.with_name(folder.name + ".part")
        with tarfile.open(fileobj=archive) as tar:
            tar.extractall(unpacked, filter="data")  # our own image's, still no link leads out
        (unpacked / PurePosixPath(HOME).name).rename(folder)
        shutil.rmtree(unpacked)
        for root, folders, files in os.walk(folder):
            for name in folders:
                (Path(root) / name).chmod(0o755)
            for name in files:
                path = Path(root) / name
                if not path.is_symlink():
                    path.chmod(path.stat().st_mode & 0o755 | 0o644)
        folder.chmod(0o755)
        return folder

    async def _wait_ready(
        self, sandbox: DesktopSandbox, handle: DockerDesktopHandle, document: DocumentFile | None
    ) -> None:
        deadline = time.monotonic() + self.ready_timeout
        next_status = 0.0
        while not await sandbox.client.is_up():
            # Asking the engine costs a request in the engine and here: once a second is soon
            # enough to notice a desktop that stopped while starting.
            if time.monotonic() >= next_status:
                next_status = time.monotonic() + STATUS_INTERVAL
                status = await asyncio.to_thread(handle.status)
                if status not in ("created", "running"):
                    logs = await asyncio.to_thread(handle.logs)
                    raise DesktopStartError(
                        f"desktop {sandbox.name} stopped while starting ({status}): {logs}"
                    )
            if time.monotonic() > deadline:
                logs = await asyncio.to_thread(handle.logs)
                raise DesktopStartError(
                    f"desktop {sandbox.name} did not answer within {self.ready_timeout:g} s: {logs}"
                )
            await asyncio.sleep(0.05)
        # The socket is made: the container's user may write nothing more into a host folder.
        await asyncio.to_thread(close_folder, handle.socket_folder)
        if document is None:
            return
        remaining = max(1.0, deadline - time.monotonic())
        try:
            shown = await wait_for_window(sandbox.client, document.location.name, remaining)
        except DesktopControlError as error:
            raise SandboxError(f"desktop {sandbox.name}: {error}") from error
        if not shown:
            logs = await asyncio.to_thread(handle.logs)
            raise DesktopStartError(
                f"desktop {sandbox.name}: no window showed {document.location.name} within "
                f"{self.ready_timeout:g} s: {logs}"
            )

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            await asyncio.to_thread(self._sweep)
            if self._image_home is not None:
                await asyncio.to_thread(shutil.rmtree, self._image_home, True)
                self._image_home = None
            engine, self._engine = self._engine, None
            if engine is not None:
                engine.close()

    def _sweep(self) -> None:
        """Remove containers (and socket folders) of starts that never became sandboxes."""
        names, self._created = self._created, set()
        if self._engine is None:
            return
        for name in names:
            try:
                remove_container(self._engine.containers.get(name))
            except docker.errors.NotFound:
                pass
            except docker.errors.DockerException:
                continue  # gc collects it by its run label
            shutil.rmtree(current_run().directory() / name, ignore_errors=True)


def _make_seed(seed: Path, document: DocumentFile | None) -> None:
    """The folder copied into the home at start: ``document`` (and the folders above it),
    readable by the container's user, writable by nobody but the host."""
    seed.mkdir(mode=0o755)
    if document is None:
        return
    # Confined to the seed folder: no '..' part or link below it is followed.
    target = seed / document.location
    try:
        descriptor = open_confined(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, within=seed)
    except UnsafeFileError as error:
        raise SandboxError(f"the desktop's document {document.location}: {error}") from None
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(document.data)
    target.chmod(0o644)


def _peak_memory(container: Container) -> int | None:
    """The container's peak memory: its cgroup's file (v1) when readable, else the engine's
    one-shot statistics."""
    with contextlib.suppress(OSError, ValueError, TypeError):
        return int((CGROUP_MEMORY / str(container.id) / "memory.max_usage_in_bytes").read_text())
    try:
        stats = container.stats(stream=False, one_shot=True)
    except docker.errors.DockerException:
        return None
    if not isinstance(stats, dict):
        return None
    memory = stats.get("memory_stats") or {}
    peak = memory.get("max_usage") or memory.get("usage")
    return int(peak) if peak else None
