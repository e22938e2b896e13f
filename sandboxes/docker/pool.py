"""Sandbox containers with a resident helper, and warm pools of them.

Every container of a Docker sandbox runs the resident helper (``sandboxes.docker.resident``) as
its main process, bind-mounted read-only from the repository, with a per-container socket folder
of the run's scratch folder bind-mounted at ``SOCKET_FOLDER``; it has no network at all
(``network_mode=none``), so nothing listens on any address. ``start_resident`` creates one and
waits until its helper answers; ``link_of`` finds the helper of a running container by name (the
filesystem MCP server's ``--container`` mode).

A ``WarmPool`` keeps ``size`` such containers started ahead of need, so taking one costs nothing;
each take starts a replacement in the background. A container given back after use waits again,
its tree dropped, when nothing but its helper ever worked in it (nobody was handed the container
to run commands in) and the pool has room; otherwise it is removed. A container that waits longer
than ``idle_seconds`` is removed and not replaced until the next take, so an idle pool drains
away.
Pool containers carry the run's labels like every other, so ``agentjudge sandboxes gc`` removes
them after a crash, and their socket folders go with the run's scratch folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import docker
import docker.errors
from docker.models.containers import Container
from docker.types import Mount

from sandboxes.base import SandboxError
from sandboxes.docker.containers import remove_container
from sandboxes.docker.images import BUILD_COMMAND
from sandboxes.docker.leftovers import run_labels
from sandboxes.docker.resident_link import SOCKET_FOLDER, SOCKET_NAME, ResidentError, ResidentLink
from sandboxes.runs import current_run

logger = logging.getLogger(__name__)

HELPER_SOURCE = Path(__file__).resolve().parent / "resident"
"""The helper's folder in the repository, bind-mounted read-only into every container."""

HELPER_ROOT = "/opt/agentjudge"
"""Inside the container, the folder that holds ``resident`` (on ``PYTHONPATH``)."""

READY_TIMEOUT = 60.0
"""The longest a new container's helper may take to answer."""


@dataclass(frozen=True)
class ContainerSpec:
    """What the containers of one pool look like."""

    image: str
    """The image every container runs."""
    kind: str
    """The ``agentjudge.kind`` label (the sandbox kind)."""
    tag: str
    """The tag of their names (``aj_<run>_<tag>_<n>``)."""
    mounts: tuple[Mount, ...] = field(default_factory=tuple)
    """Further bind mounts (a read-only snapshots folder, say)."""
    tmpfs: tuple[tuple[str, str], ...] = ()
    """tmpfs mounts: (where, mount options)."""


class ResidentContainer:
    """A started container, its socket folder on the host, and the link to its helper."""

    def __init__(self, container: Container, socket_folder: Path, link: ResidentLink) -> None:
        self.container = container
        self.name = str(container.name)
        self.socket_folder = socket_folder
        self.link = link
        self.ready_at = time.monotonic()

    def rename(self, name: str) -> None:
        """Give the container a new name (blocking)."""
        self.container.rename(name)
        self.name = name
        self.link.name = name

    def remove(self) -> None:
        """Remove the container and its socket folder (blocking; gone already is fine)."""
        self.link.close()
        remove_container(self.container)
        shutil.rmtree(self.socket_folder, ignore_errors=True)


def _alive_check(container: Container, name: str) -> Callable[[], None]:
    last = [time.monotonic()]

    def check() -> None:
        if time.monotonic() - last[0] < 0.5:
            return
        last[0] = time.monotonic()
        container.reload()
        if container.status not in ("created", "running"):
            logs = container.logs(tail=20).decode("utf-8", "replace").strip()
            raise SandboxError(f"container {name} stopped while starting: {logs or 'no output'}")

    return check


def start_resident(client: docker.DockerClient, spec: ContainerSpec) -> ResidentContainer:
    """Create and start one container of ``spec`` and wait until its helper answers."""
    name = current_run().new_name(spec.tag)
    socket_folder = current_run().directory() / name
    socket_folder.mkdir(mode=0o700)
    try:
        container = client.containers.create(
            spec.image,
            command=["python3", "-m", "resident", "--socket", f"{SOCKET_FOLDER}/{SOCKET_NAME}"],
            name=name,
            environment={"PYTHONPATH": HELPER_ROOT, "PYTHONDONTWRITEBYTECODE": "1"},
            labels=run_labels(spec.kind),
            network_mode="none",
            mounts=[
                Mount(f"{HELPER_ROOT}/resident", str(HELPER_SOURCE), type="bind", read_only=True),
                Mount(SOCKET_FOLDER, str(socket_folder), type="bind"),
                *spec.mounts,
            ],
            tmpfs=dict(spec.tmpfs),
            init=True,
            detach=True,
        )
    except docker.errors.ImageNotFound as error:
        shutil.rmtree(socket_folder, ignore_errors=True)
        raise SandboxError(f"image {spec.image} is missing (build it: {BUILD_COMMAND})") from error
    except docker.errors.DockerException as error:
        shutil.rmtree(socket_folder, ignore_errors=True)
        raise SandboxError(f"creating container {name}: {error}") from error
    link = ResidentLink(socket_folder / SOCKET_NAME, name)
    made = ResidentContainer(container, socket_folder, link)
    try:
        container.start()
        link.wait_ready(READY_TIMEOUT, _alive_check(container, name))
    except BaseException as error:
        made.remove()
        if isinstance(error, docker.errors.DockerException):
            raise SandboxError(f"starting container {name}: {error}") from error
        raise
    made.ready_at = time.monotonic()
    return made


def link_of(container: Container) -> ResidentLink:
    """The link to the helper of a running sandbox container (found through its mounts)."""
    for mount in container.attrs.get("Mounts") or []:
        if mount.get("Destination") == SOCKET_FOLDER and mount.get("Source"):
            return ResidentLink(Path(mount["Source"]) / SOCKET_NAME, str(container.name))
    raise SandboxError(f"container {container.name} has no resident helper")


class WarmPool:
    """Started containers of one spec, waiting to be taken."""

    def __init__(
        self, client: docker.DockerClient, spec: ContainerSpec, size: int, idle_seconds: float
    ) -> None:
        if size < 0:
            raise ValueError(f"a pool's size must be 0 or more, not {size}")
        if idle_seconds <= 0:
            raise ValueError(f"a pool's idle time must be positive, not {idle_seconds}")
        self.client = client
        self.spec = spec
        self.size = size
        self.idle_seconds = idle_seconds
        self._ready: deque[ResidentContainer] = deque()
        self._filling: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self._closed = False
        self._failure: str | None = None

    def waiting(self) -> list[str]:
        """The names of the containers waiting in the pool."""
        return [item.name for item in self._ready]

    async def take(self) -> ResidentContainer:
        """A ready container: one from the pool, else a new one; the pool refills behind (after
        a new one has started, so that the refill does not slow it down)."""
        if self._closed:
            raise SandboxError("the container pool is closed")
        while self._ready:
            item = self._ready.popleft()
            if time.monotonic() - item.ready_at <= self.idle_seconds:
                self._refill()
                return item
            await asyncio.to_thread(item.remove)
        starting = asyncio.ensure_future(asyncio.to_thread(start_resident, self.client, self.spec))
        try:
            made = await asyncio.shield(starting)
        except asyncio.CancelledError:  # the thread goes on: remove what it makes
            with contextlib.suppress(Exception):
                await asyncio.to_thread((await starting).remove)
            raise
        self._refill()
        return made

    def prefill(self) -> None:
        """Start filling the pool now, without taking anything."""
        if not self._closed:
            self._refill()

    def _refill(self) -> None:
        for _ in range(max(0, self.size - len(self._ready) - len(self._filling))):
            task = asyncio.ensure_future(self._fill_one())
            self._filling.add(task)
            task.add_done_callback(self._filling.discard)
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.ensure_future(self._sweep())

    async def _fill_one(self) -> None:
        try:
            made = await asyncio.to_thread(start_resident, self.client, self.spec)
        except (SandboxError, docker.errors.DockerException, OSError) as error:
            if self._failure != str(error):
                logger.warning("the container pool could not start a container: %s", error)
            self._failure = str(error)
            return
        self._failure = None
        if self._closed:
            await asyncio.to_thread(made.remove)
            return
        self._ready.append(made)

    async def give_back(self, item: ResidentContainer, *, clean: bool) -> None:
        """Take back a container whose sandbox is done. One in which only the helper ever
        worked (``clean``) waits again once its tree is dropped, when the pool has room; any
        other is removed."""
        if clean and not self._closed and len(self._ready) < self.size:
            try:
                await item.link.acall("reset")
                # A fresh name: a sandbox's name is never given to another one.
                await asyncio.to_thread(item.rename, current_run().new_name(self.spec.tag))
            except (ResidentError, SandboxError, docker.errors.DockerException) as error:
                logger.warning("could not reuse container %s: %s", item.name, error)
            else:
                item.ready_at = time.monotonic()
                self._ready.append(item)
                return
        await asyncio.to_thread(item.remove)

    async def _sweep(self) -> None:
        """Remove containers that waited longer than the idle time, until none waits."""
        while not self._closed and (self._ready or self._filling):
            await asyncio.sleep(self.idle_seconds / 4)
            now = time.monotonic()
            stale = [item for item in self._ready if now - item.ready_at > self.idle_seconds]
            for item in stale:
                self._ready.remove(item)
            for item in stale:
                await asyncio.to_thread(item.remove)

    async def aclose(self) -> None:
        """Remove every waiting container, and those still starting once they are up."""
        self._closed = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        if self._filling:
            await asyncio.gather(*self._filling, return_exceptions=True)
        waiting, self._ready = list(self._ready), deque()
        for item in waiting:
            await asyncio.to_thread(item.remove)
