"""A Unix-socket relay that lets code in a box (no network) reach one Postgres database.

Owns ``postgres_relay``: the runtime listens on ``<folder>/.s.PGSQL.<port>``, a socket in a
folder of its scratch space that the box binds read-only, so libpq, psycopg and asyncpg connect
with ``host=<folder>`` and ``port=<port>``; each connection is forwarded to the real server (TCP,
or its own Unix socket) until either side closes. The same relay serves the embedded, Docker and
external servers, and the server's own socket folder is never shown to the box.

The relay reads each connection's startup packet before forwarding it and admits only the role
and database it was opened for (no replication connections), and, when its opener says so, the
roles that role manages (a verifier that creates a role to test its rights logs in as it): a
second wall behind the server's own authentication, for clusters that trust local connections.
Requests for TLS or GSS
encryption are declined (the hop is a local socket); cancel requests pass through.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from sandboxes.base import SandboxError
from sandboxes.postgres.sandbox import PostgresConnectionInfo
from sandboxes.runs import current_run
from sandboxes.sandbox_sockets import guard_of

SOCKET_PATH_LIMIT = 107
"""The longest Unix socket path Linux accepts (``sun_path`` is 108 bytes with its final NUL)."""

STARTUP_LIMIT = 10_000
"""The largest startup packet the relay reads (the server's own limit is the same)."""

STARTUP_SECONDS = 30.0
"""How long a client may take to send its startup packet."""

_SSL_REQUEST = 80877103
_GSS_REQUEST = 80877104
_CANCEL_REQUEST = 80877102
_PROTOCOL_3 = 3
_CHUNK = 64 * 2**10


@dataclass(frozen=True)
class RelayedDatabase:
    """What a relay gives the box."""

    info: PostgresConnectionInfo
    """The database as the box reaches it: ``host`` is the relay's socket folder."""
    bind: list[Path]
    """Host paths to bind read-only into the box (the socket folder)."""


class _RefusedError(Exception):
    """A client asked for something the relay does not forward; the message goes back to it."""


def _error_packet(message: str) -> bytes:
    fields = b"".join(
        code + value.encode() + b"\0"
        for code, value in ((b"S", "FATAL"), (b"V", "FATAL"), (b"C", "28000"), (b"M", message))
    )
    body = fields + b"\0"
    return b"E" + (len(body) + 4).to_bytes(4, "big") + body


async def _read_packet(reader: asyncio.StreamReader) -> bytes:
    header = await reader.readexactly(4)
    length = int.from_bytes(header, "big")
    if not 8 <= length <= STARTUP_LIMIT:
        raise _RefusedError(f"invalid startup packet length {length}")
    return header + await reader.readexactly(length - 4)


def _parameters(packet: bytes) -> dict[str, str]:
    parts = packet[8:].split(b"\0")
    # key, value, key, value, ..., "", "" (the packet ends with a NUL after the last pair)
    names, values = parts[0::2], parts[1::2]
    return {
        name.decode(errors="replace"): value.decode(errors="replace")
        for name, value in zip(names, values, strict=False)
        if name
    }


OtherRoles = Callable[[str], Awaitable[bool]]
"""Whether the relay may also admit a role other than its own to its database (and let it
connect there): called with the role's name before its connection is forwarded."""


async def _check_startup(
    packet: bytes, info: PostgresConnectionInfo, others: OtherRoles | None
) -> None:
    code = int.from_bytes(packet[4:8], "big")
    if code >> 16 != _PROTOCOL_3:
        raise _RefusedError(f"unsupported protocol {code >> 16}.{code & 0xFFFF}")
    parameters = _parameters(packet)
    user = parameters.get("user", "")
    database = parameters.get("database") or user
    admitted = user == info.user or (
        others is not None and bool(user) and database == info.database and await others(user)
    )
    if not admitted or database != info.database:
        whom = f"role {info.user}" + (" and the roles it manages" if others else "")
        raise _RefusedError(
            f"this relay admits {whom} to database {info.database} only"
            f" (asked: role {user or '-'}, database {database or '-'})"
        )
    if parameters.get("replication", "false").lower() not in ("false", "off", "no", "0"):
        raise _RefusedError("this relay does not forward replication connections")


async def _first_packet(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    info: PostgresConnectionInfo,
    others: OtherRoles | None,
) -> bytes:
    """The packet to forward (a startup or cancel request), after declining encryption."""
    for _ in range(3):
        packet = await _read_packet(reader)
        code = int.from_bytes(packet[4:8], "big")
        if code in (_SSL_REQUEST, _GSS_REQUEST):
            writer.write(b"N")
            await writer.drain()
            continue
        if code != _CANCEL_REQUEST:
            await _check_startup(packet, info, others)
        return packet
    raise _RefusedError("too many encryption requests")


async def _open_upstream(
    info: PostgresConnectionInfo,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    if info.host.startswith("/"):
        guard = guard_of(info.host)
        if guard is not None:  # a sandbox's own server: through the checked socket
            return await guard.open_connection()
        return await asyncio.open_unix_connection(f"{info.host}/.s.PGSQL.{info.port}")
    return await asyncio.open_connection(info.host, info.port)


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while chunk := await reader.read(_CHUNK):
            writer.write(chunk)
            await writer.drain()


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(ConnectionError, OSError, asyncio.CancelledError):
        await writer.wait_closed()


class _Relay:
    def __init__(self, info: PostgresConnectionInfo, others: OtherRoles | None) -> None:
        self.info = info
        self.others = others
        self.handlers: set[asyncio.Task[None]] = set()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.handlers.add(task)
        upstream: asyncio.StreamWriter | None = None
        try:
            try:
                packet = await asyncio.wait_for(
                    _first_packet(reader, writer, self.info, self.others), STARTUP_SECONDS
                )
            except _RefusedError as refusal:
                writer.write(_error_packet(str(refusal)))
                await writer.drain()
                return
            except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
                return
            try:
                upstream_reader, upstream = await _open_upstream(self.info)
            except OSError as error:
                writer.write(_error_packet(f"the relay cannot reach the server: {error}"))
                await writer.drain()
                return
            upstream.write(packet)
            directions = [
                asyncio.create_task(_copy(reader, upstream)),
                asyncio.create_task(_copy(upstream_reader, writer)),
            ]
            try:
                await asyncio.wait(directions, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for direction in directions:
                    direction.cancel()
                await asyncio.gather(*directions, return_exceptions=True)
        except (ConnectionError, OSError):
            pass
        finally:
            if upstream is not None:
                await _close(upstream)
            await _close(writer)
            self.handlers.discard(task)


@asynccontextmanager
async def postgres_relay(
    info: PostgresConnectionInfo, folder: Path | None = None, *, others: OtherRoles | None = None
) -> AsyncIterator[RelayedDatabase]:
    """``async with``: a relay to ``info``'s database, as a box sees it, with what to bind;
    ``others`` may admit more roles to that database (the server still asks their passwords).

    ``folder`` (created, must not exist; by default a fresh folder in the run's scratch space) is
    where the socket lives; it is removed, and every relayed connection cut, when the block
    ends."""
    if folder is None:
        folder = current_run().directory() / current_run().new_name("relay")
    socket_path = folder / f".s.PGSQL.{info.port}"
    if len(os.fsencode(socket_path)) > SOCKET_PATH_LIMIT:
        raise SandboxError(
            f"cannot open a Postgres relay at {socket_path}: a Unix socket path may have at most"
            f" {SOCKET_PATH_LIMIT} bytes (set a shorter AGENTJUDGE_WORKDIR)"
        )
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)  # whatever the umask: the box user must reach the socket
    relay = _Relay(info, others)
    try:
        server = await asyncio.start_unix_server(relay.serve, path=str(socket_path))
        socket_path.chmod(0o777)  # connecting needs write access; the box user is not the owner
    except BaseException:
        await asyncio.to_thread(shutil.rmtree, folder, True)
        raise
    try:
        yield RelayedDatabase(
            info=info.model_copy(update={"host": str(folder)}),
            bind=[folder],
        )
    finally:
        server.close()
        for handler in list(relay.handlers):
            handler.cancel()
        await asyncio.gather(*relay.handlers, return_exceptions=True)
        await server.wait_closed()
        await asyncio.to_thread(shutil.rmtree, folder, True)
