"""The conversation a judge has with a model, and the interface every model provider implements.

Owns the provider-neutral shapes: messages (system, user, assistant, tool) whose content may mix
text and images, tool calls, the tools offered (``ToolInfo``), generation settings
(``GenerateConfig``), what one model call returns (``ModelOutput`` with ``ModelUsage``), the
``ModelAPI`` protocol and the errors a provider raises.

Providers live in ``judge_agent.providers``: ``openai``, ``anthropic`` and ``mock`` (a scripted
stand-in for tests, never a judge); ``judge_agent.providers.registry`` finds them by name
(``get_model``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, JsonValue, NonNegativeInt


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class ContentText(_Record):
    """A block of text."""

    type: Literal["text"] = "text"
    text: str
    """The text."""


class ContentImage(_Record):
    """An image (a screenshot) sent to the model."""

    type: Literal["image"] = "image"
    data: str
    """The image bytes, base64-encoded."""
    mime_type: str
    """``image/png``, ``image/jpeg``, ..."""


Content = Annotated[ContentText | ContentImage, Field(discriminator="type")]


class ToolCall(_Record):
    """A tool call the model asked for."""

    id: str
    """The provider's id for the call; tool results refer to it."""
    name: str
    """The tool's name."""
    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    """Parsed arguments (empty when they could not be parsed)."""
    parse_error: str | None = None
    """Why the arguments could not be parsed as a JSON object, if they could not."""


class ChatMessageSystem(_Record):
    """Instructions for the whole conversation."""

    role: Literal["system"] = "system"
    content: str
    """The system prompt."""


class ChatMessageUser(_Record):
    """What the judge's harness says to the model."""

    role: Literal["user"] = "user"
    content: str | list[Content]
    """Text, or text and images."""


class ChatMessageAssistant(_Record):
    """What the model answered."""

    role: Literal["assistant"] = "assistant"
    content: str = ""
    """The visible text of the answer ("" when it only called tools)."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    """The tool calls it asked for, in order."""
    reasoning: str | None = None
    """Reasoning or thinking text the provider returned separately, if any."""
    provider_data: dict[str, JsonValue] | None = None
    """Provider-specific parts that must be sent back verbatim on the next call (e.g.
    Anthropic's signed thinking blocks); opaque to everything but that provider."""


class ChatMessageTool(_Record):
    """The result of one tool call, sent back to the model."""

    role: Literal["tool"] = "tool"
    tool_call_id: str
    """The id of the call this answers."""
    name: str
    """The tool's name."""
    content: str | list[Content]
    """Text, or text and images."""
    is_error: bool = False
    """True when the tool failed (the text says why)."""


ChatMessage = Annotated[
    ChatMessageSystem | ChatMessageUser | ChatMessageAssistant | ChatMessageTool,
    Field(discriminator="role"),
]


class ToolInfo(_Record):
    """A tool offered to the model."""

    name: str
    """Its name as the model must call it."""
    description: str
    """What it does, for the model."""
    input_schema: dict[str, Any]
    """JSON schema of its arguments (an object schema)."""


class GenerateConfig(_Record):
    """Settings of one model call; providers ignore what their API does not support."""

    max_tokens: int | None = None
    """Upper bound on the answer's tokens (providers that need one default to 4,096)."""
    temperature: float | None = None
    """Sampling temperature; None leaves the provider's default."""
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    """OpenAI reasoning models: how hard to think."""
    thinking_budget: int | None = None
    """Anthropic extended thinking: token budget (None: thinking off)."""
    timeout_seconds: float = 120.0
    """Per-attempt timeout of one model call."""
    max_retries: int = 5
    """Retries after a retryable failure (rate limit, server error, timeout, dropped
    connection), with exponential backoff and jitter."""
    retry_base_seconds: float = 1.0
    """First backoff delay; doubles at each retry (with full jitter), capped at 60 s."""
    tool_choice: Literal["auto", "none", "required"] = "auto"
    """Whether the model may, must not, or must call a tool (when tools are offered)."""


class ModelUsage(_Record):
    """Tokens one call (or a sum of calls) used."""

    input_tokens: NonNegativeInt = 0
    """Prompt tokens (cached ones included)."""
    output_tokens: NonNegativeInt = 0
    """Completion tokens (reasoning included)."""
    reasoning_tokens: NonNegativeInt = 0
    """Of the output tokens, those spent on reasoning, when the provider says."""
    cache_read_tokens: NonNegativeInt = 0
    """Of the input tokens, those read from the provider's prompt cache, when it says."""

    def __add__(self, other: ModelUsage) -> ModelUsage:
        return ModelUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
        )


ModelStopReason = Literal["stop", "tool_calls", "max_tokens", "content_filter", "unknown"]
"""Why the model's answer ended: it finished, it called tools, or it hit a cap or a filter."""


class ModelOutput(_Record):
    """What one model call returned."""

    message: ChatMessageAssistant
    """The answer."""
    usage: ModelUsage = Field(default_factory=ModelUsage)
    """Tokens the call used."""
    stop_reason: ModelStopReason = "unknown"
    """Why generation stopped."""
    model: str
    """The model that answered, as the provider reports it."""
    retries: NonNegativeInt = 0
    """Failed attempts before this answer."""
    cached: bool = False
    """True when the answer came from the response cache rather than from the model."""


ModelFailureKind = Literal[
    "connection", "authentication", "rate-limit", "timeout", "server", "request", "answer", "other"
]
"""What kind of failure a model call met, whatever the provider: the endpoint could not be
reached (refused, unresolvable host, dropped connection), the credentials were refused (HTTP
401/403), a rate limit (429), a timeout, a server error (5xx), a request the server rejected
(another 4xx), an answer outside the expected format, or anything else."""

STOPPING_FAILURES: frozenset[ModelFailureKind] = frozenset({"connection", "authentication"})
"""Failures that say the model cannot be used at all (not that one call went wrong): a grid
stops after a few in a row (``bench.grid_runner``) rather than recording every run INVALID."""


def failure_kind_of_status(status: int) -> ModelFailureKind:
    """The kind of failure an HTTP error status means."""
    if status in (401, 403):
        return "authentication"
    if status == 429:
        return "rate-limit"
    if status == 408:
        return "timeout"
    return "server" if status >= 500 else "request"


class ModelError(Exception):
    """A model call failed for good (after its retries, or at once for a non-retryable error).

    ``retryable`` says whether the last failure was of a kind that is retried; ``status`` is the
    HTTP status when there was one; ``kind`` what kind of failure it was (provider-neutral).
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        kind: ModelFailureKind = "other",
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.kind: ModelFailureKind = kind


@runtime_checkable
class ModelAPI(Protocol):
    """A model the judge can call."""

    name: str
    """``provider/model``."""

    async def generate(
        self,
        messages: list[ChatMessage],
        tools: list[ToolInfo],
        config: GenerateConfig,
    ) -> ModelOutput:
        """One model call. Raises ``ModelError`` when it fails for good."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
