"""What a judge run is about, for modes that write their own messages.

Owns ``JudgeSubject`` (the task, the trajectory, where its screenshots live, and the method
switches the run was given) and ``MethodRequest`` (one model request a method makes, as the
exact messages it sends). The built-in modes get their prompt from ``prompts.build_prompt`` and
never read the subject; a method mode (``JudgeModeSpec.plan``) builds every message itself from
it. Must not import any mode.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dataset.models import Task, Trajectory
from judge_agent.model import ChatMessage

__all__ = ["JudgeSubject", "MethodRequest"]


@dataclass(frozen=True)
class JudgeSubject:
    """One trajectory to judge, with what a method needs to read it."""

    task: Task
    """The task the trajectory attempted (its instruction is shown; never its metadata)."""
    trajectory: Trajectory
    """The recorded run (its label is never shown)."""
    base_dir: Path
    """The folder its screenshot paths are relative to."""
    options: Mapping[str, str] = field(default_factory=dict)
    """The method's switches as given (``screenshots=24``, ``ui=on``, ...)."""


@dataclass(frozen=True)
class MethodRequest:
    """One model request of a method: what it is for and the exact messages."""

    purpose: str
    """What the request asks (``judgement``, ``decomposition``, ``window 2 of 5``, ...)."""
    messages: list[ChatMessage]
    """The messages sent, images included."""
