"""Recording a scripted agent: its tool calls go through a real MCP client session to the real
server of a fresh sandbox, and every call with its answer becomes a ``Step``.

Filesystem paths the agent used are written with the ``${SANDBOX_ROOT}`` placeholder, in the
arguments and in the answers, so replay can run them in any sandbox. Times are synthetic and
deterministic (a fixed start per run, a few seconds per step): the suite's bytes must not depend
on when it was built.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from mcp import Client, types

from dataset.actions import ToolCallAction
from dataset.models import SANDBOX_ROOT_PLACEHOLDER, Observation, Step
from suites.ds.spec import CallResult

STEP_SECONDS = 7
"""Synthetic duration of one step."""


def _placeholder(value: Any, root: str) -> Any:
    if not root:
        return value
    if isinstance(value, str):
        return value.replace(root, SANDBOX_ROOT_PLACEHOLDER)
    if isinstance(value, list):
        return [_placeholder(item, root) for item in value]
    if isinstance(value, dict):
        return {key: _placeholder(item, root) for key, item in value.items()}
    return value


class RecordingSession:
    """An ``AgentSession`` over one MCP client; collects the steps."""

    def __init__(self, client: Client, root: str, started: datetime) -> None:
        self.client = client
        self.root = root
        self.steps: list[Step] = []
        self._reasoning: str | None = None
        self._clock = started

    def think(self, text: str) -> None:
        self._reasoning = text if self._reasoning is None else f"{self._reasoning}\n{text}"

    async def call(self, tool: str, /, **arguments: Any) -> CallResult:
        result = await self.client.call_tool(tool, dict(arguments))
        text = "".join(
            block.text for block in result.content if isinstance(block, types.TextContent)
        )
        index = len(self.steps) + 1
        started = self._clock
        self._clock = started + timedelta(seconds=STEP_SECONDS)
        self.steps.append(
            Step(
                index=index,
                action=ToolCallAction(
                    name=tool,
                    arguments=_placeholder(dict(arguments), self.root),
                    call_id=f"call_{index:03d}",
                ),
                observation=Observation(text=_placeholder(text, self.root)),
                is_error=bool(result.is_error),
                reasoning=self._reasoning,
                started_at=started,
                ended_at=self._clock,
            )
        )
        self._reasoning = None
        return CallResult(text=text, is_error=bool(result.is_error))

    @property
    def ended_at(self) -> datetime:
        return self._clock


def run_start(sequence: int) -> datetime:
    """The synthetic start time of the ``sequence``-th recorded run."""
    return datetime(2026, 3, 2, 9, 0, tzinfo=UTC) + timedelta(minutes=17 * sequence)
