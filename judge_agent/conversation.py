"""How a judge run talks to its model: the run's state, its limits, and the built-in conversations.

Owns ``JudgeRun`` (the conversation so far, the tools, the usage and cost, the tool calls made),
``JudgeLimits`` and the conversations a judge mode can choose (``judge_agent.modes``):

* ``native_tool_turns``: the tools (and ``submit_verdict``) through the API's native tool calling.
  Each model call that may use tools is a *turn*; ``turn_limit`` bounds them. All tool calls of
  one answer run concurrently and each counts against ``tool_call_limit``.
* ``react_turns``: the same tools driven by a text protocol (one ``Action`` per answer, results
  sent back as ``Observation`` messages), for models without native tool calling.
* ``single_call``: no tools; one call whose answer must hold the verdict.

A conversation returns the parsed verdict, returns None when the turns ran out (the loop then
makes ``final_call``), or raises ``RunEndedError`` for any other ending. An answer without a
parsable verdict gets one re-ask. Must not build prompts or verdict records (``judge_agent.loop``
does).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, PositiveFloat, PositiveInt

from judge_agent.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelAPI,
    ModelUsage,
    ToolCall,
    ToolInfo,
)
from judge_agent.pricing import add_costs, cost_usd
from judge_agent.react import ReactAction, ReactError, ReactFinal, format_observation, parse_react
from judge_agent.records import RunLog
from judge_agent.subject import JudgeSubject
from judge_agent.toolbox import Toolbox
from judge_agent.verdict import JudgeStopReason, JudgeToolCall
from judge_agent.verdict_parsing import (
    REASK_MESSAGE,
    SUBMIT_VERDICT_TOOL,
    ParsedVerdict,
    parse_submit_arguments,
    parse_verdict_text,
)
from prompts import FINAL_CALL_MESSAGE

__all__ = [
    "Conversation",
    "JudgeLimits",
    "JudgeRun",
    "RunEndedError",
    "final_call",
    "native_tool_turns",
    "react_turns",
    "single_call",
    "verdict_without_tools",
]


class JudgeLimits(BaseModel):
    """The budget of one judge run."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    turn_limit: PositiveInt = 16
    """Model calls that may use tools (``TURNS``); the final forced call is extra."""
    tool_call_limit: PositiveInt | None = None
    """Tool calls over the whole run (None: no limit besides the turns)."""
    token_limit: PositiveInt | None = None
    """Input plus output tokens over the whole run."""
    time_limit: PositiveFloat | None = None
    """Wall-clock seconds for the whole run."""
    on_turn_limit: Literal["force", "invalid"] = "force"
    """When the turns run out: one last call without tools that must give the verdict, or
    ``INVALID`` at once."""


class RunEndedError(Exception):
    """Ends a conversation early with a stop reason. With ``verdict`` (no verdict after a re-ask)
    or ``token_limit`` the run ends there; after another limit the loop still asks for the
    verdict in a final call (unless ``on_turn_limit`` is ``invalid``)."""

    def __init__(self, reason: JudgeStopReason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


@dataclass
class JudgeRun:
    """The state of one judge run, and what a conversation may do with it."""

    model: ModelAPI
    """The judge model."""
    limits: JudgeLimits
    """The run's budget."""
    config: GenerateConfig
    """The settings of every model call."""
    toolbox: Toolbox | None
    """The environment's tools (None: the mode uses none)."""
    log: RunLog
    """Where every call, message and tool call is logged."""
    messages: list[ChatMessage]
    """The conversation so far."""
    tools: list[ToolInfo]
    """The tools offered through native tool calling when a call may use tools."""
    usage: ModelUsage = field(default_factory=ModelUsage)
    """Tokens used so far."""
    cost: float | None = 0.0
    """Dollars spent so far (None once a call had no price)."""
    calls: int = 0
    """Model calls made so far."""
    tool_calls: list[JudgeToolCall] = field(default_factory=list)
    """The environment's tools called so far, with their results."""
    subject: JudgeSubject | None = None
    """What is judged, for modes that write their own messages (None for the others)."""

    async def ask(self, messages: list[ChatMessage]) -> ChatMessageAssistant:
        """A fresh request without tools: ``messages`` replace the conversation so far (and
        are logged), then one model call."""
        self.messages = list(messages)
        for message in self.messages:
            self.log.write("message", message=message)
        return await self.generate(tools=False)

    async def generate(self, *, tools: bool) -> ChatMessageAssistant:
        """One model call; counts it, its tokens and its cost, and logs it."""
        offered = self.tools if tools else []
        config = self.config
        if not offered and config.tool_choice != "auto":
            config = config.model_copy(update={"tool_choice": "auto"})
        self.calls += 1
        started = time.perf_counter()
        output = await self.model.generate(list(self.messages), offered, config)
        seconds = time.perf_counter() - started
        self.usage = self.usage + output.usage
        dollars = cost_usd(self.model.name, output.usage)
        self.cost = add_costs(self.cost, dollars)
        self.messages.append(output.message)
        self.log.write(
            "model_call",
            turn=self.calls,
            tools_offered=len(offered),
            seconds=round(seconds, 6),
            usage=output.usage,
            cost_usd=dollars,
            stop_reason=output.stop_reason,
            retries=output.retries,
            cached=output.cached,
            message=output.message,
        )
        limit = self.limits.token_limit
        if limit is not None and self.usage.input_tokens + self.usage.output_tokens > limit:
            raise RunEndedError("token_limit", f"the run used more than {limit} tokens")
        return output.message

    def say(self, text: str) -> None:
        """Add a user message to the conversation (and the log)."""
        message = ChatMessageUser(content=text)
        self.messages.append(message)
        self.log.write("message", message=message)

    async def run_tool(self, call: ToolCall) -> tuple[str, bool, list[Any]]:
        """Execute one call (or refuse it) and record it."""
        if self.toolbox is None:
            text = f"Error: no tools are available; {call.name} was not run"
            outcome_content: list[Any] = []
            is_error, seconds = True, 0.0
        elif call.parse_error is not None:
            text = f"Error: the arguments of {call.name} are not a JSON object: {call.parse_error}"
            outcome_content, is_error, seconds = [], True, 0.0
        else:
            outcome = await self.toolbox.call(call.name, dict(call.arguments))
            text, is_error, seconds = outcome.text, outcome.is_error, outcome.seconds
            outcome_content = outcome.content
        self.tool_calls.append(
            JudgeToolCall(
                turn=self.calls,
                name=call.name,
                arguments=dict(call.arguments),
                result=text,
                is_error=is_error,
                duration_seconds=round(seconds, 6),
            )
        )
        self.log.write(
            "tool_call",
            turn=self.calls,
            id=call.id,
            name=call.name,
            arguments=call.arguments,
            is_error=is_error,
            seconds=round(seconds, 6),
            result=text,
        )
        return text, is_error, outcome_content

    def toolbox_tools(self) -> list[ToolInfo]:
        """The environment's tools (not ``submit_verdict``)."""
        return [] if self.toolbox is None else self.toolbox.tools

    def tool_budget(self) -> int | None:
        """Tool calls left (None: no limit besides the turns)."""
        limit = self.limits.tool_call_limit
        return None if limit is None else limit - len(self.tool_calls)


async def native_tool_turns(run: JudgeRun) -> ParsedVerdict | None:
    """Native tool calling until a verdict or the end of the turns (then None)."""
    reasked = False
    while run.calls < run.limits.turn_limit:
        message = await run.generate(tools=True)
        if message.tool_calls:
            verdict = await _answer_tool_calls(run, message.tool_calls)
            if verdict is not None:
                return verdict
            continue
        parsed = parse_verdict_text(message.content)
        if parsed is not None:
            return parsed
        if reasked:
            raise RunEndedError("verdict", "no verdict after a re-ask")
        reasked = True
        run.say(REASK_MESSAGE)
    return None


async def _answer_tool_calls(run: JudgeRun, calls: list[ToolCall]) -> ParsedVerdict | None:
    """Run one answer's tool calls concurrently; a valid ``submit_verdict`` ends the run."""
    submitted: ParsedVerdict | None = None
    results: dict[str, ChatMessageTool] = {}
    runnable: list[ToolCall] = []
    for call in calls:
        if call.name == SUBMIT_VERDICT_TOOL.name:
            parsed = parse_submit_arguments(dict(call.arguments))
            if isinstance(parsed, ParsedVerdict):
                submitted = submitted or parsed
                text, is_error = "Verdict recorded.", False
            else:
                text, is_error = f"Error: {parsed}", True
            results[call.id] = ChatMessageTool(
                tool_call_id=call.id, name=call.name, content=text, is_error=is_error
            )
            run.log.write(
                "tool_call",
                turn=run.calls,
                id=call.id,
                name=call.name,
                arguments=call.arguments,
                is_error=is_error,
                result=text,
            )
        else:
            runnable.append(call)
    budget = run.tool_budget()
    allowed = runnable if budget is None else runnable[: max(budget, 0)]
    refused = runnable[len(allowed) :]
    outcomes = await asyncio.gather(*(run.run_tool(call) for call in allowed))
    for call, (text, is_error, content) in zip(allowed, outcomes, strict=True):
        results[call.id] = ChatMessageTool(
            tool_call_id=call.id, name=call.name, content=content or text, is_error=is_error
        )
    for call in refused:
        results[call.id] = ChatMessageTool(
            tool_call_id=call.id,
            name=call.name,
            content="Error: the tool-call limit of this judge run is reached; not run",
            is_error=True,
        )
    # Every call gets its answer, in the order the model made them (providers require it).
    for call in calls:
        run.messages.append(results[call.id])
    if submitted is not None:
        return submitted
    if refused or run.tool_budget() == 0:
        raise RunEndedError(
            "tool_call_limit", f"the run reached {run.limits.tool_call_limit} tool calls"
        )
    return None


async def react_turns(run: JudgeRun) -> ParsedVerdict | None:
    """The text protocol: one action per answer, the result as an observation."""
    reasked = False
    while run.calls < run.limits.turn_limit:
        message = await run.generate(tools=False)
        step = parse_react(message.content, [tool.name for tool in run.toolbox_tools()])
        if isinstance(step, ReactFinal):
            return step.verdict
        if isinstance(step, ReactAction):
            budget = run.tool_budget()
            if budget is not None and budget <= 0:
                raise RunEndedError(
                    "tool_call_limit", f"the run reached {run.limits.tool_call_limit}"
                )
            call = ToolCall(id=f"react_{run.calls}", name=step.tool, arguments=step.arguments)
            text, is_error, _ = await run.run_tool(call)
            run.say(format_observation(text, is_error))
            continue
        assert isinstance(step, ReactError)
        if reasked:
            raise RunEndedError("verdict", f"no action or verdict after a re-ask: {step.message}")
        reasked = True
        run.say(step.message)
    return None


async def final_call(run: JudgeRun) -> ParsedVerdict | None:
    """The last call, without tools, that must give the verdict (one re-ask)."""
    run.say(FINAL_CALL_MESSAGE)
    return await verdict_without_tools(run)


async def verdict_without_tools(run: JudgeRun) -> ParsedVerdict | None:
    """A call without tools whose answer must hold a verdict; one re-ask, then None."""
    for attempt in range(2):
        message = await run.generate(tools=False)
        parsed = parse_verdict_text(message.content)
        if parsed is not None:
            return parsed
        if attempt == 0:
            run.say(REASK_MESSAGE)
    return None


async def single_call(run: JudgeRun) -> ParsedVerdict:
    """One call without tools whose answer must hold the verdict (one re-ask); no turns."""
    parsed = await verdict_without_tools(run)
    if parsed is None:
        raise RunEndedError("verdict", "no verdict after a re-ask")
    return parsed


Conversation = Callable[[JudgeRun], Awaitable[ParsedVerdict | None]]
"""Drives a run: returns the verdict, None when the turn budget ran out, or raises
``RunEndedError``."""
