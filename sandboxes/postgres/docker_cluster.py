"""The ``docker`` Postgres backend: one container of the sandbox image runs the cluster.

The image carries a cluster initialised at build time (``sandboxes.docker.images``), so ``start``
only runs a container and waits for the server: about a second. The port is published on
127.0.0.1 only (checked after the start), at a port the Engine picks; the superuser's password is
random per container, and every connection through the port needs a password
(``scram-sha-256``: only the container's own Unix socket trusts, and nothing outside the container
reaches it). ``stop`` removes the container and with it every database. The image's server is
PostgreSQL 17 (``sandboxes.docker.images.PG_MAJOR``).

An *isolated* cluster (``isolated=True``) is a throwaway server for one sandbox whose recorded
SQL acts as the superuser (``sandboxes.postgres.private``): its container has no network at all
(``network_mode="none"``), so neither ``COPY ... PROGRAM`` nor ``dblink``/``postgres_fdw`` reach
anything outside it. The runtime talks to it through the server's Unix socket, in a folder of the
run's scratch space bound into the container, where every role, the superuser included, must give
its password (the image's trusting local rule is replaced); TCP is switched off. The container
drops every capability, may not gain privileges, and is bounded in memory and processes.

The socket's folder is open to the container's ``postgres`` user only until the server answers:
then, before any recorded SQL runs, it is closed (owned by the runtime, mode 0755), so a
superuser step's ``COPY ... TO PROGRAM 'ln -sf /var/run/docker.sock ...'`` cannot put a link in
the socket's place. The socket is checked then (a socket of the container's user, no link) and
registered (``sandboxes.sandbox_sockets.register``), so every connection the runtime makes checks
it again and the verifier relay connects through a checked descriptor.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import time
from pathlib import Path
from typing import Any, ClassVar

import asyncpg
import docker
import docker.errors
from docker.models.containers import Container

from sandboxes.base import SandboxError
from sandboxes.docker.containers import remove_container
from sandboxes.docker.images import (
    BUILD_COMMAND,
    PASSWORD_ENV,
    PG_PORT,
    PGDATA_DIR,
    START_POSTGRES,
    SUPERUSER,
    sandbox_image_tag,
)
from sandboxes.docker.leftovers import run_labels
from sandboxes.postgres.sandbox import PostgresCluster, PostgresConnectionInfo
from sandboxes.runs import current_run
from sandboxes.sandbox_sockets import (
    SandboxSocket,
    close_folder,
    process_uid,
    register,
    unregister,
)

RAM_FOLDER = "/var/lib/agentjudge/ram"
"""Where an in-memory cluster's tmpfs is mounted inside the container."""

HOST = "127.0.0.1"
"""The only address the server's port is published on."""

SOCKET_MOUNT = "/run/agentjudge-socket"
"""Where an isolated cluster's socket folder is bound inside its container."""

ISOLATED_MEMORY = "2g"
"""The memory limit of an isolated cluster's container (its databases live in it, in RAM)."""

ISOLATED_PIDS = 256
"""The process limit of an isolated cluster's container."""

SOCKET_PATH_LIMIT = 107
"""The longest Unix socket path Linux accepts (``sun_path`` is 108 bytes with its final NUL)."""

_ISOLATED_SETTINGS = (
    # No TCP at all, the socket in the bound folder, and passwords even there.
    f"listen_addresses = ''\nunix_socket_directories = '{SOCKET_MOUNT}'\n"
)


class DockerPostgresCluster(PostgresCluster):
    """A Postgres server in a container, reached through a loopback-only published port."""

    backend: ClassVar[str] = "docker"

    def __init__(
        self,
        image: str | None = None,
        *,
        ready_timeout: float = 30.0,
        in_memory: bool = True,
        isolated: bool = False,
    ) -> None:
        """``image`` defaults to the current sandbox image tag (build it first). ``in_memory``
        copies the image's cluster into a tmpfs at start, so databases live in RAM: the
        container's overlay file system makes every file creation, and so every template clone,
        several times slower. ``isolated``: no network, reached through its Unix socket only
        (see the module's docstring); always in memory."""
        self.image = image or sandbox_image_tag()
        self.in_memory = in_memory or isolated
        self.isolated = isolated
        self.socket_folder: Path | None = None
        """The host folder holding an isolated cluster's socket, while it runs."""
        self.ready_timeout = ready_timeout
        self.container: Container | None = None
        """The running container, set by ``start``."""
        self.startup_seconds: float | None = None
        """How long the last ``start`` took until the server accepted the admin connection."""
        self._admin: PostgresConnectionInfo | None = None
        self._client: docker.DockerClient | None = None
        self._lock = asyncio.Lock()

    @property
    def admin(self) -> PostgresConnectionInfo:
        """The ``postgres`` superuser (password authentication) on the ``postgres`` database."""
        if self._admin is None:
            raise SandboxError("the Docker Postgres cluster is not started")
        return self._admin

    @property
    def name(self) -> str | None:
        """The container's name while the cluster runs."""
        return None if self.container is None else str(self.container.name)

    async def start(self) -> None:
        """Run the container and wait until it accepts the admin connection. Idempotent."""
        async with self._lock:
            if self.container is not None:
                return
            began = time.monotonic()
            password = secrets.token_hex(16)
            if self.isolated:
                folder = self._socket_folder()
                try:
                    container = await asyncio.to_thread(self._run_isolated, password, folder)
                except BaseException:
                    await asyncio.to_thread(shutil.rmtree, folder, True)
                    raise
                host, port = str(folder), PG_PORT
            else:
                folder = None
                container, port = await asyncio.to_thread(self._run_container, password)
                host = HOST
            info = PostgresConnectionInfo(
                host=host, port=port, user=SUPERUSER, password=password, database="postgres"
            )
            try:
                await self._wait_ready(container, info, began)
                if folder is not None:
                    await asyncio.to_thread(self._close_socket_folder, container, folder)
            except BaseException:
                await asyncio.to_thread(remove_container, container)
                if folder is not None:
                    await asyncio.to_thread(shutil.rmtree, folder, True)
                raise
            self.socket_folder = folder
            self.container = container
            self._admin = info
            self.startup_seconds = time.monotonic() - began

    def _engine(self) -> docker.DockerClient:
        if self._client is None:
            try:
                self._client = docker.from_env(timeout=120)
            except docker.errors.DockerException as error:
                raise SandboxError(f"the Docker engine is not reachable: {error}") from error
        return self._client

    def _socket_folder(self) -> Path:
        """A fresh folder of the run's scratch space for the socket, which the container's
        ``postgres`` user may write while the server starts (the run's folder keeps others out;
        ``_close_socket_folder`` closes it)."""
        folder = current_run().directory() / current_run().new_name("pgsock")
        socket_path = folder / f".s.PGSQL.{PG_PORT}"
        if len(os.fsencode(socket_path)) > SOCKET_PATH_LIMIT:
            raise SandboxError(
                f"cannot place an isolated Postgres server's socket at {socket_path}: a Unix"
                f" socket path may have at most {SOCKET_PATH_LIMIT} bytes (set a shorter"
                " AGENTJUDGE_WORKDIR)"
            )
        folder.mkdir(mode=0o700)
        folder.chmod(0o777)  # whatever the umask: the container's postgres user is not the owner
        return folder

    def _close_socket_folder(self, container: Container, folder: Path) -> None:
        """Close the socket's folder to the container, check the socket and register it."""
        close_folder(folder)
        container.reload()
        uid = process_uid(int(container.attrs["State"]["Pid"]))
        if uid is None:
            raise SandboxError(f"Postgres container {container.name}: its user is unknown")
        guard = SandboxSocket(
            folder / f".s.PGSQL.{PG_PORT}", uid, f"Postgres container {container.name}'s socket"
        )
        os.close(guard.open())
        register(folder, guard)

    def _run_isolated(self, password: str, folder: Path) -> Container:
        """The container of an isolated cluster: no network, its socket in ``folder``."""
        name = current_run().new_name("pgiso")
        pgdata = f"{RAM_FOLDER}/pgdata"
        script = (
            f'cp -a {PGDATA_DIR} "$PGDATA"'
            f' && printf "local all all scram-sha-256\\n" > "$PGDATA/pg_hba.conf"'
            f' && printf "{_ISOLATED_SETTINGS}" >> "$PGDATA/postgresql.conf"'
            f" && exec {START_POSTGRES}"
        )
        try:
            return self._engine().containers.run(
                self.image,
                command=["sh", "-c", script],
                user=SUPERUSER,
                name=name,
                labels=run_labels("postgres"),
                environment={PASSWORD_ENV: password, "PGDATA": pgdata},
                network_mode="none",
                tmpfs={RAM_FOLDER: "mode=1777"},
                volumes={str(folder): {"bind": SOCKET_MOUNT, "mode": "rw"}},
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                mem_limit=ISOLATED_MEMORY,
                pids_limit=ISOLATED_PIDS,
                detach=True,
            )
        except docker.errors.ImageNotFound as error:
            raise SandboxError(
                f"image {self.image} is missing (build it: {BUILD_COMMAND})"
            ) from error
        except docker.errors.DockerException as error:
            raise SandboxError(f"cannot start Postgres container {name}: {error}") from error

    def _run_container(self, password: str) -> tuple[Container, int]:
        name = current_run().new_name("pg")
        try:
            environment = {PASSWORD_ENV: password}
            command = [START_POSTGRES]
            tmpfs: dict[str, str] = {}
            if self.in_memory:
                environment["PGDATA"] = f"{RAM_FOLDER}/pgdata"
                command = ["sh", "-c", f'cp -a {PGDATA_DIR} "$PGDATA" && exec {START_POSTGRES}']
                tmpfs[RAM_FOLDER] = "mode=1777"
            # (host, None): any free port on that address (the stubs know only fixed ports).
            ports: dict[str, Any] = {f"{PG_PORT}/tcp": (HOST, None)}
            container = self._engine().containers.run(
                self.image,
                command=command,
                user=SUPERUSER,
                name=name,
                labels=run_labels("postgres"),
                environment=environment,
                ports=ports,
                tmpfs=tmpfs,
                detach=True,
            )
        except docker.errors.ImageNotFound as error:
            raise SandboxError(
                f"image {self.image} is missing (build it: {BUILD_COMMAND})"
            ) from error
        except docker.errors.DockerException as error:
            raise SandboxError(f"cannot start Postgres container {name}: {error}") from error
        try:
            container.reload()
            bindings = container.attrs["NetworkSettings"]["Ports"][f"{PG_PORT}/tcp"]
            port = int(bindings[0]["HostPort"])
            addresses = {binding["HostIp"] for binding in bindings}
        except (docker.errors.DockerException, KeyError, IndexError, TypeError) as error:
            remove_container(container)
            raise SandboxError(f"Postgres container {name} has no published port") from error
        if addresses != {HOST}:
            remove_container(container)
            raise SandboxError(
                f"Postgres container {name} is published on {sorted(addresses)}, not on {HOST} only"
            )
        return container, port

    async def _wait_ready(
        self, container: Container, info: PostgresConnectionInfo, began: float
    ) -> None:
        deadline = began + self.ready_timeout
        last: BaseException | None = None
        while time.monotonic() < deadline:
            try:
                conn = await asyncpg.connect(
                    host=info.host,
                    port=info.port,
                    user=info.user,
                    password=info.password,
                    database=info.database,
                    timeout=max(0.5, min(3.0, deadline - time.monotonic())),
                )
            except Exception as error:  # refused, reset mid-handshake, "starting up", timeout
                last = error
            else:
                await conn.close()
                return
            status = await asyncio.to_thread(_status, container)
            if status not in ("created", "running"):
                logs = await asyncio.to_thread(_logs, container)
                raise SandboxError(
                    f"Postgres container {container.name} exited ({status}) during start-up:\n"
                    f"{logs}"
                )
            await asyncio.sleep(0.1)
        logs = await asyncio.to_thread(_logs, container)
        raise SandboxError(
            f"Postgres container {container.name} did not accept connections within"
            f" {self.ready_timeout:.0f} s (last error: {type(last).__name__}: {last});"
            f" server log:\n{logs}"
        )

    async def stop(self) -> None:
        """Remove the container (and its data). Idempotent."""
        async with self._lock:
            container, self.container, self._admin = self.container, None, None
            folder, self.socket_folder = self.socket_folder, None
            if folder is not None:
                unregister(folder)
            try:
                if container is not None:
                    await asyncio.to_thread(remove_container, container)
            finally:
                if folder is not None:
                    await asyncio.to_thread(shutil.rmtree, folder, True)
            if self._client is not None:
                self._client.close()
                self._client = None


def _status(container: Container) -> str:
    try:
        container.reload()
    except docker.errors.NotFound:
        return "removed"
    return str(container.status)


def _logs(container: Container) -> str:
    try:
        text = container.logs(tail=30).decode("utf-8", "replace")
    except docker.errors.DockerException as error:
        return f"(logs unavailable: {error})"
    return str(text).strip()
