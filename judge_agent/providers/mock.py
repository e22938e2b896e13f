"""``mock/<name>``: a scripted model for tests and documentation examples. Never a judge.

It answers from a script: a list of replies consumed in order, or a function of the
conversation. Its output is whatever the script says, so nothing it produces may be reported as a
judge result: the class declares itself ``scripted``, and the runtime records its verdicts as
scripted (``judge_agent.providers.registry.is_scripted``).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import itertools
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import JsonValue

from judge_agent.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentText,
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


def _scripted_verdict(verdict: str) -> str:
    """The verdict in the runtime's format, repeated in the forms the judge methods read (a
    ``<success>`` tag; ``State N:`` marks for up to eight essential states), so a scripted run
    exercises every method's parser."""
    word = "yes" if verdict == "PASS" else "no"
    states = "\n".join(f"State {number}: {word}" for number in range(1, 9))
    return (
        f"Scripted answer, not a judgement.\nRESULT: {verdict}\nCONFIDENCE: Low\n"
        f"<success>{word}</success>\n{states}"
    )


def _always(verdict: str) -> Responder:
    def respond(
        messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> Reply:
        return _scripted_verdict(verdict)

    return respond


def _opening_text(messages: list[ChatMessage]) -> str:
    """The system prompt and the first user message: what differs between trajectories and
    between judge modes, and not between runs."""
    parts: list[str] = []
    for message in messages:
        if isinstance(message, ChatMessageSystem):
            parts.append(message.content)
        elif isinstance(message, ChatMessageUser):
            if isinstance(message.content, str):
                parts.append(message.content)
            else:
                parts.extend(p.text for p in message.content if isinstance(p, ContentText))
            break
    return "\n".join(parts)


def _coin(messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig) -> Reply:
    """Looks at step 1 through ``VIEW_TRAJECTORY_STEP`` when it has that tool and has not yet,
    then answers PASS or FAIL from a hash of the system prompt and the first user message, so a
    trajectory gets the same answer in every run and whatever the order of runs."""
    looked = any(isinstance(message, ChatMessageTool) for message in messages)
    if not looked and any(tool.name == "VIEW_TRAJECTORY_STEP" for tool in tools):
        return reply("Scripted: looking at step 1.", tool_call("VIEW_TRAJECTORY_STEP", step=1))
    digest = hashlib.sha256(_opening_text(messages).encode()).digest()
    verdict = "PASS" if digest[0] % 2 == 0 else "FAIL"
    return _scripted_verdict(verdict)


BUILT_IN_SCRIPTS: dict[str, Responder] = {
    "pass": _always("PASS"),
    "fail": _always("FAIL"),
    "coin": _coin,
}
"""Scripts reachable from the command line, each a dry run of the pipeline whose verdicts are
recorded as scripted: ``mock/pass`` and ``mock/fail`` answer the same verdict to everything;
``mock/coin`` makes one tool call when it can and answers a verdict fixed by the prompt's hash.
A built-in script named with ``@SECONDSs`` (``mock/pass@0.5s``) waits that long before each
answer, like a slow model (for trying progress displays and interruptions)."""

_SLOW_SCRIPT = re.compile(r"^(?P<script>[a-z]+)@(?P<delay>\d+(?:\.\d+)?)s$")


class ScriptedModel:
    """A model that answers from a script (``replies`` in order, or ``respond``; with neither,
    the built-in script named by ``model``, if there is one)."""

    scripted: ClassVar[bool] = True
    """Its answers come from a script: its verdicts are dry runs, never judge results."""

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
            slow = _SLOW_SCRIPT.match(model)
            if slow is not None and slow["script"] in BUILT_IN_SCRIPTS:
                model, delay_seconds = slow["script"], float(slow["delay"])
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
