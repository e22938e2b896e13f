"""Reaching a Unix socket that a sandbox's own server made, without trusting what the sandbox
could change.

A desktop's control server and an isolated Postgres server listen on a Unix socket that the
sandbox's user creates in a folder the host made and bound into the sandbox. Whatever runs in the
sandbox (a recorded step, a dataset's code, a document's macros) runs as that user. Had the host
connected to the socket's path as the operating system resolves it, that code could have put a
symbolic link in the socket's place, pointing at another socket of the host (the Docker engine's,
another desktop's), and the host's next requests would have gone there.

Three walls keep that out (desktops on both backends and the isolated Postgres server build all
three; the resident helper of Docker sandboxes, whose container root may write its folder, the
last two without an owner):

- **The folder.** The socket's folder is one the runtime made in its run's private scratch folder
  (``sandboxes.runs``), so its own path is the runtime's; it is open to the sandbox's user only
  while the server starts (no recorded code has run yet) and closed to it (owned by the runtime,
  mode 0755) once the socket is there. From then on only the runtime's user can put anything in
  the socket's place. (A runtime that is not root runs local desktops as its own user, who could
  open the folder again; the next two walls do not rely on the folder.)
- **The check.** Before every connection the socket is opened as a path only (``O_PATH``) and
  without following a final link (``O_NOFOLLOW``), and the open file is checked: a socket
  (``S_ISSOCK``, not a link, a regular file or anything else), owned by the sandbox's user as the
  host sees it. A hard link to a foreign socket cannot be made from inside: links never cross
  mount points, and no foreign socket is in a sandbox's mounts.
- **The connection goes to what was checked.** ``connect`` is given ``/proc/self/fd/N``, the
  descriptor just checked, which the kernel resolves to that very file: a swap between the check
  and the connection changes nothing.

A socket found otherwise raises ``UnsafeSocketError`` naming the socket and its sandbox; nothing
is sent anywhere. ``check`` (an ``lstat``) is the cheap form the desktop client runs before every
request, kept-alive connections included, so a swap is refused at the next request.

Programs that only take a path (the Postgres drivers, a judge's SQL server given a DSN) rely on
the folder: the runtime checks the socket before each connection it makes itself (``register``),
and once the folder is closed nobody but the runtime's user can change the socket between that
check and the connect. The verifier relay connects through the checked descriptor.
"""

from __future__ import annotations

import asyncio
import os
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

from sandboxes.base import SandboxError

__all__ = [
    "SandboxSocket",
    "UnsafeSocketError",
    "close_folder",
    "guard_of",
    "open_folder",
    "process_uid",
    "register",
    "unregister",
]

_PATH_FLAGS = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafeSocketError(SandboxError):
    """A sandbox's socket is not the socket its server made (a link, another kind of file, a
    socket of another user); the message names the socket and the sandbox."""


@dataclass(frozen=True)
class SandboxSocket:
    """One sandbox's socket as the host reaches it."""

    path: Path
    """The socket on the host: a name in a folder the runtime made (whose own path the sandbox
    cannot change; only the last component is the sandbox's)."""
    owner: int | None
    """The uid the socket must belong to, as the host sees it (the sandbox's user); None: any
    user (a socket named on a command line, whose folder the caller chose)."""
    label: str
    """What the socket is, for errors: ``desktop aj_..._desktop_1's control socket``."""

    def check(self) -> None:
        """Raise ``UnsafeSocketError`` when something else than the expected socket holds the
        socket's name; a missing socket is left to the connection (``FileNotFoundError``)."""
        try:
            found = os.lstat(self.path)
        except FileNotFoundError:
            return
        self._judge(found, None)

    def open(self) -> int:
        """A path-only descriptor (``O_PATH``) of the checked socket; the caller closes it.
        ``FileNotFoundError`` when there is none yet, ``UnsafeSocketError`` when it is not the
        expected socket."""
        descriptor = os.open(self.path, _PATH_FLAGS)
        try:
            self._judge(os.fstat(descriptor), descriptor)
        except BaseException:
            os.close(descriptor)
            raise
        return descriptor

    def connect(self, timeout: float | None = None) -> socket.socket:
        """A connected stream socket to the checked socket (see the module's docstring)."""
        descriptor = self.open()
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.settimeout(timeout)
            connection.connect(f"/proc/self/fd/{descriptor}")
        except BaseException:
            connection.close()
            raise
        finally:
            os.close(descriptor)
        return connection

    async def open_connection(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """``asyncio`` streams over a connection made by ``connect``."""
        connection = await asyncio.to_thread(self.connect, 10.0)
        connection.setblocking(False)
        return await asyncio.open_unix_connection(sock=connection)

    def _judge(self, found: os.stat_result, descriptor: int | None) -> None:
        mode = found.st_mode
        problem = None
        if stat.S_ISLNK(mode):
            try:
                target = os.readlink(self.path)
            except OSError:
                target = "?"
            problem = f"is a symbolic link (to {target})"
        elif not stat.S_ISSOCK(mode):
            problem = f"is {_kind(mode)}, not a socket"
        elif self.owner is not None and found.st_uid != self.owner:
            problem = (
                f"is a socket of uid {found.st_uid}, not of the sandbox's user (uid {self.owner})"
            )
        if problem is not None:
            raise UnsafeSocketError(
                f"{self.label} {self.path} {problem}: refused, nothing was sent to it (code in "
                "the sandbox may have put it there to steer the runtime's requests)"
            )


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a socket"


def open_folder(folder: Path, owner: int | None) -> None:
    """Let the sandbox's user (``owner``, as the host sees it; None: the runtime's own user)
    create its socket in ``folder``, a folder the runtime made in its private run folder."""
    if owner is not None and owner != os.geteuid():
        folder.chmod(0o777)  # whatever the umask; the run folder (0700) keeps everyone else out


def close_folder(folder: Path) -> None:
    """Close ``folder`` to the sandbox's user once its socket is there: owned by the runtime's
    user, mode 0755 (read and enter only)."""
    os.chown(folder, os.geteuid(), os.getegid())
    folder.chmod(0o755)


def process_uid(pid: int) -> int | None:
    """The real uid of process ``pid`` as this host sees it (a container's first process: the
    container's user after any user-namespace mapping), or None when it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


_GUARDS: dict[str, SandboxSocket] = {}
"""Sockets of this process's sandboxes reached by a path some other code builds (Postgres:
``<folder>/.s.PGSQL.<port>``), by that folder."""


def register(folder: Path, guard: SandboxSocket) -> None:
    """Remember ``guard`` as the socket reached through ``folder``."""
    _GUARDS[str(folder)] = guard


def unregister(folder: Path) -> None:
    """Forget the socket reached through ``folder``."""
    _GUARDS.pop(str(folder), None)


def guard_of(folder: str) -> SandboxSocket | None:
    """The registered socket reached through ``folder``, if any."""
    return _GUARDS.get(folder)
