"""What a tool call returns, how a bad call is refused, and how a tool is described.

Owns the shapes shared by every tool implementation in ``mcp_servers``: ``ToolResult`` (the text
and media a call produced, and whether the server flagged it as an error), ``ToolArgumentError``
(the call does not fit the tool at all), ``ToolSpec`` (one tool: name, argument model, handler,
whether it writes) and ``call_tool``, which validates arguments against a spec table and runs the
handler. It knows nothing about MCP transports: a later layer wraps ``ToolSpec`` tables as servers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

ContextT = TypeVar("ContextT")


class ToolImage(BaseModel):
    """One binary content block of a result (an image, audio clip or other media file)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    data: str
    """The bytes, base64-encoded."""
    mime_type: str
    """Their MIME type, e.g. ``image/png``."""


class ToolResult(BaseModel):
    """The outcome of one tool call as the agent would have seen it."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    text: str
    """The text content, exactly as the public server words it."""
    is_error: bool = False
    """True when the server reports the call as failed (``isError`` or an ``Error: ...`` text)."""
    images: list[ToolImage] = []
    """Binary content blocks (``read_media_file``); empty for text-only results."""
    wrote: bool | None = None
    """Whether the call changed the environment's state, when the tool can tell (a SQL call
    knows whether its transaction wrote anything); None when it cannot. Never shown to agents:
    replay uses it to tell a difference in presentation from one in the end state."""


class ToolArgumentError(ValueError):
    """The call does not fit the tool: unknown tool name, missing or ill-typed parameter.

    Such a call never reaches the tool's logic, so replay treats it as a malformed trajectory
    rather than as a tool failure. ``tool`` and ``field`` name the culprit when known.
    """

    def __init__(self, message: str, *, tool: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.tool = tool
        self.field = field


class ToolArguments(BaseModel):
    """Base of every tool's argument model: unknown keys are ignored, as the servers do."""

    model_config = ConfigDict(
        extra="ignore", use_attribute_docstrings=True, frozen=True, populate_by_name=True
    )


@dataclass(frozen=True)
class ToolSpec(Generic[ContextT]):
    """One tool: what it is called, what it takes, what it does and whether it changes state."""

    name: str
    """The tool name as the public server publishes it."""
    arguments: type[ToolArguments]
    """The pydantic model the arguments must satisfy; its JSON schema is the input schema."""
    handler: Callable[[ContextT, Any], Awaitable[ToolResult]]
    """Runs the tool on a context (a file tree, a database connection) with parsed arguments."""
    writes: bool
    """True when the tool may change the sandbox's state."""
    description: str
    """What the tool does, worded for a model choosing tools."""
    destructive: bool = False
    """True when a writing tool may overwrite or remove what was there (MCP ``destructiveHint``);
    False for tools that only add. Ignored for tools that do not write."""
    idempotent: bool = False
    """True when repeating the call with the same arguments changes nothing more (MCP
    ``idempotentHint``)."""
    title: str | None = None
    """A short human-readable name for clients that show one."""


def parse_arguments(spec: ToolSpec[Any], arguments: Mapping[str, Any]) -> ToolArguments:
    """Validate raw call arguments against a tool's model or raise ``ToolArgumentError``."""
    if not isinstance(arguments, Mapping):
        raise ToolArgumentError(
            f"{spec.name}: arguments must be an object, not {type(arguments).__name__}",
            tool=spec.name,
        )
    try:
        return spec.arguments.model_validate(dict(arguments))
    except ValidationError as error:
        problems = []
        first_field: str | None = None
        for item in error.errors():
            location = ".".join(str(part) for part in item["loc"]) or "arguments"
            first_field = first_field or location
            problems.append(f"{location}: {item['msg']}")
        raise ToolArgumentError(
            f"{spec.name}: " + "; ".join(problems), tool=spec.name, field=first_field
        ) from None


async def call_tool(
    tools: Mapping[str, ToolSpec[ContextT]],
    context: ContextT,
    name: str,
    arguments: Mapping[str, Any],
) -> ToolResult:
    """Look ``name`` up in ``tools``, validate ``arguments`` and run the tool on ``context``."""
    spec = tools.get(name)
    if spec is None:
        raise ToolArgumentError(f"unknown tool {name!r}", tool=name)
    return await spec.handler(context, parse_arguments(spec, arguments))
