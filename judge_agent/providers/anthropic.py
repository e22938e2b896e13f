"""``anthropic/<model>``: Anthropic's Messages API.

Owns the translation between the provider-neutral conversation (``judge_agent.model``) and the
Messages wire format, the call itself through the official ``anthropic`` SDK, and the
classification of the SDK's errors for ``judge_agent.retry`` (the SDK's own retries are off;
529 "overloaded" is retried like any server error). ``ANTHROPIC_BASE_URL`` (or ``base_url=``)
points the client at another endpoint.

Wire details handled here: system messages travel in the separate ``system`` field; tool calls
and results are ``tool_use`` / ``tool_result`` blocks, and consecutive messages of one role are
merged into a single message (the API wants the results of one turn's calls together, first in
one user message); images are base64 ``image`` blocks, in user messages and inside tool results.
With ``GenerateConfig.thinking_budget`` set, extended thinking is on: the thinking text comes
back as ``ChatMessageAssistant.reasoning`` and the signed blocks themselves are kept in
``provider_data`` and sent back unchanged on the next call, as the API requires.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar, cast

import anthropic
from anthropic import AsyncAnthropic
from pydantic import JsonValue, TypeAdapter, ValidationError

from judge_agent.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    Content,
    ContentText,
    GenerateConfig,
    ModelError,
    ModelOutput,
    ModelStopReason,
    ModelUsage,
    ToolCall,
    ToolInfo,
)
from judge_agent.retry import RetryDecision, call_with_retries, classify_sdk_error, shorten

DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` when the config sets none (the API requires one)."""

PLACEHOLDER_API_KEY = "not-needed"
"""Sent to a custom ``base_url`` when no key is configured."""

THINKING_KEY = "anthropic_thinking"
"""``provider_data`` key: the answer's thinking and redacted-thinking blocks, as sent back."""

_STOP_REASONS: dict[str, ModelStopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "refusal": "content_filter",
}

_ARGUMENTS = TypeAdapter(dict[str, JsonValue])


def classify_error(error: BaseException) -> RetryDecision:
    """Whether a failure of the ``anthropic`` SDK is worth another attempt."""
    return classify_sdk_error(error, anthropic)


def _blocks(content: str | Sequence[Content]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, ContentText):
            blocks.append({"type": "text", "text": part.text})
        else:
            blocks.append(
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": part.mime_type, "data": part.data},
                }
            )
    return blocks


def _assistant_blocks(message: ChatMessageAssistant) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    thinking = (message.provider_data or {}).get(THINKING_KEY)
    if isinstance(thinking, list):
        blocks.extend(dict(block) for block in thinking if isinstance(block, dict))
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    blocks.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        for call in message.tool_calls
    )
    if not blocks:
        blocks.append({"type": "text", "text": "(no answer)"})
    return blocks


def _tool_result(message: ChatMessageTool) -> dict[str, Any]:
    content = message.content
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": message.tool_call_id,
        "content": content if isinstance(content, str) else _blocks(content),
    }
    if message.is_error:
        block["is_error"] = True
    return block


def to_wire_messages(
    messages: Sequence[ChatMessage],
) -> tuple[str | None, list[dict[str, Any]]]:
    """The conversation as (``system``, Messages ``messages``).

    System messages are joined into ``system``; consecutive messages of one role become one
    message, tool results first when a user message follows them.
    """
    system: list[str] = []
    wire: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ChatMessageSystem):
            system.append(message.content)
            continue
        if isinstance(message, ChatMessageUser):
            role, blocks = "user", _blocks(message.content)
        elif isinstance(message, ChatMessageTool):
            role, blocks = "user", [_tool_result(message)]
        else:
            role, blocks = "assistant", _assistant_blocks(message)
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    for entry in wire:
        if entry["role"] == "user":
            # Tool results must open the user message that carries them.
            entry["content"].sort(key=lambda block: block["type"] != "tool_result")
    return ("\n\n".join(system) if system else None), wire


def to_wire_tools(tools: Sequence[ToolInfo]) -> list[dict[str, Any]]:
    """The tools as Messages API client tools."""
    return [
        {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
        for tool in tools
    ]


def _thinking_block(block: Any) -> dict[str, JsonValue] | None:
    if block.type == "thinking":
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if block.type == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    return None


def _usage(message: Any) -> ModelUsage:
    usage = message.usage
    if usage is None:
        return ModelUsage()
    cache_read = usage.cache_read_input_tokens or 0
    cache_write = usage.cache_creation_input_tokens or 0
    return ModelUsage(
        input_tokens=(usage.input_tokens or 0) + cache_read + cache_write,
        output_tokens=usage.output_tokens or 0,
        cache_read_tokens=cache_read,
    )


class AnthropicModel:
    """A Claude model through the Messages API.

    ``options`` are extra request fields sent with every call (e.g. ``top_k``, ``metadata``).
    """

    scripted: ClassVar[bool] = False
    """A real model: its verdicts are judge results."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        default_headers: dict[str, str] | None = None,
        **options: Any,
    ) -> None:
        self.model = model
        self.name = f"anthropic/{model}"
        base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        api_key = api_key or os.environ.get("ANTHROPIC_API_KEY") or None
        if api_key is None and not os.environ.get("ANTHROPIC_AUTH_TOKEN"):
            if base_url is None:
                # The SDK would only fail at the first request, once per judge run.
                raise ModelError(
                    f"{self.name}: no API key; set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), "
                    "or ANTHROPIC_BASE_URL for a compatible server"
                )
            api_key = PLACEHOLDER_API_KEY
        self.base_url = base_url
        self.request_options = dict(options)
        self.client = AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            default_headers=default_headers,
        )

    def _request(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolInfo], config: GenerateConfig
    ) -> dict[str, Any]:
        system, wire = to_wire_messages(messages)
        thinking = config.thinking_budget is not None
        max_tokens = config.max_tokens
        if max_tokens is None:
            max_tokens = DEFAULT_MAX_TOKENS
            if config.thinking_budget is not None and max_tokens <= config.thinking_budget:
                # The budget must stay below max_tokens; leave room for the answer itself.
                max_tokens = config.thinking_budget + DEFAULT_MAX_TOKENS
        request: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "messages": wire}
        if system is not None:
            request["system"] = system
        if tools:
            request["tools"] = to_wire_tools(tools)
            choice = config.tool_choice
            if choice == "required" and thinking:
                # Extended thinking only allows "auto" or "none".
                choice = "auto"
            request["tool_choice"] = {"type": "any" if choice == "required" else choice}
        extra: dict[str, Any] = {}
        if config.thinking_budget is not None:
            request["thinking"] = {"type": "enabled", "budget_tokens": config.thinking_budget}
        elif config.temperature is not None:
            # With thinking on, the API accepts only its default temperature. Recent SDKs no
            # longer take ``temperature`` as an argument, so it travels as an extra field.
            extra["temperature"] = config.temperature
        extra.update(self.request_options)
        if extra:
            request["extra_body"] = extra
        return request

    async def generate(
        self,
        messages: list[ChatMessage],
        tools: list[ToolInfo],
        config: GenerateConfig,
    ) -> ModelOutput:
        """One Messages API call, retried per ``config``."""
        request = self._request(messages, tools, config)
        create = cast(Any, self.client.messages.create)

        async def attempt() -> Any:
            return await create(**request, timeout=config.timeout_seconds)

        answer, retries = await call_with_retries(
            attempt, config=config, classify=classify_error, describe=f"{self.name} call"
        )
        try:
            return self._output(answer, retries)
        except Exception as error:  # a server that answers outside the wire format
            raise ModelError(
                f"{self.name}: unexpected answer: {type(error).__name__}: {shorten(str(error))}"
            ) from error

    def _output(self, answer: Any, retries: int) -> ModelOutput:
        texts: list[str] = []
        reasoning: list[str] = []
        thinking: list[JsonValue] = []
        calls: list[ToolCall] = []
        for block in answer.content or []:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                calls.append(self._tool_call(block))
            else:
                kept = _thinking_block(block)
                if kept is not None:
                    thinking.append(kept)
                    if block.type == "thinking" and block.thinking:
                        reasoning.append(block.thinking)
        return ModelOutput(
            message=ChatMessageAssistant(
                content="\n".join(texts),
                tool_calls=calls,
                reasoning="\n\n".join(reasoning) if reasoning else None,
                provider_data={THINKING_KEY: thinking} if thinking else None,
            ),
            usage=_usage(answer),
            stop_reason=_STOP_REASONS.get(str(answer.stop_reason), "unknown"),
            model=str(answer.model or self.model),
            retries=retries,
        )

    @staticmethod
    def _tool_call(block: Any) -> ToolCall:
        if not isinstance(block.input, dict):
            return ToolCall(
                id=block.id,
                name=block.name,
                parse_error=f"input is a {type(block.input).__name__}, not an object",
            )
        try:
            arguments = _ARGUMENTS.validate_python(block.input)
        except ValidationError as error:
            return ToolCall(id=block.id, name=block.name, parse_error=shorten(str(error)))
        return ToolCall(id=block.id, name=block.name, arguments=arguments)

    async def aclose(self) -> None:
        """Close the SDK client's connections."""
        await self.client.close()
