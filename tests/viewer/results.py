"""Test helper: results folders made by a scripted-model grid, for the viewer's tests.

The script always looks at step 2 through ``VIEW_TRAJECTORY_STEP`` (step 1 when there is only
one) and then answers PASS when it has tools and FAIL when it has none, so agent judges are wrong
on every FAIL trajectory and ``llm`` judges on every PASS one: each folder holds wrong verdicts.
"""

from __future__ import annotations

from pathlib import Path

from bench.grid_runner import GridSpec, JudgeArm, judge_dataset
from judge_agent.model import ChatMessage, ChatMessageAssistant, GenerateConfig, ToolInfo
from judge_agent.providers.mock import Reply, ScriptedModel, reply, tool_call

REPO = Path(__file__).resolve().parents[2]
DS = REPO / "datasets" / "ds"
MINI = REPO / "datasets" / "examples" / "mini"
DS_AGENT_RUNS = {
    "fs-api-usage--dashed",
    "fs-api-usage--direct",
    "fs-bad-config--claims",
    "fs-bad-config--direct",
}
"""DS trajectories judged in agent mode too (filesystem: a cheap local replay)."""
MINI_AGENT_RUNS = {
    "fs-meeting-notes-index--sonnet-pass",
    "android-markor-shopping-note--pass",
    "android-markor-shopping-note--wrong-name-fail",
}
"""Mini trajectories judged in agent mode too (no desktop or database needed)."""
VIEWED_STEP = 2


def _look_then_answer(
    messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
) -> Reply:
    if not tools:
        return "RESULT: FAIL\nCONFIDENCE: Low"
    if any(isinstance(message, ChatMessageAssistant) for message in messages):
        return reply(
            "", tool_call("submit_verdict", verdict="PASS", confidence=0.7, reasoning="ok")
        )
    return reply("Looking at a step.", tool_call("VIEW_TRAJECTORY_STEP", step=VIEWED_STEP))


def _arm(modes: tuple[str, ...]) -> JudgeArm:
    return JudgeArm(
        lambda: ScriptedModel("viewer-test", respond=_look_then_answer),
        GridSpec(modes=modes, turns=(2,), runs=1),
    )


async def make_results(
    dataset: Path, output: Path, agent_runs: set[str], only: set[str] | None = None
) -> Path:
    """``llm`` runs over the dataset (or ``only`` those trajectories), plus ``agent`` runs of
    ``agent_runs``, all into ``output``."""
    await judge_dataset(dataset, output, arms=[_arm(("llm",))], jobs=4, only=only)
    await judge_dataset(dataset, output, arms=[_arm(("agent",))], jobs=2, only=agent_runs)
    return output
