"""The judge's tools: MCP client sessions, seen by the model as one flat list of tools.

Owns connecting to the judge's MCP servers (in-process ``ToolServer`` objects, or any server the
SDK's ``Client`` accepts, e.g. a stdio command), listing their tools as ``ToolInfo``, routing a
call to the server that has the tool, and turning the ``CallToolResult`` into what the model
reads: text (capped, with a notice) and images. A failure of any kind comes back as an error
result, so the judge loop can always hand the model an answer.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

from mcp import Client, types

from judge_agent.model import Content, ContentImage, ContentText, ToolInfo
from judge_agent.sampling import ModelSampler
from mcp_servers.serving import ToolServer

TOOL_OUTPUT_LIMIT = 20_000
"""Characters of a tool's text the model sees; longer text is cut, keeping head and tail."""

TOOL_CALL_TIMEOUT = 120.0
"""Seconds a tool call may take before the judge is told it timed out."""


def cap_text(text: str, limit: int = TOOL_OUTPUT_LIMIT) -> str:
    """``text`` cut to about ``limit`` characters (two thirds head, one third tail), with a
    notice saying how much was left out."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    omitted = len(text) - head - tail
    return (
        f"{text[:head]}\n[... {omitted:,} of {len(text):,} characters omitted from this tool "
        f"output ...]\n{text[-tail:]}"
    )


@dataclass
class ToolOutcome:
    """One executed tool call as the model will read it."""

    content: list[Content]
    is_error: bool
    seconds: float
    text: str = ""
    """The (capped) text alone, for logs."""


@dataclass
class Toolbox:
    """Open MCP sessions and the tools they offer."""

    tools: list[ToolInfo] = field(default_factory=list)
    _route: dict[str, Client] = field(default_factory=dict)
    _stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    output_limit: int = TOOL_OUTPUT_LIMIT
    call_timeout: float = TOOL_CALL_TIMEOUT
    sampler: ModelSampler | None = None
    """Answers servers' sampling requests with the judge's model; the sessions then speak the
    handshake-era protocol, the one with server-to-client requests (None: servers cannot
    sample)."""

    @classmethod
    async def open(cls, servers: list[ToolServer[Any] | Any], **options: Any) -> Toolbox:
        """Connect to every server (a ``ToolServer`` runs in-process) and list their tools."""
        box = cls(**options)
        try:
            for server in servers:
                target = server.server() if isinstance(server, ToolServer) else server
                # Server-to-client requests (sampling) exist only in the handshake-era protocol.
                mode = "legacy" if box.sampler is not None else "auto"
                client = await box._stack.enter_async_context(
                    Client(target, sampling_callback=box.sampler, mode=mode)
                )
                for tool in (await client.list_tools()).tools:
                    if tool.name in box._route:
                        raise ValueError(f"two judge tools are named {tool.name!r}")
                    box._route[tool.name] = client
                    box.tools.append(
                        ToolInfo(
                            name=tool.name,
                            description=tool.description or "",
                            input_schema=dict(tool.input_schema),
                        )
                    )
        except BaseException:
            await box.aclose()
            raise
        return box

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Run one tool call; every failure becomes an error outcome the model can read."""
        started = time.perf_counter()
        client = self._route.get(name)
        if client is None:
            known = ", ".join(tool.name for tool in self.tools) or "none"
            return self._error(f"Error: there is no tool {name!r}; available: {known}", started)
        try:
            async with asyncio.timeout(self.call_timeout):
                result = await client.call_tool(name, arguments)
        except TimeoutError:
            return self._error(
                f"Error: {name} did not answer within {self.call_timeout:g} s", started
            )
        except Exception as error:  # a broken session must not end the judge run
            return self._error(f"Error: {name} failed: {type(error).__name__}: {error}", started)
        return self._outcome(result, started)

    def _error(self, message: str, started: float) -> ToolOutcome:
        return ToolOutcome(
            [ContentText(text=message)], True, time.perf_counter() - started, message
        )

    def _outcome(self, result: types.CallToolResult, started: float) -> ToolOutcome:
        texts: list[str] = []
        images: list[Content] = []
        for block in result.content:
            if isinstance(block, types.TextContent):
                texts.append(block.text)
            elif isinstance(block, types.ImageContent):
                images.append(ContentImage(data=block.data, mime_type=block.mime_type))
            elif isinstance(block, types.AudioContent):
                texts.append(f"[audio {block.mime_type}, not shown]")
            else:
                texts.append(f"[{block.type} content, not shown]")
        text = cap_text("\n".join(texts), self.output_limit)
        content: list[Content] = [ContentText(text=text), *images]
        return ToolOutcome(content, bool(result.is_error), time.perf_counter() - started, text)

    async def aclose(self) -> None:
        """Close every session."""
        await self._stack.aclose()
