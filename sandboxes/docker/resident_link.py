"""The host's end of the resident helper (``sandboxes.docker.resident``): requests over its socket.

A ``ResidentLink`` keeps a few open connections to one helper's Unix socket and hands each call
one of them, so concurrent calls do not wait on one another's round trip (the helper still runs
them one at a time). A call is a blocking round trip of a few hundred microseconds; the async
wrappers run it in a worker thread. An answer that is an error raises ``ResidentError`` carrying
the helper's code; a broken connection raises ``SandboxError``.

The socket's folder is bound into the container, whose processes may write it (the container's
root owns it as the host's root does). The link therefore reaches the socket as
``sandboxes.sandbox_sockets`` says: its name checked before every call (a socket, not a link)
and each new connection made to a descriptor opened without following links, so a link put in
the socket's place raises ``UnsafeSocketError`` naming the socket and the container instead of
reaching whatever it names. (No owner is checked: the container's root is the host's uid 0.)
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import socket
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from sandboxes.base import SandboxError
from sandboxes.docker.resident.protocol import (
    PayloadReader,
    PayloadWriter,
    ProtocolError,
    read_header,
    read_payload,
    write_header,
    write_message,
)
from sandboxes.sandbox_sockets import SandboxSocket, UnsafeSocketError

SOCKET_FOLDER = "/run/agentjudge"
"""Inside a container, the bind-mounted folder that holds the helper's socket."""

SOCKET_NAME = "resident.sock"

CALL_TIMEOUT = 300.0
"""The longest one request may take (an archive of a large tree included)."""

_IDLE_CONNECTIONS = 4


class ResidentError(Exception):
    """The helper answered with an error: ``code`` (an errno name or its own) and ``detail``."""

    def __init__(self, code: str, detail: Any) -> None:
        super().__init__(f"{code}: {detail}" if detail is not None else code)
        self.code = code
        self.detail = detail


class _Connection:
    def __init__(self, guard: SandboxSocket, timeout: float) -> None:
        self.socket: socket.socket = guard.connect(timeout)
        self.reader = self.socket.makefile("rb")
        self.writer = self.socket.makefile("wb")

    def close(self) -> None:
        for stream in (self.reader, self.writer):
            with contextlib.suppress(OSError):
                stream.close()
        self.socket.close()


class ResidentLink:
    """Calls to the helper listening at ``socket_path`` (``name``: shown in errors)."""

    def __init__(self, socket_path: Path, name: str, *, timeout: float = CALL_TIMEOUT) -> None:
        self.socket_path = socket_path
        self.guard = SandboxSocket(socket_path, None, f"{name}'s helper socket")
        self.name = name
        self.timeout = timeout
        self._idle: list[_Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def _connection(self) -> _Connection:
        with self._lock:
            if self._closed:
                raise SandboxError(f"the link to {self.name} is closed")
        self.guard.check()
        with self._lock:
            if self._idle:
                return self._idle.pop()
        try:
            return _Connection(self.guard, self.timeout)
        except OSError as error:
            raise SandboxError(f"cannot reach the helper of {self.name}: {error}") from error

    def _release(self, connection: _Connection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < _IDLE_CONNECTIONS:
                self._idle.append(connection)
                return
        connection.close()

    def call(
        self,
        operation: str,
        *arguments: Any,
        payload: bytes | Iterable[bytes] = b"",
        writer: Callable[[IO[bytes]], None] | None = None,
        sink: IO[bytes] | None = None,
    ) -> tuple[Any, bytes]:
        """Send one request; return the result and the answer's payload (written to ``sink``
        instead when given). ``writer``, when given, writes the request's payload into a file
        as it goes (streamed, never held whole); an exception it raises breaks the request off
        and is raised as it is. Raises ``ResidentError`` for an answered failure."""
        connection = self._connection()
        request = {"op": operation, "args": list(arguments)}
        try:
            if writer is None:
                write_message(connection.writer, request, payload)
            else:
                self._stream(connection, request, writer)
            header = read_header(connection.reader)
            if header is None:
                raise ProtocolError("the helper closed the connection")
            if sink is None:
                data = read_payload(connection.reader)
            else:
                reader = PayloadReader(connection.reader)
                while block := reader.read(1 << 20):
                    sink.write(block)
                data = b""
        except (OSError, ValueError) as error:
            connection.close()
            raise SandboxError(
                f"{operation} in {self.name}: the helper's answer broke off: {error}"
            ) from error
        except BaseException:
            connection.close()
            raise
        self._release(connection)
        if "error" in header:
            raise ResidentError(str(header["error"]), header.get("detail"))
        return header.get("result"), data

    @staticmethod
    def _stream(
        connection: _Connection, request: dict[str, Any], writer: Callable[[IO[bytes]], None]
    ) -> None:
        write_header(connection.writer, request)
        frames = PayloadWriter(connection.writer)
        buffered = io.BufferedWriter(frames, buffer_size=1 << 20)  # whole frames, not 16 KiB
        writer(buffered)
        buffered.flush()
        frames.finish()

    async def acall(
        self,
        operation: str,
        *arguments: Any,
        payload: bytes | Iterable[bytes] = b"",
        writer: Callable[[IO[bytes]], None] | None = None,
    ) -> tuple[Any, bytes]:
        """``call`` in a worker thread."""
        return await asyncio.to_thread(
            functools.partial(self.call, payload=payload, writer=writer), operation, *arguments
        )

    def wait_ready(self, timeout: float, alive: Any = None) -> None:
        """Wait until the helper answers a ping (``alive()``, when given, is asked between tries
        and may raise to give up early); ``SandboxError`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            if self.socket_path.exists():
                try:
                    self.call("ping")
                    return
                except UnsafeSocketError:
                    raise  # not a helper still starting
                except SandboxError:
                    pass
            if time.monotonic() > deadline:
                raise SandboxError(f"the helper of {self.name} did not answer within {timeout:g} s")
            if alive is not None:
                alive()
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    def close(self) -> None:
        """Close every idle connection; later calls fail."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
