"""AJ-Bench's ``ACTION: {...}`` line: parsing, and both tool-using modes running it as a call.

The conversations run with the scripted model against the real trajectory server over the mini
GUI trajectory, whose ``VIEW_TRAJECTORY_STEP`` answers with the step's screenshot, so the tests
also check that an observation sent back as text carries the tool's image.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from dataset.store import TRAJECTORIES_DIR, load_dataset
from judge_agent.action_line import ActionLine, ActionLineError, find_action_line
from judge_agent.conversation import JudgeLimits
from judge_agent.loop import JudgeSettings, judge_trajectory
from judge_agent.model import ChatMessageUser, ContentImage, ContentText
from judge_agent.providers.mock import ScriptedModel, reply
from judge_agent.react import ReactAction, ReactError, ReactFinal, parse_react
from judge_agent.toolbox import Toolbox
from mcp_servers.trajectory.server import trajectory_server

MINI = Path(__file__).resolve().parents[2] / "datasets" / "examples" / "mini"
WORD = "word-memo-q4-update--c13-pass"
GUI_TOOLS = ["CLICK", "TYPING", "HOTKEY", "VIEW_TRAJECTORY_STEP"]


def test_a_computer_13_action_line_names_the_tool_and_its_parameters() -> None:
    text = 'I will open the cell.\nACTION: {"action_type": "click", "parameters": {"x": 5, "y": 7}}'
    assert find_action_line(text, GUI_TOOLS) == ActionLine(tool="CLICK", arguments={"x": 5, "y": 7})


def test_flat_objects_fences_and_other_name_keys_are_read() -> None:
    flat = 'ACTION: {"action": "TYPING", "text": "Q4"}'
    assert find_action_line(flat, GUI_TOOLS) == ActionLine(tool="TYPING", arguments={"text": "Q4"})
    fenced = (
        '**Action:** ```json\n{"action_type": "HOTKEY",\n "parameters": {"keys": ["ctrl", "s"]}}'
        "\n```"
    )
    assert find_action_line(fenced, GUI_TOOLS) == ActionLine(
        tool="HOTKEY", arguments={"keys": ["ctrl", "s"]}
    )


def test_answers_without_or_with_bad_action_lines() -> None:
    assert find_action_line("RESULT: PASS", GUI_TOOLS) is None
    assert find_action_line("Action: CLICK", GUI_TOOLS) is None  # the ReAct form, not this one
    unknown = find_action_line('ACTION: {"action_type": "SWIPE"}', GUI_TOOLS)
    assert isinstance(unknown, ActionLineError)
    assert "'SWIPE'" in unknown.message
    assert "CLICK" in unknown.message
    broken = find_action_line('ACTION: {"action_type": "CLICK", }', GUI_TOOLS)
    assert isinstance(broken, ActionLineError)
    assert "not valid" in broken.message
    nameless = find_action_line('ACTION: {"parameters": {"x": 1}}', GUI_TOOLS)
    assert isinstance(nameless, ActionLineError)
    two = find_action_line(
        'ACTION: {"action_type": "CLICK"}\nACTION: {"action_type": "CLICK"}', GUI_TOOLS
    )
    assert isinstance(two, ActionLineError)
    assert "more than one" in two.message


def test_react_reads_the_action_line_as_an_action() -> None:
    text = 'Thought: the heading\nACTION: {"action_type": "CLICK", "parameters": {"x": 1, "y": 2}}'
    step = parse_react(text, GUI_TOOLS)
    assert step == ReactAction(thought="the heading", tool="CLICK", arguments={"x": 1, "y": 2})
    mixed = parse_react(text + "\nFinal Answer:\nRESULT: PASS", GUI_TOOLS)
    assert isinstance(mixed, ReactError)
    verdict = parse_react(
        'ACTION: {"action_type": "submit_verdict", "verdict": "FAIL", "confidence": "Low", '
        '"reasoning": "not saved"}',
        GUI_TOOLS,
    )
    assert isinstance(verdict, ReactFinal)
    assert verdict.verdict.verdict == "FAIL"
    # AJ-Bench's closing form still ends the run.
    final = parse_react("The title reads Q4 and the file is saved.\nResponse: [1]", GUI_TOOLS)
    assert isinstance(final, ReactFinal)
    assert final.verdict.verdict == "PASS"


def _observation_images(model: ScriptedModel, call: int) -> list[ContentImage]:
    message = model.calls[call].messages[-1]
    assert isinstance(message, ChatMessageUser)
    assert isinstance(message.content, list)
    text = message.content[0]
    assert isinstance(text, ContentText)
    assert text.text.startswith("Observation")
    return [block for block in message.content if isinstance(block, ContentImage)]


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["react", "agent"])
async def test_both_modes_run_an_action_line_and_show_the_screenshot(mode: str) -> None:
    mini = load_dataset(MINI)
    trajectory = mini.trajectories[WORD]
    task = mini.tasks[trajectory.task_id]
    model = ScriptedModel(
        replies=[
            reply(
                'Look at the last screen.\nACTION: {"action_type": "VIEW_TRAJECTORY_STEP", '
                '"parameters": {"step": 8}}'
            ),
            reply('ACTION: {"action_type": "VIEW_TRAJECTORY_STEP", "step": 99}'),
            reply("RESULT: PASS\nCONFIDENCE: High\nREASON: the heading reads Q4 and it is saved"),
        ]
    )
    box = await Toolbox.open(
        [trajectory_server(trajectory, task=task, base_dir=MINI / TRAJECTORIES_DIR)]
    )
    try:
        verdict = await judge_trajectory(
            task,
            trajectory,
            model=model,
            settings=JudgeSettings(mode=mode, limits=JudgeLimits(turn_limit=5)),
            base_dir=MINI / TRAJECTORIES_DIR,
            toolbox=box,
        )
    finally:
        await box.aclose()
    assert verdict.verdict == "PASS"
    assert [(c.name, c.arguments, c.is_error) for c in verdict.tool_calls] == [
        ("VIEW_TRAJECTORY_STEP", {"step": 8}, False),
        ("VIEW_TRAJECTORY_STEP", {"step": 99}, True),
    ]
    (image,) = _observation_images(model, 1)
    recorded = (MINI / TRAJECTORIES_DIR / f"{WORD}/step_8.png").read_bytes()
    assert base64.b64decode(image.data) == recorded
    error = model.calls[2].messages[-1]
    assert isinstance(error, ChatMessageUser)
    assert isinstance(error.content, str)  # no image with the error
    assert error.content.startswith("Observation (the tool reported an error):")
    assert "from 1 to 8" in error.content
