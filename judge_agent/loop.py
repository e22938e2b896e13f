"""One judge run: the conversation with the model, under its limits, ending in a ``Verdict``.

Owns ``JudgeSettings`` and ``judge_trajectory``: the prompt for the run's mode, the opening
messages, the tools the mode offers, the conversation the mode chooses (``judge_agent.modes``,
``judge_agent.conversation``), what happens when it ends without a verdict, and the ``Verdict``.

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
import base64
import time
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from dataset.items import focused_item
from dataset.models import Task, Trajectory
from judge_agent.claim_verdicts import claim_verdicts
from judge_agent.conversation import Conversation, JudgeLimits, JudgeRun, RunEndedError, final_call
from judge_agent.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelAPI,
    ModelError,
    ModelFailureKind,
    ToolInfo,
)
from judge_agent.modes import ModeName, judge_mode
from judge_agent.records import RunLog
from judge_agent.subject import JudgeSubject, MethodRequest
from judge_agent.toolbox import Toolbox
from judge_agent.verdict import JudgeStopReason, Verdict
from judge_agent.verdict_parsing import SUBMIT_VERDICT_TOOL, ParsedVerdict
from prompts import JudgePrompt, PromptPart, build_prompt

__all__ = ["JudgeSettings", "judge_trajectory", "opening_messages", "planned_requests"]


class JudgeSettings(BaseModel):
    """How a judge is run, beyond its limits."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    mode: ModeName = "agent"
    """A registered mode: ``agent`` (native tools), ``react`` (tools through text), ``llm`` (no
    tools), or another."""
    limits: JudgeLimits = Field(default_factory=JudgeLimits)
    """The run's budget."""
    generate: GenerateConfig = Field(default_factory=GenerateConfig)
    """Settings of every model call."""
    screenshots: str = "last"
    """Which screenshots go into the prompt (see ``dataset.rendering``)."""
    trees: str = "all"
    """Which recorded accessibility trees go into the prompt: ``all`` (every shown step's),
    ``last``, ``none`` or a number sampled uniformly, first and last included."""
    notes_template: str | None = None
    """The prompt template with notes on the agent's environment, as its environment kind names
    it (``EnvironmentKind.prompt_notes``); None: the subdomain's own notes."""
    method_options: dict[str, str] = Field(default_factory=dict)
    """Switches of a judge method mode (``screenshots=24``, ``ui=on``, ...), checked by the
    mode's options model."""


def _content(part: PromptPart) -> Content:
    if isinstance(part, str):
        return ContentText(text=part)
    return ContentImage(data=base64.b64encode(part.data).decode("ascii"), mime_type=part.mime_type)


def opening_messages(prompt: JudgePrompt) -> list[ChatMessage]:
    """The system and user messages that open a judge's conversation with ``prompt``."""
    return [
        ChatMessageSystem(content=prompt.system),
        ChatMessageUser(content=[_content(part) for part in prompt.user]),
    ]


def _prompt(
    task: Task,
    trajectory: Trajectory,
    settings: JudgeSettings,
    base_dir: Path,
    tools: list[ToolInfo],
) -> JudgePrompt:
    mode = judge_mode(settings.mode)
    return build_prompt(
        task,
        trajectory,
        style=mode.prompt,
        tools=tools if mode.prompt.tool_section is not None else None,
        base_dir=base_dir,
        screenshots=settings.screenshots,
        trees=settings.trees,
        turn_budget=settings.limits.turn_limit if mode.turn_budget else None,
        notes_template=settings.notes_template,
    )


def planned_requests(
    task: Task,
    trajectory: Trajectory,
    *,
    settings: JudgeSettings,
    base_dir: Path,
    tools: list[ToolInfo] | None = None,
) -> list[MethodRequest]:
    """The requests a judge of ``settings.mode`` would send for ``trajectory``, exactly, as far
    as they do not depend on the model's answers (``--dry-run``): a method mode's own plan, or
    the opening messages of the other modes (with ``tools`` listed where the mode lists them)."""
    mode = judge_mode(settings.mode)
    if mode.plan is not None:
        return mode.plan(JudgeSubject(task, trajectory, base_dir, dict(settings.method_options)))
    offered = list(tools or []) if mode.uses_tools else []
    prompt = _prompt(task, trajectory, settings, base_dir, offered)
    return [MethodRequest("opening", opening_messages(prompt))]


async def _conversation(
    run: JudgeRun, conversation: Conversation
) -> tuple[ParsedVerdict | None, JudgeStopReason, str | None]:
    """The verdict, the stop reason and the error, with the final call after a limit."""
    try:
        parsed = await conversation(run)
        if parsed is not None:
            return parsed, "verdict", None
        reason: JudgeStopReason = "turn_limit"
        detail = f"the {run.limits.turn_limit} turns ran out"
    except RunEndedError as stop:
        if stop.reason in ("verdict", "token_limit"):
            return None, stop.reason, str(stop)
        reason, detail = stop.reason, str(stop)
    run.log.write("limit", reason=reason, detail=detail)
    if run.limits.on_turn_limit == "invalid":
        return None, reason, detail
    parsed = await final_call(run)
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
    mode = judge_mode(settings.mode)
    tools = list(toolbox.tools) if mode.uses_tools and toolbox is not None else []
    subject: JudgeSubject | None = None
    if mode.plan is not None:
        subject = JudgeSubject(task, trajectory, base_dir, dict(settings.method_options))
        messages: list[ChatMessage] = []
    else:
        messages = opening_messages(_prompt(task, trajectory, settings, base_dir, tools))
    offered = [
        *(tools if mode.native_tools else []),
        *([SUBMIT_VERDICT_TOOL] if mode.submit_verdict else []),
    ]
    run = JudgeRun(
        model,
        settings.limits,
        settings.generate,
        toolbox if mode.uses_tools else None,
        log,
        messages,
        offered,
        subject=subject,
    )
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
    failure_kind: ModelFailureKind | None = None
    try:
        async with asyncio.timeout(settings.limits.time_limit):
            parsed, reason, error = await _conversation(run, mode.conversation)
    except TimeoutError:
        parsed, reason = None, "time_limit"
        error = f"the run took longer than {settings.limits.time_limit:g} s"
    except ModelError as failure:
        parsed, reason, error = None, "error", f"model call failed: {failure}"
        failure_kind = failure.kind
    together = [] if focused_item(trajectory) is not None else trajectory.items
    verdict = Verdict(
        trajectory_id=trajectory.id,
        verdict=parsed.verdict if parsed else "INVALID",
        confidence=parsed.confidence if parsed else None,
        reasoning=parsed.reasoning if parsed else None,
        details=dict(parsed.details) if parsed else {},
        tool_calls=run.tool_calls,
        turns_used=run.calls,
        tokens_in=run.usage.input_tokens,
        tokens_out=run.usage.output_tokens,
        cost_usd=run.cost,
        wall_time_seconds=round(time.perf_counter() - started, 6),
        stop_reason=reason,
        error=None if parsed else error,
        model_failure=None if parsed else failure_kind,
        model=model.name,
        mode=settings.mode,
        finished_at=datetime.now(UTC),
        items=claim_verdicts(run.messages, [item.id for item in together]) if together else {},
    )
    log.write("verdict", verdict=verdict)
    return verdict
