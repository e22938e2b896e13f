"""The ``docker`` desktop backend: one container of the desktop image per desktop.

A desktop container runs the project's control server (``sandboxes.desktop.control_server``,
bind-mounted read-only from the repository, so it never needs an image rebuild) in its
``session`` mode: Xvfb, a session D-Bus, the AT-SPI bus, openbox and LibreOffice, as the image's
unprivileged ``user``. The container has no network at all (``network_mode=none``); the control
server listens on a Unix socket in a per-desktop host folder bind-mounted into the container,
and the runtime's ``DesktopClient`` reaches it through that socket, so nothing listens on any
address. The task's document is copied into the created container before it starts (Engine
archive API) and opened by the session at start; files the desktop saved are copied out the same
way for the verifier, whether or not the session still runs.

Limits: a memory cap (RAM and swap alike), a process-count cap, every capability dropped and no
privilege gain. Every container carries the run's labels (``sandboxes.docker.leftovers``), so
``agentjudge sandboxes gc`` removes those of a killed run; their socket folders sit in the run's
scratch folder, collected with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import shutil
import tarfile
import time
from pathlib import Path, PurePosixPath
from typing import Any

import docker
import docker.errors
from docker.models.containers import Container
from docker.types import Mount
from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt

from sandboxes.base import SandboxError
from sandboxes.desktop.client import DesktopClient, DesktopControlError
from sandboxes.desktop.image import BUILD_COMMAND, HOME, UID, desktop_image_tag
from sandboxes.docker.containers import remove_container
from sandboxes.docker.leftovers import run_labels
from sandboxes.runs import current_run

CONTROL_SERVER_SOURCE = Path(__file__).resolve().parent / "control_server"
"""The control server's folder in the repository, bind-mounted into every container."""

MOUNT_ROOT = "/opt/agentjudge"
"""Where the control server's folder appears inside (``python3 -m control_server``)."""

SOCKET_FOLDER = "/run/agentjudge"
"""The per-desktop folder inside the container that holds the control socket."""

SOCKET_NAME = "control.sock"

DOCUMENTS = f"{HOME}/Documents"
"""Where the task's document is put before the desktop starts."""

DISPLAY = ":0"
"""The only display in a container."""


class DockerDesktopOptions(BaseModel):
    """How ``docker`` desktops are started."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    image: str | None = None
    """The desktop image; None: the current recipe's tag (``make desktop-image``)."""
    memory_bytes: PositiveInt = 2 * 2**30
    """Memory cap per desktop (RAM; swap is not granted on top)."""
    shared_memory_bytes: PositiveInt = 256 * 2**20
    """Size of the container's ``/dev/shm`` (X shared-memory images, LibreOffice)."""
    pids_limit: PositiveInt = 512
    """Most processes and threads a desktop may hold at once."""
    screen: tuple[PositiveInt, PositiveInt] = (1920, 1080)
    """The virtual screen's width and height."""
    ready_timeout: PositiveFloat = 60.0
    """Seconds the control server may take to answer after the container starts."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Extra container labels (the run's labels are always set)."""


class DockerDesktop:
    """One desktop in one container, reached through its control socket.

    ``start`` creates the container (the document inside), starts it and waits for the control
    server; ``client`` then drives it; ``destroy`` removes the container and the socket folder.
    """

    def __init__(self, engine: docker.DockerClient, options: DockerDesktopOptions) -> None:
        self.engine = engine
        self.options = options
        self.name = current_run().new_name("desktop")
        self.socket_folder = current_run().directory() / self.name
        self.container: Container | None = None
        self.document: str | None = None
        """The opened document's path inside the desktop, once started with one."""
        self._client: DesktopClient | None = None

    def __repr__(self) -> str:
        return f"DockerDesktop({self.name})"

    @property
    def client(self) -> DesktopClient:
        """The control client; only after ``start``."""
        if self._client is None:
            raise SandboxError(f"desktop {self.name} is not started")
        return self._client

    @property
    def socket_path(self) -> Path:
        """The host side of the control socket."""
        return self.socket_folder / SOCKET_NAME

    # -- start -----------------------------------------------------------------------------------

    async def start(self, document: Path | None = None) -> DesktopClient:
        """Start the desktop with ``document`` (a host file) copied to ``~/Documents`` and
        opened; return the connected client. On any failure everything is removed again."""
        try:
            await asyncio.to_thread(self._create_and_start, document)
            self._client = DesktopClient(socket_path=self.socket_path)
            await self._wait_ready()
        except BaseException:
            await self.destroy()
            raise
        return self._client

    def _command(self) -> list[str]:
        width, height = self.options.screen
        command = [
            "python3",
            "-m",
            "control_server",
            "session",
            "--display",
            DISPLAY,
            "--size",
            f"{width}x{height}",
            "--socket",
            f"{SOCKET_FOLDER}/{SOCKET_NAME}",
            "--profile",
            f"{HOME}/.agentjudge-office",
        ]
        if self.document is not None:
            command += ["--document", self.document]
        return command

    def _create_and_start(self, document: Path | None) -> None:
        self.socket_folder.mkdir(mode=0o700)
        # The container's user must create the socket here; the folder sits in the run's
        # private (0700) scratch folder, so nobody else on the host reaches it.
        self.socket_folder.chmod(0o777)
        if document is not None:
            self.document = f"{DOCUMENTS}/{document.name}"
        image = self.options.image or desktop_image_tag()
        try:
            container = self.engine.containers.create(
                image,
                command=self._command(),
                name=self.name,
                user=f"{UID}:{UID}",
                working_dir=HOME,
                environment={"PYTHONPATH": MOUNT_ROOT, "PYTHONDONTWRITEBYTECODE": "1"},
                labels={**self.options.labels, **run_labels("desktop")},
                network_mode="none",
                mounts=[
                    Mount(
                        f"{MOUNT_ROOT}/control_server",
                        str(CONTROL_SERVER_SOURCE),
                        type="bind",
                        read_only=True,
                    ),
                    Mount(SOCKET_FOLDER, str(self.socket_folder), type="bind"),
                ],
                mem_limit=self.options.memory_bytes,
                memswap_limit=self.options.memory_bytes,
                shm_size=self.options.shared_memory_bytes,
                pids_limit=self.options.pids_limit,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                init=True,
                detach=True,
            )
        except docker.errors.ImageNotFound as error:
            raise SandboxError(f"image {image} is missing (build it: {BUILD_COMMAND})") from error
        except docker.errors.DockerException as error:
            raise SandboxError(f"cannot create desktop container {self.name}: {error}") from error
        self.container = container
        try:
            if document is not None:
                container.put_archive(DOCUMENTS, _archive_of(document))
            container.start()
        except docker.errors.DockerException as error:
            raise SandboxError(f"cannot start desktop container {self.name}: {error}") from error

    async def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.options.ready_timeout
        client = self.client
        while True:
            if self.socket_path.exists() and await client.is_up():
                return
            status = await asyncio.to_thread(self._status)
            if status not in ("created", "running"):
                raise SandboxError(
                    f"desktop container {self.name} exited ({status}) during start-up:\n"
                    f"{await asyncio.to_thread(self.logs)}"
                )
            if time.monotonic() > deadline:
                raise SandboxError(
                    f"desktop {self.name} did not answer within {self.options.ready_timeout:g} s;"
                    f" its log:\n{await asyncio.to_thread(self.logs)}"
                )
            await asyncio.sleep(0.05)

    async def wait_for_window(self, title_part: str, timeout: float = 30.0) -> str:
        """Wait until a window whose title holds ``title_part`` is managed; return its title."""
        deadline = time.monotonic() + timeout
        while True:
            windows = await self.client.windows() or []
            for _, title in windows:
                if title_part in title:
                    return title
            if time.monotonic() > deadline:
                shown = ", ".join(repr(title) for _, title in windows) or "none"
                raise DesktopControlError(
                    f"desktop {self.name}: no window titled with {title_part!r} within"
                    f" {timeout:g} s (windows: {shown})"
                )
            await asyncio.sleep(0.1)

    def _status(self) -> str:
        if self.container is None:
            return "removed"
        try:
            self.container.reload()
        except docker.errors.NotFound:
            return "removed"
        return str(self.container.status)

    def logs(self, tail: int = 60) -> str:
        """The last lines the container's session wrote (for error messages)."""
        if self.container is None:
            return ""
        try:
            raw = self.container.logs(tail=tail)
        except docker.errors.DockerException as error:
            return f"(no log: {error})"
        return bytes(raw).decode(errors="replace").strip()

    # -- files -----------------------------------------------------------------------------------

    async def export_files(self, paths: list[str], destination: Path) -> dict[str, Path]:
        """Copy files out of the desktop into ``destination`` (each under its own name); return
        where each path that existed went. Works on a stopped session too (archive API)."""
        return await asyncio.to_thread(self._export, paths, destination)

    def _export(self, paths: list[str], destination: Path) -> dict[str, Path]:
        if self.container is None:
            raise SandboxError(f"desktop {self.name} is not started")
        destination.mkdir(parents=True, exist_ok=True)
        exported: dict[str, Path] = {}
        for path in paths:
            try:
                stream, _ = self.container.get_archive(path)
            except docker.errors.NotFound:
                continue
            except docker.errors.DockerException as error:
                raise SandboxError(
                    f"desktop {self.name}: cannot copy {path} out: {error}"
                ) from error
            data = io.BytesIO(b"".join(stream))
            with tarfile.open(fileobj=data) as archive:
                member = next((m for m in archive.getmembers() if m.isfile()), None)
                if member is None:
                    continue  # a folder, or something that is not a regular file
                source = archive.extractfile(member)
                if source is None:
                    continue
                target = destination / PurePosixPath(path).name
                with source, target.open("wb") as handle:
                    shutil.copyfileobj(source, handle)
            exported[path] = target
        return exported

    # -- figures and teardown --------------------------------------------------------------------

    async def peak_memory_bytes(self) -> int | None:
        """The container's peak memory use so far, as the engine's cgroup reports it."""
        if self.container is None:
            return None
        container = self.container
        stats: dict[str, Any] = await asyncio.to_thread(container.stats, stream=False)
        memory = stats.get("memory_stats") or {}
        peak = memory.get("max_usage") or memory.get("usage")
        return int(peak) if peak else None

    async def destroy(self) -> None:
        """Close the client, remove the container and the socket folder. Safe to call twice."""
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.aclose()
        container, self.container = self.container, None
        if container is not None:
            await asyncio.to_thread(remove_container, container)
        await asyncio.to_thread(shutil.rmtree, self.socket_folder, True)


def _archive_of(document: Path) -> bytes:
    """A tar holding ``document`` under its own name, owned by the desktop's user."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo(document.name)
        data = document.read_bytes()
        info.size = len(data)
        info.mode = 0o644
        info.uid = info.gid = UID
        info.mtime = int(time.time())
        archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def engine() -> docker.DockerClient:
    """A client for the local engine; ``SandboxError`` when it is unreachable."""
    try:
        client = docker.from_env(timeout=300)
        client.ping()
    except docker.errors.DockerException as error:
        raise SandboxError(f"the Docker engine is not reachable: {error}") from error
    return client
