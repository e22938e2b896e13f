"""What a task of the DS suite is made of, and the session a scripted agent works through.

A ``SuiteTask`` bundles the task record, a deterministic builder of its initial state (a directory
tree or a ``seed.sql``), its ``verify.py`` source, and the scripted agents (``AgentPolicy``) whose
runs become its trajectories. A policy is an async function of an ``AgentSession``: it calls tools
by name, says what it is thinking before a call, and returns its final message. The session
records every call and what the MCP server answered; nothing in a trajectory is typed by hand.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from dataset.models import Task

FailureKind = Literal[
    "partial",
    "constraint",
    "wrong-target",
    "false-claim",
    "stops-after-error",
    "undone",
]
"""How an intended failure fails: partial completion, a violated constraint, the wrong
path/table/name, success claimed without the work, giving up after an error, or correct work
undone later."""


@dataclass(frozen=True)
class CallResult:
    """What one tool call returned, as the agent saw it."""

    text: str
    is_error: bool


class AgentSession(Protocol):
    """The tools a scripted agent may call (the real MCP server of the task's sandbox)."""

    root: str
    """Filesystem tasks: the sandbox root as the agent sees it (absolute). Postgres: ""."""

    async def call(self, tool: str, /, **arguments: Any) -> CallResult:
        """Call a tool; the call and its answer become the next step."""
        ...

    def think(self, text: str) -> None:
        """Reasoning recorded with the next call."""
        ...


Policy = Callable[[AgentSession], Awaitable[str]]
"""A scripted agent: makes its calls, returns its final message."""


@dataclass(frozen=True)
class AgentPolicy:
    """One scripted agent run of a task."""

    name: str
    """Short id, unique within the task; the trajectory id is ``<task id>--<name>``."""
    agent: str
    """The agent's style as a name (several policies share a style across tasks)."""
    run: Policy
    """The script."""
    intent: Literal["PASS", "FAIL"]
    """What the script means to achieve; the label comes from the verifier, and the build
    fails when the two disagree."""
    failure: FailureKind | None = None
    """For intended failures: how it fails."""
    note: str = ""
    """One line on what the run does (documentation)."""


@dataclass(frozen=True)
class SuiteTask:
    """A task of the suite with everything needed to build its folder and runs."""

    task: Task
    """The record (``verifier`` set, ``initial_state`` a directory tree or a seed)."""
    kind: str
    """The task family, e.g. ``content-transformation`` or ``row-level-security``."""
    build_initial: Callable[[Path], None]
    """Writes the initial state into the task folder (the ``initial/`` tree or ``seed.sql``);
    deterministic."""
    verifier: str
    """The ``verify.py`` source (MCPMark contract), as ``verify_script`` writes it from the
    task's ``check`` function."""
    checks: str
    """One line on what the verifier checks (for the suite's README table)."""
    policies: list[AgentPolicy] = field(default_factory=list)
    """The scripted runs; at least two meant to pass and two meant to fail."""
