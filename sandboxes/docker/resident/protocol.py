"""The resident helper's wire format: framed messages over a stream socket.

A message is a header and a payload. The header is one frame (a 4-byte big-endian length, then
that many bytes of UTF-8 JSON holding an object); the payload is a run of frames of raw bytes
closed by an empty frame, so either end can stream an archive whose size it does not know in
advance. A request's header holds ``op`` and ``args``; an answer's holds ``result``, or ``error``
(an errno name or one of the helper's own codes) with ``detail``.
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Iterable, Iterator
from typing import IO, Any

_LENGTH = struct.Struct(">I")

CHUNK_BYTES = 1 << 20
"""The largest payload frame either end writes."""

MAX_HEADER_BYTES = 64 << 20
"""A longer header is a broken stream, not a message (a walk of a huge tree stays below)."""


class ProtocolError(ConnectionError):
    """The stream broke off mid-message or does not hold messages."""


def _exactly(source: IO[bytes], count: int) -> bytes:
    data = source.read(count)
    if data is None or len(data) != count:
        raise ProtocolError("the connection closed in the middle of a message")
    return data


def write_message(
    target: IO[bytes], header: dict[str, Any], payload: bytes | Iterable[bytes] = b""
) -> None:
    """Write one message (``payload``: bytes, or an iterable of byte chunks) and flush."""
    write_header(target, header)
    for chunk in (payload,) if isinstance(payload, bytes | bytearray) else payload:
        view = memoryview(chunk)
        for start in range(0, len(view), CHUNK_BYTES):
            part = view[start : start + CHUNK_BYTES]
            target.write(_LENGTH.pack(len(part)))
            target.write(part)
    target.write(_LENGTH.pack(0))
    target.flush()


def write_header(target: IO[bytes], header: dict[str, Any]) -> None:
    """Write a message's header only; its payload follows (``PayloadWriter``)."""
    encoded = json.dumps(header).encode()
    target.write(_LENGTH.pack(len(encoded)))
    target.write(encoded)


def read_header(source: IO[bytes]) -> dict[str, Any] | None:
    """The next message's header; None when the stream ends cleanly before one."""
    first = source.read(_LENGTH.size)
    if not first:
        return None
    if len(first) != _LENGTH.size:
        raise ProtocolError("the connection closed in the middle of a message")
    (length,) = _LENGTH.unpack(first)
    if length > MAX_HEADER_BYTES:
        raise ProtocolError(f"a message header of {length} bytes")
    header = json.loads(_exactly(source, length))
    if not isinstance(header, dict):
        raise ProtocolError("a message header that is not an object")
    return header


def payload_chunks(source: IO[bytes]) -> Iterator[bytes]:
    """The chunks of the payload that follows a header, up to its closing empty frame."""
    while True:
        (length,) = _LENGTH.unpack(_exactly(source, _LENGTH.size))
        if length == 0:
            return
        yield _exactly(source, length)


def read_payload(source: IO[bytes]) -> bytes:
    """The whole payload that follows a header."""
    return b"".join(payload_chunks(source))


class PayloadReader(io.RawIOBase):
    """A payload as a readable file (for ``tarfile``); ``drain`` skips what was not read."""

    def __init__(self, source: IO[bytes]) -> None:
        self._chunks = payload_chunks(source)
        self._chunk = memoryview(b"")
        self._offset = 0  # into the current chunk: slicing off what was read would copy the rest
        self._ended = False

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        while self._offset >= len(self._chunk) and not self._ended:
            try:
                self._chunk, self._offset = memoryview(next(self._chunks)), 0
            except StopIteration:
                self._ended = True
        view = memoryview(target).cast("B")
        count = min(len(view), len(self._chunk) - self._offset)
        view[:count] = self._chunk[self._offset : self._offset + count]
        self._offset += count
        return count

    def drain(self) -> None:
        """Read the rest of the payload, so the stream stands at the next message."""
        for _ in self._chunks:
            pass
        self._ended = True
        self._chunk, self._offset = memoryview(b""), 0


class PayloadWriter(io.RawIOBase):
    """A writable file that sends what is written as payload frames (``finish`` closes it)."""

    def __init__(self, target: IO[bytes]) -> None:
        self._target = target

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        view = memoryview(data)
        for start in range(0, len(view), CHUNK_BYTES):
            part = view[start : start + CHUNK_BYTES]
            self._target.write(_LENGTH.pack(len(part)))
            self._target.write(part)
        return len(view)

    def finish(self) -> None:
        """Write the closing empty frame and flush."""
        self._target.write(_LENGTH.pack(0))
        self._target.flush()
