"""The host reaches a sandbox's control socket without following what the sandbox put there.

A desktop's control server (``local`` and ``docker`` backends) and an isolated Postgres server
listen on a Unix socket their sandbox's user made. The attacker is code in the sandbox (a
recorded step, a dataset's ``pyautogui`` code, a superuser step's ``COPY ... TO PROGRAM``) that
puts a link to another socket of the host in the socket's place, to steer the runtime's next
requests there. Each test owns a listening decoy socket on the host and checks:

- code in the sandbox cannot replace the socket at all (its folder is closed to it);
- a socket replaced anyway (the test does it as the runtime's user: a link to the decoy, the
  decoy socket itself, a regular file) is refused at the host's next request with an error
  naming the socket and the sandbox, and the decoy receives nothing;
- put back, the real socket answers again.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import textwrap
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from dataset.actions import PyAutoGuiAction
from sandboxes.base import SandboxError
from sandboxes.desktop.sandbox import DesktopProvider, DesktopSandbox
from tests.sandboxes.desktop.helpers import BACKENDS, desktop_provider, start, word_document


class Decoy:
    """A listening Unix socket of the test's own that records every byte sent to it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.received = bytearray()
        self.connections = 0
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.path))
        self._server.listen()
        self._server.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._server.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            with connection:
                connection.settimeout(1.0)
                with contextlib.suppress(OSError):
                    self.received += connection.recv(65536)

    @property
    def untouched(self) -> bool:
        """Nobody connected and nothing was sent."""
        return self.connections == 0 and not self.received

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._server.close()


@pytest.fixture
def decoy() -> Iterator[Decoy]:
    # Outside the run's folders, as another service's socket would be; reachable by the host.
    folder = Path(f"/tmp/aj-decoy-{os.getpid()}-{threading.get_ident()}")
    folder.mkdir(mode=0o755)
    made = Decoy(folder / "decoy.sock")
    yield made
    made.close()
    shutil.rmtree(folder, ignore_errors=True)


# -- the swaps ------------------------------------------------------------------------------------


def _swap_link(place: Path, decoy: Decoy) -> Decoy | None:
    place.symlink_to(decoy.path)
    return None


def _swap_socket(place: Path, decoy: Decoy) -> Decoy | None:
    # Another listening socket under the same name, of another user (the test's).
    return Decoy(place)


def _swap_file(place: Path, decoy: Decoy) -> Decoy | None:
    place.write_text("not a socket")
    return None


SWAPS: dict[str, tuple[Callable[[Path, Decoy], Decoy | None], str]] = {
    "link": (_swap_link, "is a symbolic link"),
    "foreign socket": (_swap_socket, "is a socket of uid"),
    "regular file": (_swap_file, "is a regular file, not a socket"),
}
"""How the socket is replaced, and what the refusal says."""


async def _refused_every_swap(
    socket_path: Path, decoy: Decoy, request: Callable[[], Awaitable[object]], names: str
) -> None:
    """Replace the socket at ``socket_path`` each way in turn (the real one kept aside); the
    next ``request`` must fail naming the socket, ``names`` and the swap; then put it back."""
    aside = socket_path.with_name(socket_path.name + ".real")
    for swap, (make, says) in SWAPS.items():
        socket_path.rename(aside)
        extra = None
        try:
            extra = make(socket_path, decoy)
            with pytest.raises(SandboxError) as caught:
                await request()
        finally:
            if extra is not None:
                extra.close()
            socket_path.unlink(missing_ok=True)
            aside.rename(socket_path)
        message = str(caught.value)
        assert str(socket_path) in message, (swap, message)
        assert names in message, (swap, message)
        assert says in message, (swap, message)
        for target in (decoy, extra):
            if target is not None:
                assert target.untouched, (swap, bytes(target.received))


# -- desktops -------------------------------------------------------------------------------------

REPLACE_SOCKET = textwrap.dedent(
    """
    import os
    # The control server's socket, wherever this backend put it (its command line names it).
    found = None
    for pid in os.listdir("/proc"):
        try:
            words = open(f"/proc/{{pid}}/cmdline", "rb").read().split(b"\\0")
        except OSError:
            continue
        if b"--socket" in words:
            found = words[words.index(b"--socket") + 1].decode()
    print("socket:", found)
    try:
        os.unlink(found)
        os.symlink({decoy!r}, found)
        print("replaced")
    except OSError as error:
        print("refused:", error)
    """
)


@pytest.fixture(params=BACKENDS)
async def provider(request: pytest.FixtureRequest) -> AsyncIterator[DesktopProvider]:
    async with desktop_provider(request.param, ready_timeout=90) as made:
        yield made


@pytest.mark.desktop
@pytest.mark.slow
async def test_a_desktop_cannot_steer_the_hosts_requests_through_its_socket(
    provider: DesktopProvider, decoy: Decoy
) -> None:
    async with await start(provider, "memo.docx", word_document("Sockets")) as desktop:
        assert isinstance(desktop, DesktopSandbox)
        # Code in the desktop tries to put a link to the decoy in its socket's place.
        code = REPLACE_SOCKET.format(decoy=str(decoy.path))
        outcome = await desktop.perform(PyAutoGuiAction(code=code), timeout=60)
        assert "socket: /" in outcome.output, outcome.output
        with contextlib.suppress(SandboxError):
            await desktop.client.screen_size()
        assert decoy.untouched, bytes(decoy.received)
        assert "refused: [Errno 13] Permission denied" in outcome.output, outcome.output
        assert await desktop.client.screen_size() == provider.screen

        # Replaced anyway (here by the runtime's own user): refused, naming socket and desktop.
        socket_path = desktop.client.socket_path
        assert socket_path is not None
        await _refused_every_swap(
            socket_path, decoy, desktop.client.screen_size, f"desktop {desktop.name}"
        )
        # Put back, the real socket answers again.
        assert await desktop.client.screen_size() == provider.screen


# -- the isolated Postgres server -----------------------------------------------------------------


@pytest.mark.docker
async def test_a_superuser_step_cannot_steer_the_hosts_connections_through_its_socket(
    decoy: Decoy,
) -> None:
    from sandboxes.docker.images import ensure_sandbox_image
    from sandboxes.postgres import admin
    from sandboxes.postgres.docker_cluster import SOCKET_MOUNT, DockerPostgresCluster

    cluster = DockerPostgresCluster(ensure_sandbox_image(), isolated=True)
    await cluster.start()
    try:
        assert cluster.container is not None
        socket_path = Path(cluster.admin.host) / ".s.PGSQL.5432"
        conn = await admin.connect(cluster.admin)
        try:
            # The recorded superuser runs a program as the server's user, inside the container.
            replace = f"ln -sf {decoy.path} {SOCKET_MOUNT}/.s.PGSQL.5432 2>&1"
            with contextlib.suppress(Exception):
                await conn.execute(f"COPY (SELECT 1) TO PROGRAM {admin.quote_literal(replace)}")
        finally:
            await conn.close()
        # The runtime's next connection still reaches the server; the decoy got nothing.
        checked = await admin.connect(cluster.admin)
        try:
            assert await checked.fetchval("SELECT 1") == 1
        finally:
            await checked.close()
        assert decoy.untouched, bytes(decoy.received)
        assert not socket_path.is_symlink()
        assert socket_path.is_socket()

        async def connect_once() -> None:
            conn = await admin.connect(cluster.admin)
            await conn.close()

        await _refused_every_swap(
            socket_path, decoy, connect_once, f"Postgres container {cluster.container.name}"
        )
        await connect_once()
    finally:
        await cluster.stop()


# -- the resident helper of Docker sandbox containers ---------------------------------------------


@pytest.mark.docker
def test_a_container_cannot_steer_the_hosts_calls_through_its_helpers_socket(
    decoy: Decoy,
) -> None:
    import docker as docker_sdk

    from sandboxes.docker.images import ensure_sandbox_image
    from sandboxes.docker.pool import ContainerSpec, link_of, start_resident
    from sandboxes.docker.resident_link import SOCKET_FOLDER, SOCKET_NAME

    engine = docker_sdk.from_env()
    spec = ContainerSpec(image=ensure_sandbox_image(), kind="filesystem", tag="sockres")
    made = start_resident(engine, spec)
    try:
        made.link.call("ping")
        # A command in the container (its root may write the socket's folder) puts a link there.
        result = made.container.exec_run(
            ["ln", "-sf", str(decoy.path), f"{SOCKET_FOLDER}/{SOCKET_NAME}"]
        )
        assert result.exit_code == 0, result.output
        # The link in use, and a new one as another process would make (``link_of``).
        for link in (made.link, link_of(made.container)):
            with pytest.raises(SandboxError) as caught:
                link.call("ping")
            message = str(caught.value)
            assert str(made.socket_folder / SOCKET_NAME) in message, message
            assert f"{made.container.name}'s helper socket" in message, message
            assert "is a symbolic link" in message, message
            assert decoy.untouched, bytes(decoy.received)
    finally:
        made.remove()
        engine.close()
