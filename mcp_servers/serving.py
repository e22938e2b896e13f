"""Publishing a table of tools as an MCP server, on the official SDK's low-level ``Server``.

Owns the translation between this package's tool shapes and the protocol: a ``ToolSpec`` becomes
an MCP ``Tool`` (name, description, the argument model's JSON schema, annotations), a
``ToolResult`` becomes a ``CallToolResult`` (text block, image/audio blocks, ``isError``), and a
call that does not fit its tool comes back as an error result naming the field, as MCP asks of
input validation failures. Also owns the two ways a server runs: over the process's stdin and
stdout (``serve_stdio``), or in-process, by handing the returned ``Server`` to ``mcp.Client``.

Each server is bound to one context (a file tree, a database endpoint, a trajectory) for its
whole life. The servers themselves live beside this module (``filesystem``, ``sql``,
``trajectory``); nothing here knows what a tool does.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Mapping
from contextvars import ContextVar
from typing import Any, Generic, TypeVar

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from mcp_servers.results import ToolArgumentError, ToolResult, ToolSpec, call_tool

ContextT = TypeVar("ContextT")

logger = logging.getLogger(__name__)

_REQUEST: ContextVar[Any] = ContextVar("mcp_request", default=None)

SERVER_VERSION = "0.1.0"
"""The version every server of this package reports in its ``serverInfo``."""


def _schema(spec: ToolSpec[Any]) -> dict[str, Any]:
    """The argument model's JSON schema under its public parameter names (aliases)."""
    schema = spec.arguments.model_json_schema(by_alias=True)
    schema.pop("title", None)
    schema.pop("description", None)
    schema.setdefault("properties", {})
    schema["type"] = "object"
    return schema


def current_request() -> Any:
    """The SDK's context of the ``tools/call`` being answered (its ``session`` can ask the
    client something back, such as sampling a message); None outside a call."""
    return _REQUEST.get()


def tool_definition(spec: ToolSpec[Any]) -> types.Tool:
    """The MCP ``Tool`` a client sees for ``spec``, annotations included."""
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=_schema(spec),
        annotations=types.ToolAnnotations(
            title=spec.title,
            read_only_hint=not spec.writes,
            destructive_hint=spec.destructive if spec.writes else False,
            idempotent_hint=spec.idempotent or not spec.writes,
            # A sandbox is a closed world: no tool reaches the network or anything outside it.
            open_world_hint=False,
        ),
    )


def _media_block(data: str, mime_type: str) -> types.ContentBlock:
    if mime_type.startswith("audio/"):
        return types.AudioContent(type="audio", data=data, mime_type=mime_type)
    # Any other binary (documents, unknown types) goes out as an image-like block, as the
    # reference filesystem server does for read_media_file.
    return types.ImageContent(type="image", data=data, mime_type=mime_type)


def call_result(result: ToolResult) -> types.CallToolResult:
    """The protocol form of a tool's result: its text (when any), then its media blocks."""
    content: list[types.ContentBlock] = []
    if result.text or not result.images:
        content.append(types.TextContent(type="text", text=result.text))
    content.extend(_media_block(image.data, image.mime_type) for image in result.images)
    return types.CallToolResult(content=content, is_error=result.is_error)


def error_result(message: str) -> types.CallToolResult:
    """A call that failed before or outside the tool's own logic, as an MCP error result."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


class ToolServer(Generic[ContextT]):
    """A set of tools bound to one context, answering ``tools/list`` and ``tools/call``."""

    def __init__(
        self,
        name: str,
        tools: Mapping[str, ToolSpec[ContextT]],
        context: ContextT,
        *,
        instructions: str | None = None,
        samples: bool = False,
    ) -> None:
        self.name = name
        self.tools = dict(tools)
        self.context = context
        self.instructions = instructions
        self.samples = samples
        """Whether its tools may ask the client's model to write text (MCP sampling), so a client
        should answer sampling requests."""
        self._definitions = [tool_definition(spec) for spec in self.tools.values()]

    async def call(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        """Run one call and word every failure as an error result (the server never crashes)."""
        return await self.answer(name, call_tool(self.tools, self.context, name, arguments or {}))

    async def answer(self, name: str, work: Awaitable[ToolResult]) -> types.CallToolResult:
        """The result of ``work`` (the call of tool ``name``), every failure worded as an error
        result: bad arguments, an unknown tool, or a bug or infrastructure failure (logged)."""
        try:
            result = await work
        except ToolArgumentError as error:
            if error.tool is not None and error.tool not in self.tools:
                known = ", ".join(sorted(self.tools))
                return error_result(f"Error: unknown tool {name!r}; this server has: {known}")
            return error_result(f"Error: invalid arguments for {error}")
        except Exception as error:  # a bug or an infrastructure failure: report, keep serving
            logger.exception("tool %s failed", name)
            return error_result(
                f"Error: {name} failed unexpectedly: {type(error).__name__}: {error}"
            )
        return call_result(result)

    def server(self) -> Server[Any]:
        """A fresh SDK server over these tools (one per connection)."""

        async def list_tools(
            ctx: Any, params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            return types.ListToolsResult(tools=self._definitions)

        async def call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            token = _REQUEST.set(ctx)
            try:
                return await self.call(params.name, params.arguments)
            finally:
                _REQUEST.reset(token)

        return Server(
            self.name,
            version=SERVER_VERSION,
            instructions=self.instructions,
            on_list_tools=list_tools,
            on_call_tool=call,
        )


def with_tools_of(server: ToolServer[ContextT], other: ToolServer[Any]) -> ToolServer[ContextT]:
    """``server`` with ``other``'s tools added (each still runs on ``other``'s context), for one
    stdio server that offers an environment's tools and the trajectory's record together. A tool
    name both have is a ``ValueError``."""
    tools = dict(server.tools)
    for name, spec in other.tools.items():
        if name in tools:
            raise ValueError(f"both servers have a tool named {name!r}")

        async def on_other(_: ContextT, arguments: Any, spec: ToolSpec[Any] = spec) -> ToolResult:
            return await spec.handler(other.context, arguments)

        tools[name] = ToolSpec(
            name=spec.name,
            arguments=spec.arguments,
            handler=on_other,
            writes=spec.writes,
            description=spec.description,
            destructive=spec.destructive,
            idempotent=spec.idempotent,
            title=spec.title,
        )
    instructions = "\n\n".join(text for text in (server.instructions, other.instructions) if text)
    return ToolServer(
        server.name, tools, server.context, instructions=instructions, samples=server.samples
    )


async def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over this process's stdin and stdout until the client hangs up."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
