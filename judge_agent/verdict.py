"""The judge's output: a verdict on one trajectory, with everything needed to audit and cost it."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, NonNegativeFloat, NonNegativeInt

from judge_agent.model import ModelFailureKind

__all__ = ["JudgeStopReason", "JudgeToolCall", "Verdict", "VerdictValue"]

VerdictValue = Literal["PASS", "FAIL", "INVALID"]

JudgeStopReason = Literal[
    "verdict", "turn_limit", "token_limit", "time_limit", "tool_call_limit", "error"
]
"""Why a judge run ended: a verdict (or none after a re-ask), one of its limits, or an error."""


class JudgeToolCall(BaseModel):
    """One tool call the judge made while gathering evidence."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    turn: NonNegativeInt
    """The model call (counting from 1) that requested this tool call."""

    name: str
    """The tool's name."""

    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    """The arguments the judge sent."""

    result: str | None = None
    """The tool's textual result as the judge saw it (possibly truncated)."""

    is_error: bool = False
    """Whether the tool reported an error."""

    duration_seconds: NonNegativeFloat | None = None
    """How long the call took."""


class Verdict(BaseModel):
    """A judge's decision on one trajectory. ``INVALID`` is never folded into ``FAIL``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    trajectory_id: str
    """The trajectory judged."""

    verdict: VerdictValue
    """``PASS`` or ``FAIL``; ``INVALID`` when no verdict could be obtained or parsed."""

    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    """The judge's stated confidence, mapped to 0..1 (High/Medium/Low become 0.9/0.6/0.3)."""

    reasoning: str | None = None
    """The judge's explanation."""

    details: dict[str, JsonValue] = Field(default_factory=dict)
    """Further answers the judge method gave besides the verdict (AgentRewardBench-style side
    effects, optimality and looping; essential states and which window showed each), by name."""

    tool_calls: list[JudgeToolCall] = Field(default_factory=list)
    """Every tool call the judge made, in order."""

    turns_used: NonNegativeInt = 0
    """Model calls made, the final verdict call included."""

    tokens_in: NonNegativeInt = 0
    """Prompt tokens over all model calls."""

    tokens_out: NonNegativeInt = 0
    """Completion tokens over all model calls."""

    cost_usd: NonNegativeFloat | None = None
    """Dollar cost from the price table; absent when the model has no price."""

    wall_time_seconds: NonNegativeFloat = 0.0
    """Elapsed time of the judge run."""

    stop_reason: JudgeStopReason = "verdict"
    """What ended the run: a verdict, one of the limits, or an error."""

    error: str | None = None
    """The error that made the verdict ``INVALID``, if any."""

    model_failure: ModelFailureKind | None = None
    """When a model call failed for good and ended the run: what kind of failure it was (e.g.
    ``connection``: the endpoint could not be reached); None otherwise."""

    items: dict[str, VerdictValue] = Field(default_factory=dict)
    """Per-claim verdicts by item id, when the trajectory's claims were judged together in this
    run (``INVALID`` for a claim the judge gave no verdict on); empty otherwise."""

    model: str | None = None
    """The judge model as a ``provider/model`` string."""

    mode: str | None = None
    """The judge mode's name (``agent``, ``llm``, ``react`` or another registered mode)."""

    finished_at: datetime | None = None
    """When the verdict was recorded."""
