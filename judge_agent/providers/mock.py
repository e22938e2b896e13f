"""``mock/<name>``: a scripted model for tests and documentation examples. Never a judge.

It answers from a script: a list of replies consumed in order, or a function of the
conversation. Its output is whatever the script says, so nothing it produces may be reported as a
judge result; the runtime marks verdicts of ``mock/`` models as scripted.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import JsonValue

from judge_agent.model import (
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelError,
    ModelOutput,
    ModelUsage,
    ToolCall,
    ToolInfo,
)

Reply = ModelOutput | ChatMessageAssistant | str | BaseException
"""One scripted answer: a full output, an assistant message, plain text, or an error to raise."""

Responder = Callable[[list[ChatMessage], list[ToolInfo], GenerateConfig], Reply | Awaitable[Reply]]
"""A function of the conversation that returns the next answer."""

_call_ids = itertools.count(1)


def tool_call(name: str, /, **arguments: JsonValue) -> ToolCall:
    """A tool call for a script, with a fresh id."""
    return ToolCall(id=f"call_{next(_call_ids)}", name=name, arguments=dict(arguments))


def reply(text: str = "", *calls: ToolCall) -> ChatMessageAssistant:
    """An assistant message for a script: text and tool calls."""
    return ChatMessageAssistant(content=text, tool_calls=list(calls))


@dataclass
class RecordedCall:
    """One call the scripted model received (for tests to inspect)."""

    messages: list[ChatMessage]
    tools: list[ToolInfo]
    config: GenerateConfig


def _always(verdict: str) -> Responder:
    def respond(
        messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> Reply:
        return f"Scripted answer, not a judgement.\nRESULT: {verdict}\nCONFIDENCE: Low"

    return respond


BUILT_IN_SCRIPTS = {"pass": _always("PASS"), "fail": _always("FAIL")}
"""Scripts reachable from the command line (``--model mock/pass``): a dry run of the pipeline
that answers the same verdict to everything. Their verdicts are recorded as scripted."""


class ScriptedModel:
    """A model that answers from a script (``replies`` in order, or ``respond``; with neither,
    the built-in script named by ``model``, if there is one)."""

    def __init__(
        self,
        model: str = "scripted",
        *,
        replies: Sequence[Reply] | None = None,
        respond: Responder | None = None,
        delay_seconds: float = 0.0,
        usage: ModelUsage | None = None,
        **_: Any,
    ) -> None:
        self.name = f"mock/{model}"
        self._replies = list(replies or [])
        self._respond = respond
        if respond is None and replies is None:
            self._respond = BUILT_IN_SCRIPTS.get(model)
        self.delay_seconds = delay_seconds
        self.usage = usage or ModelUsage(input_tokens=100, output_tokens=20)
        self.calls: list[RecordedCall] = []

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        self.calls.append(RecordedCall(list(messages), list(tools), config))
        if self.delay_seconds:
            await asyncio.sleep(self.delay_seconds)
        if self._respond is not None:
            answer = self._respond(messages, tools, config)
            if inspect.isawaitable(answer):
                answer = await answer
        elif self._replies:
            answer = self._replies.pop(0)
        else:
            raise ModelError(
                f"{self.name}: the script has no reply left for call {len(self.calls)}"
            )
        return self._output(answer)

    def _output(self, answer: Reply) -> ModelOutput:
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, ModelOutput):
            return answer
        message = answer if isinstance(answer, ChatMessageAssistant) else reply(answer)
        return ModelOutput(
            message=message,
            usage=self.usage,
            stop_reason="tool_calls" if message.tool_calls else "stop",
            model=self.name,
        )

    async def aclose(self) -> None:
        return None
