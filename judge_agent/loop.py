"""One judge run: the conversation with the model, under its limits, ending in a ``Verdict``.

Owns the three modes' loops:

* ``agent``: the model gets the judge's MCP tools plus ``submit_verdict`` through native tool
  calling. Each model call that may use tools is a *turn*; ``turn_limit`` (``TURNS``) bounds them.
  All tool calls of one answer run concurrently and each counts against ``tool_call_limit``.
* ``react``: the same tools, driven by a text protocol (one ``Action`` per answer, results sent
  back as ``Observation`` messages) for models without native tool calling.
* ``llm``: no tools; one call (the prompt holds the whole trajectory).

A verdict comes from ``submit_verdict`` or from a final answer in one of the published text
formats. An answer without a parsable verdict gets one re-ask; a second miss is ``INVALID``, never
a silent ``FAIL``. When the turns run out the model gets one last call without tools that must
give the verdict (``on_turn_limit="force"``), or the run is recorded ``INVALID``
(``on_turn_limit="invalid"``). Token and wall-time limits end the run as ``INVALID``; the verdict
records which limit ended it (``turn_limit``, ``token_limit``, ``time_limit``,
``tool_call_limit``). A model call that fails for good (after its retries) makes the verdict
``INVALID`` with the error.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt

from dataset.models import Task, Trajectory
from judge_agent.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelAPI,
    ModelError,
    ModelUsage,
    ToolCall,
    ToolInfo,
)
from judge_agent.pricing import add_costs, cost_usd
from judge_agent.react import ReactAction, ReactError, ReactFinal, format_observation, parse_react
from judge_agent.records import RunLog
from judge_agent.toolbox import Toolbox
from judge_agent.verdict import JudgeToolCall, StopReason, Verdict
from judge_agent.verdict_parsing import (
    REASK_MESSAGE,
    SUBMIT_VERDICT_TOOL,
    ParsedVerdict,
    parse_submit_arguments,
    parse_verdict_text,
)
from prompts import FINAL_CALL_MESSAGE, build_prompt

JudgeMode = Literal["agent", "llm", "react"]
MODES: tuple[JudgeMode, ...] = ("agent", "llm", "react")


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


class JudgeSettings(BaseModel):
    """How a judge is run, beyond its limits."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    mode: JudgeMode = "agent"
    """``agent`` (native tools), ``react`` (tools through text) or ``llm`` (no tools)."""
    limits: JudgeLimits = Field(default_factory=JudgeLimits)
    """The run's budget."""
    generate: GenerateConfig = Field(default_factory=GenerateConfig)
    """Settings of every model call."""
    screenshots: str = "last"
    """Which screenshots go into the prompt (see ``judge_agent.rendering``)."""


class _EndRunError(Exception):
    """Ends the loop early with a stop reason (the verdict then comes from a final call)."""

    def __init__(self, reason: StopReason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


@dataclass
class _Run:
    """The state of one judge run."""

    model: ModelAPI
    settings: JudgeSettings
    toolbox: Toolbox | None
    log: RunLog
    messages: list[ChatMessage]
    tools: list[ToolInfo]
    usage: ModelUsage = field(default_factory=ModelUsage)
    cost: float | None = 0.0
    calls: int = 0
    tool_calls: list[JudgeToolCall] = field(default_factory=list)

    @property
    def limits(self) -> JudgeLimits:
        return self.settings.limits

    async def generate(self, *, tools: bool) -> ChatMessageAssistant:
        """One model call; counts it, its tokens and its cost, and logs it."""
        offered = self.tools if tools else []
        config = self.settings.generate
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
            raise _EndRunError("token_limit", f"the run used more than {limit} tokens")
        return output.message

    def say(self, text: str) -> None:
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
        return [] if self.toolbox is None else self.toolbox.tools

    def tool_budget(self) -> int | None:
        limit = self.limits.tool_call_limit
        return None if limit is None else limit - len(self.tool_calls)


async def _agent_turns(run: _Run) -> ParsedVerdict | None:
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
            raise _EndRunError("verdict", "no verdict after a re-ask")
        reasked = True
        run.say(REASK_MESSAGE)
    return None


async def _answer_tool_calls(run: _Run, calls: list[ToolCall]) -> ParsedVerdict | None:
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
        raise _EndRunError(
            "tool_call_limit", f"the run reached {run.limits.tool_call_limit} tool calls"
        )
    return None


async def _react_turns(run: _Run) -> ParsedVerdict | None:
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
                raise _EndRunError(
                    "tool_call_limit", f"the run reached {run.limits.tool_call_limit}"
                )
            call = ToolCall(id=f"react_{run.calls}", name=step.tool, arguments=step.arguments)
            text, is_error, _ = await run.run_tool(call)
            run.say(format_observation(text, is_error))
            continue
        assert isinstance(step, ReactError)
        if reasked:
            raise _EndRunError("verdict", f"no action or verdict after a re-ask: {step.message}")
        reasked = True
        run.say(step.message)
    return None


async def _final_call(run: _Run) -> ParsedVerdict | None:
    """The last call, without tools, that must give the verdict (one re-ask)."""
    run.say(FINAL_CALL_MESSAGE)
    return await _verdict_without_tools(run)


async def _verdict_without_tools(run: _Run) -> ParsedVerdict | None:
    """A call without tools whose answer must hold a verdict; one re-ask, then None."""
    for attempt in range(2):
        message = await run.generate(tools=False)
        parsed = parse_verdict_text(message.content)
        if parsed is not None:
            return parsed
        if attempt == 0:
            run.say(REASK_MESSAGE)
    return None


async def _conversation(run: _Run) -> tuple[ParsedVerdict | None, StopReason, str | None]:
    mode = run.settings.mode
    try:
        if mode == "llm":
            parsed = await _verdict_without_tools(run)
            return parsed, "verdict", None if parsed else "no verdict after a re-ask"
        turns = _agent_turns if mode == "agent" else _react_turns
        parsed = await turns(run)
        if parsed is not None:
            return parsed, "verdict", None
        reason: StopReason = "turn_limit"
        detail = f"the {run.limits.turn_limit} turns ran out"
    except _EndRunError as stop:
        if stop.reason in ("verdict", "token_limit"):
            return None, stop.reason, str(stop)
        reason, detail = stop.reason, str(stop)
    run.log.write("limit", reason=reason, detail=detail)
    if run.limits.on_turn_limit == "invalid":
        return None, reason, detail
    parsed = await _final_call(run)
    return parsed, reason, None if parsed else f"{detail}; no verdict in the final call"


async def judge_trajectory(
    task: Task,
    trajectory: Trajectory,
    *,
    model: ModelAPI,
    settings: JudgeSettings,
    base_dir: Path,
    toolbox: Toolbox | None = None,
    log: RunLog | None = None,
) -> Verdict:
    """Judge one trajectory; never raises for model, tool or limit failures (they become
    ``INVALID`` verdicts with the reason), only for programming errors."""
    log = log or RunLog(None)
    started = time.perf_counter()
    tools = [] if settings.mode == "llm" or toolbox is None else list(toolbox.tools)
    prompt = build_prompt(
        task,
        trajectory,
        mode=settings.mode,
        tools=tools,
        base_dir=base_dir,
        screenshots=settings.screenshots,
        turn_budget=None if settings.mode == "llm" else settings.limits.turn_limit,
    )
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=prompt.system),
        ChatMessageUser(content=prompt.user),
    ]
    offered = [*tools, SUBMIT_VERDICT_TOOL] if settings.mode == "agent" else []
    run = _Run(model, settings, toolbox, log, messages, offered)
    log.write(
        "start",
        trajectory_id=trajectory.id,
        task_id=task.id,
        model=model.name,
        mode=settings.mode,
        limits=settings.limits,
        tools=[tool.name for tool in offered],
    )
    for message in messages:
        log.write("message", message=message)
    error: str | None = None
    try:
        async with asyncio.timeout(settings.limits.time_limit):
            parsed, reason, error = await _conversation(run)
    except TimeoutError:
        parsed, reason = None, "time_limit"
        error = f"the run took longer than {settings.limits.time_limit:g} s"
    except ModelError as failure:
        parsed, reason, error = None, "error", f"model call failed: {failure}"
    verdict = Verdict(
        trajectory_id=trajectory.id,
        verdict=parsed.verdict if parsed else "INVALID",
        confidence=parsed.confidence if parsed else None,
        reasoning=parsed.reasoning if parsed else None,
        tool_calls=run.tool_calls,
        turns_used=run.calls,
        tokens_in=run.usage.input_tokens,
        tokens_out=run.usage.output_tokens,
        cost_usd=run.cost,
        wall_time_seconds=round(time.perf_counter() - started, 6),
        stop_reason=reason,
        error=None if parsed else error,
        model=model.name,
        mode=settings.mode,
        finished_at=datetime.now(UTC),
    )
    log.write("verdict", verdict=verdict)
    return verdict
