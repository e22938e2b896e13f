"""``agentrewardbench``: four questions about the run, success being the verdict
(AgentRewardBench-style, adapted to phones as MobileJudgeBench does).

One request: the goal, the numbered steps (action and the agent's reasoning), the final screen's
element list and its screenshot. The answer holds ``<success>``, ``<side_effect>``, ``<optimal>``
(1 to 4) and ``<loop>``; ``success`` is the verdict, the other three go to the verdict's
``details`` (``side_effects``, ``optimality``, ``looping``). An answer without ``<success>`` is
re-asked once.
"""

from __future__ import annotations

from pydantic import JsonValue

from dataset.frames import trajectory_frames
from judge_agent.conversation import JudgeRun
from judge_agent.mobile_methods.answers import details_value, parse_tagged, yes_no_value
from judge_agent.mobile_methods.common import (
    MethodOptions,
    answer_or_reask,
    fill,
    frames_with_screens,
    options_of,
    request,
    screen_block,
    step_line,
    ui_list,
)
from judge_agent.model import ChatMessage, Content
from judge_agent.modes import JudgeModeSpec
from judge_agent.subject import JudgeSubject, MethodRequest
from judge_agent.verdict_parsing import ParsedVerdict
from prompts import PromptStyle

__all__ = ["SPEC", "AgentRewardBenchOptions", "agent_reward_bench_messages", "parse_four_answers"]

_TAGS = {
    "success": "success",
    "side_effects": "side_effect",
    "optimality": "optimal",
    "looping": "loop",
}


class AgentRewardBenchOptions(MethodOptions):
    """AgentRewardBench-style switches."""


def agent_reward_bench_messages(subject: JudgeSubject) -> list[ChatMessage]:
    """The one request."""
    options = options_of(subject, AgentRewardBenchOptions)
    lines = []
    for step in subject.trajectory.steps:
        line = f"{step.index}. {step_line(step.index, step.action)}"
        if step.reasoning:
            line += f"\n   Reasoning: {step.reasoning.strip()}"
        lines.append(line)
    if subject.trajectory.final_response:
        lines.append(f"Final message to the user: {subject.trajectory.final_response}")
    observed = [f for f in trajectory_frames(subject.trajectory) if f.observation is not None]
    last_ui = next(
        (
            f.observation.accessibility_tree
            for f in reversed(observed)
            if f.observation and f.observation.accessibility_tree
        ),
        None,
    )
    parts: list[Content | str] = [
        fill(
            "arb_user.md",
            instruction=subject.task.instruction,
            steps="\n".join(lines) or "(no steps)",
            elements=ui_list(last_ui) or "(no element list was recorded)",
        )
    ]
    screens = frames_with_screens(subject)
    block = screen_block(subject, screens[-1], options.long_edge) if screens else None
    if block is not None:
        parts.append(block)
    return request(fill("arb_system.md"), parts)


def parse_four_answers(text: str) -> ParsedVerdict | None:
    """The verdict from ``<success>``, the other answers as details; None without a readable
    ``<success>``."""
    found, reasoning = parse_tagged(text, _TAGS)
    success = yes_no_value(found.get("success", ""))
    if success is None:
        return None
    details: dict[str, JsonValue] = {
        name: details_value(value) for name, value in found.items() if name != "success"
    }
    return ParsedVerdict(
        verdict="PASS" if success else "FAIL", reasoning=reasoning, format="tag", details=details
    )


async def _converse(run: JudgeRun) -> ParsedVerdict:
    assert run.subject is not None
    return await answer_or_reask(
        run, agent_reward_bench_messages(run.subject), parse_four_answers, what="<success> answer"
    )


SPEC = JudgeModeSpec(
    name="agentrewardbench",
    description="AgentRewardBench-style: steps, final screen and elements; four tagged "
    "answers, "
    "success is the verdict",
    conversation=_converse,
    prompt=PromptStyle(),
    plan=lambda subject: [MethodRequest("judgement", agent_reward_bench_messages(subject))],
    group="mobile-methods",
    options=AgentRewardBenchOptions,
)
"""This method's mode, registered by module path in ``judge_agent.modes``."""
