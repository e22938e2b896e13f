"""``openai/<model>``: OpenAI Chat Completions, and any server that speaks it.

Owns the translation between the provider-neutral conversation (``judge_agent.model``) and the
Chat Completions wire format, the call itself through the official ``openai`` SDK, and the
classification of the SDK's errors for ``judge_agent.retry`` (the SDK's own retries are off).

``OPENAI_BASE_URL`` (or ``base_url=``) points the client at an OpenAI-compatible server (vLLM,
Ollama, llama.cpp, OpenRouter); such servers usually need no key, so a placeholder is sent when
none is configured.

Chat Completions cannot put images in a ``tool`` message. A tool result's text goes in its
``tool`` message and its images follow in one ``user`` message placed after the run of tool
messages (so the tool messages still directly follow the assistant's calls, as the API requires);
that user message says which call each image came from.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any, ClassVar, Literal, cast

import openai
from openai import AsyncOpenAI
from pydantic import JsonValue, TypeAdapter, ValidationError

from judge_agent.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    Content,
    ContentImage,
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

PLACEHOLDER_API_KEY = "not-needed"
"""Sent to a custom ``base_url`` when no key is configured (local servers ignore it)."""

RAW_ARGUMENTS_KEY = "openai_raw_arguments"
"""``provider_data`` key: call id -> the argument text of calls whose arguments did not parse,
sent back unchanged so the model sees what it actually wrote."""

MaxTokensField = Literal["max_tokens", "max_completion_tokens"]

_STOP_REASONS: dict[str, ModelStopReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "max_tokens",
    "content_filter": "content_filter",
}

_ARGUMENTS = TypeAdapter(dict[str, JsonValue])


def classify_error(error: BaseException) -> RetryDecision:
    """Whether a failure of the ``openai`` SDK is worth another attempt."""
    return classify_sdk_error(error, openai)


def parse_arguments(raw: str) -> tuple[dict[str, JsonValue], str | None]:
    """Tool-call argument text -> (arguments, None), or ({}, why) when it is not a JSON object."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        return {}, f"arguments are not valid JSON ({error.msg} at position {error.pos})"
    if not isinstance(value, dict):
        return {}, f"arguments are a JSON {type(value).__name__}, not an object"
    try:
        return _ARGUMENTS.validate_python(value), None
    except ValidationError as error:  # pragma: no cover - json.loads only yields JSON values
        return {}, f"arguments are not JSON values: {error}"


def _data_url(image: ContentImage) -> str:
    return f"data:{image.mime_type};base64,{image.data}"


def _user_parts(content: Sequence[Content]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, ContentText):
            parts.append({"type": "text", "text": part.text})
        else:
            parts.append({"type": "image_url", "image_url": {"url": _data_url(part)}})
    return parts


def _assistant_message(message: ChatMessageAssistant) -> dict[str, Any]:
    raw_arguments: dict[str, Any] = {}
    if message.provider_data and isinstance(message.provider_data.get(RAW_ARGUMENTS_KEY), dict):
        raw_arguments = cast(dict[str, Any], message.provider_data[RAW_ARGUMENTS_KEY])
    wire: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
    if message.tool_calls:
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": raw_arguments[call.id]
                    if isinstance(raw_arguments.get(call.id), str)
                    else json.dumps(call.arguments),
                },
            }
            for call in message.tool_calls
        ]
    elif not message.content:
        wire["content"] = ""
    return wire


def _tool_message(message: ChatMessageTool) -> tuple[dict[str, Any], list[ContentImage]]:
    if isinstance(message.content, str):
        text, images = message.content, []
    else:
        text = "\n".join(part.text for part in message.content if isinstance(part, ContentText))
        images = [part for part in message.content if isinstance(part, ContentImage)]
    if images:
        count = f"{len(images)} image{'s' if len(images) > 1 else ''}"
        note = f"[{count} returned by this call follow in the next user message]"
        text = f"{text}\n{note}" if text else note
    if message.is_error:
        text = f"Error: {text}"
    return {"role": "tool", "tool_call_id": message.tool_call_id, "content": text}, images


def _images_message(images: list[tuple[ChatMessageTool, list[ContentImage]]]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for message, pictures in images:
        parts.append(
            {
                "type": "text",
                "text": f"Images returned by tool call {message.tool_call_id} ({message.name}):",
            }
        )
        parts.extend({"type": "image_url", "image_url": {"url": _data_url(p)}} for p in pictures)
    return {"role": "user", "content": parts}


def to_wire_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """The conversation as Chat Completions ``messages``."""
    wire: list[dict[str, Any]] = []
    pending_images: list[tuple[ChatMessageTool, list[ContentImage]]] = []
    for message in messages:
        if not isinstance(message, ChatMessageTool) and pending_images:
            wire.append(_images_message(pending_images))
            pending_images = []
        if isinstance(message, ChatMessageSystem):
            wire.append({"role": "system", "content": message.content})
        elif isinstance(message, ChatMessageUser):
            content = message.content
            wire.append(
                {
                    "role": "user",
                    "content": content if isinstance(content, str) else _user_parts(content),
                }
            )
        elif isinstance(message, ChatMessageAssistant):
            wire.append(_assistant_message(message))
        else:
            tool_message, images = _tool_message(message)
            wire.append(tool_message)
            if images:
                pending_images.append((message, images))
    if pending_images:
        wire.append(_images_message(pending_images))
    return wire


def to_wire_tools(tools: Sequence[ToolInfo]) -> list[dict[str, Any]]:
    """The tools as Chat Completions function tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
            },
        }
        for tool in tools
    ]


def _usage(completion: Any) -> ModelUsage:
    usage = completion.usage
    if usage is None:
        return ModelUsage()
    completion_details = usage.completion_tokens_details
    prompt_details = usage.prompt_tokens_details
    return ModelUsage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
        reasoning_tokens=(completion_details.reasoning_tokens or 0) if completion_details else 0,
        cache_read_tokens=(prompt_details.cached_tokens or 0) if prompt_details else 0,
    )


def _reasoning(message: Any) -> str | None:
    extra = message.model_extra or {}
    for key in ("reasoning_content", "reasoning"):
        value = extra.get(key)
        if isinstance(value, str) and value:
            return value
    return None


class OpenAIModel:
    """A Chat Completions model: OpenAI's, or one behind an OpenAI-compatible server.

    ``options`` are extra request fields sent with every call (e.g. ``top_p``, ``seed``, or a
    server's own settings). ``max_tokens_field`` picks the request field that carries
    ``GenerateConfig.max_tokens``: by default ``max_completion_tokens`` for OpenAI itself (its
    reasoning models accept only that) and ``max_tokens`` for other servers (all of them know it).
    """

    scripted: ClassVar[bool] = False
    """A real model: its verdicts are judge results."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens_field: MaxTokensField | None = None,
        default_headers: dict[str, str] | None = None,
        **options: Any,
    ) -> None:
        self.model = model
        self.name = f"openai/{model}"
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if api_key is None:
            if base_url is None:
                raise ModelError(
                    f"{self.name}: no API key; set OPENAI_API_KEY, or OPENAI_BASE_URL for a "
                    "local OpenAI-compatible server"
                )
            api_key = PLACEHOLDER_API_KEY
        self.base_url = base_url
        self.max_tokens_field: MaxTokensField = max_tokens_field or (
            "max_tokens" if base_url else "max_completion_tokens"
        )
        self.request_options = dict(options)
        self.client = AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            default_headers=default_headers,
        )

    def _request(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolInfo], config: GenerateConfig
    ) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": to_wire_messages(messages)}
        if tools:
            request["tools"] = to_wire_tools(tools)
            request["tool_choice"] = config.tool_choice
        if config.max_tokens is not None:
            request[self.max_tokens_field] = config.max_tokens
        if config.temperature is not None:
            request["temperature"] = config.temperature
        if config.reasoning_effort is not None:
            request["reasoning_effort"] = config.reasoning_effort
        if self.request_options:
            request["extra_body"] = dict(self.request_options)
        return request

    async def generate(
        self,
        messages: list[ChatMessage],
        tools: list[ToolInfo],
        config: GenerateConfig,
    ) -> ModelOutput:
        """One Chat Completions call, retried per ``config``."""
        request = self._request(messages, tools, config)
        create = cast(Any, self.client.chat.completions.create)

        async def attempt() -> Any:
            return await create(**request, timeout=config.timeout_seconds)

        completion, retries = await call_with_retries(
            attempt, config=config, classify=classify_error, describe=f"{self.name} call"
        )
        try:
            return self._output(completion, retries)
        except ModelError:
            raise
        except Exception as error:  # a server that answers outside the wire format
            raise ModelError(
                f"{self.name}: unexpected answer: {type(error).__name__}: {shorten(str(error))}"
            ) from error

    def _output(self, completion: Any, retries: int) -> ModelOutput:
        if not completion.choices:
            # Some compatible servers report a failure as a 200 answer with an ``error`` field.
            problem = (completion.model_extra or {}).get("error")
            detail = f": {shorten(json.dumps(problem, default=str))}" if problem else ""
            raise ModelError(f"{self.name}: the answer has no choices{detail}")
        choice = completion.choices[0]
        message = choice.message
        calls: list[ToolCall] = []
        raw_arguments: dict[str, JsonValue] = {}
        for index, call in enumerate(message.tool_calls or []):
            call_id = call.id or f"call_{index}"
            function = getattr(call, "function", None)
            if function is None:
                calls.append(
                    ToolCall(
                        id=call_id,
                        name=str(getattr(getattr(call, "custom", None), "name", "")),
                        parse_error=f"unsupported tool call type {call.type!r}",
                    )
                )
                continue
            raw = function.arguments if isinstance(function.arguments, str) else ""
            arguments, error = parse_arguments(raw)
            if error is not None:
                raw_arguments[call_id] = raw
            calls.append(
                ToolCall(id=call_id, name=function.name, arguments=arguments, parse_error=error)
            )
        content = message.content or ""
        if not content and message.refusal:
            content = message.refusal
        return ModelOutput(
            message=ChatMessageAssistant(
                content=content,
                tool_calls=calls,
                reasoning=_reasoning(message),
                provider_data={RAW_ARGUMENTS_KEY: raw_arguments} if raw_arguments else None,
            ),
            usage=_usage(completion),
            stop_reason=_STOP_REASONS.get(str(choice.finish_reason), "unknown"),
            model=completion.model or self.model,
            retries=retries,
        )

    async def aclose(self) -> None:
        """Close the SDK client's connections."""
        await self.client.close()
