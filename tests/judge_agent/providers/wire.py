"""A scripted HTTP server on loopback for the provider tests.

It speaks just enough HTTP/1.1 (keep-alive, ``Content-Length`` or chunked request bodies) for the
real ``openai`` and ``anthropic`` SDK clients to talk to it. Each path has a queue of scripted
replies, consumed one per request: a JSON answer with any status and headers, an answer delayed
longer than the client's timeout, or a dropped connection. Every request is recorded (headers and
decoded JSON body) so tests can check what the providers actually sent. A request with no reply
left gets a 400, which the providers do not retry, so a missing script fails loudly.

Helpers build answers in each API's wire format: ``openai_completion`` / ``openai_error`` and
``anthropic_message`` / ``anthropic_error``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
    529: "Overloaded",
}


@dataclass
class Reply:
    """One scripted answer."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (longer than the client's timeout: a hang)."""
    drop: bool = False
    """Close the connection without answering."""


@dataclass
class Received:
    """One request the server got."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class WireServer:
    """The loopback server; ``script`` its replies, read ``requests`` afterwards."""

    def __init__(self) -> None:
        self.replies: dict[str, list[Reply]] = defaultdict(list)
        self.requests: list[Received] = []
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._handlers: set[asyncio.Task[None]] = set()
        self._closing = asyncio.Event()
        self.port = 0

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def script(self, path: str, *replies: Reply) -> None:
        """Queue ``replies`` for requests to ``path``."""
        self.replies[path].extend(replies)

    def bodies(self, path: str) -> list[Any]:
        """The JSON bodies of the requests to ``path``, in order."""
        return [request.body for request in self.requests if request.path == path]

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Stop listening, cut open connections and wait for their handlers to end."""
        self._closing.set()
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        if self._handlers:
            await asyncio.wait(list(self._handlers), timeout=5)
        if self._server is not None:
            await self._server.wait_closed()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self._writers.add(writer)
        try:
            while not self._closing.is_set() and await self._one_request(reader, writer):
                pass
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self._handlers.discard(task)
            self._writers.discard(writer)
            writer.transport.abort()

    async def _one_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        raw = await self._read_body(reader, headers)
        path = target.split("?", 1)[0]
        body = json.loads(raw) if raw else None
        self.requests.append(Received(method, path, headers, body))
        queue = self.replies[path]
        reply = queue.pop(0) if queue else _unscripted(path)
        if reply.delay:
            # A hang: wait out the delay, or until the server stops.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), reply.delay)
        if reply.drop or self._closing.is_set():
            return False
        payload = json.dumps(reply.body).encode()
        response_headers = {
            "content-type": "application/json",
            "content-length": str(len(payload)),
            "connection": "keep-alive",
            **reply.headers,
        }
        status_line = f"HTTP/1.1 {reply.status} {REASONS.get(reply.status, 'Status')}\r\n"
        head_out = status_line + "".join(f"{k}: {v}\r\n" for k, v in response_headers.items())
        writer.write(head_out.encode("latin-1") + b"\r\n" + payload)
        await writer.drain()
        return True

    @staticmethod
    async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
        if headers.get("transfer-encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
                if size == 0:
                    await reader.readuntil(b"\r\n")
                    return b"".join(chunks)
                chunks.append(await reader.readexactly(size))
                await reader.readexactly(2)
        length = int(headers.get("content-length", "0"))
        return await reader.readexactly(length) if length else b""


def _unscripted(path: str) -> Reply:
    message = f"wire server: no reply scripted for {path}"
    return Reply(
        status=400,
        body={"error": {"message": message, "type": "invalid_request_error"}},
    )


def openai_completion(
    content: str | None = "",
    *,
    tool_calls: list[tuple[str, str, str]] | None = None,
    finish_reason: str = "stop",
    model: str = "gpt-test",
    usage: dict[str, Any] | None = None,
    extra_message: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A Chat Completions answer; ``tool_calls`` are (id, name, argument text)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
            for call_id, name, args in tool_calls
        ]
    message.update(extra_message or {})
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
        ],
        "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def openai_error(message: str, kind: str = "server_error") -> dict[str, Any]:
    """A Chat Completions error body."""
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def anthropic_message(
    *blocks: dict[str, Any],
    stop_reason: str = "end_turn",
    model: str = "claude-test",
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A Messages API answer made of content ``blocks``."""
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": list(blocks),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 10, "output_tokens": 5},
    }


def anthropic_error(message: str, kind: str = "api_error") -> dict[str, Any]:
    """A Messages API error body."""
    return {"type": "error", "error": {"type": kind, "message": message}}
