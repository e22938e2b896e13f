"""The ReAct text protocol: actions, final answers and the errors sent back to the model."""

from __future__ import annotations

import pytest
from pydantic import JsonValue

from judge_agent.react import (
    ReactAction,
    ReactError,
    ReactFinal,
    format_observation,
    parse_react,
    parse_react_response,
)

TOOLS = {"VIEW_TRAJECTORY_STEP", "read_text_file", "execute_sql", "list_allowed_directories"}

ACTIONS: list[tuple[str, str, dict[str, JsonValue], str | None]] = [
    # (answer, tool, arguments, thought)
    (
        'Thought: check the last step\nAction: VIEW_TRAJECTORY_STEP\nAction Input: {"step": 5}',
        "VIEW_TRAJECTORY_STEP",
        {"step": 5},
        "check the last step",
    ),
    (
        "Thought: read it\nAction: read_text_file\nAction Input:\n```json\n"
        '{"path": "/data/index.md"}\n```',
        "read_text_file",
        {"path": "/data/index.md"},
        "read it",
    ),
    (
        'Action: execute_sql\nAction Input: {"sql": "SELECT 1"} I expect one row back.',
        "execute_sql",
        {"sql": "SELECT 1"},
        None,
    ),
    (
        "I should list the roots first.\nAction: list_allowed_directories\nAction Input: {}",
        "list_allowed_directories",
        {},
        "I should list the roots first.",
    ),
    (
        "Thought: no arguments needed\nAction: list_allowed_directories",
        "list_allowed_directories",
        {},
        "no arguments needed",
    ),
    (
        '**Thought:** look\n**Action:** `execute_sql`\n**Action Input:** {"sql": "SELECT 2"}',
        "execute_sql",
        {"sql": "SELECT 2"},
        "look",
    ),
    (
        "Thought: multi-line\nAction: execute_sql\n"
        'Action Input: {\n  "sql": "SELECT *\\nFROM t"\n}',
        "execute_sql",
        {"sql": "SELECT *\nFROM t"},
        "multi-line",
    ),
    (
        'Thought: x\nAction:\nVIEW_TRAJECTORY_STEP\nAction Input: {"step": 1}',
        "VIEW_TRAJECTORY_STEP",
        {"step": 1},
        "x",
    ),
    (
        # A hallucinated observation and everything after it are ignored.
        'Thought: x\nAction: VIEW_TRAJECTORY_STEP\nAction Input: {"step": 2}\n'
        "Observation: step 2 shows the file\nThought: so\nAction: execute_sql\nFinal Answer: PASS",
        "VIEW_TRAJECTORY_STEP",
        {"step": 2},
        "x",
    ),
]


@pytest.mark.parametrize(("answer", "tool", "arguments", "thought"), ACTIONS)
def test_actions_are_read(
    answer: str, tool: str, arguments: dict[str, JsonValue], thought: str | None
) -> None:
    step = parse_react_response(answer, TOOLS)
    assert step == ReactAction(thought=thought, tool=tool, arguments=arguments)


FINALS: list[tuple[str, str, float | None]] = [
    (
        "Thought: the file is right\nFinal Answer:\nRESULT: PASS\nCONFIDENCE: High\nREASON: ok",
        "PASS",
        0.9,
    ),
    ("Thought: wrong name\nFinal Answer: FAIL", "FAIL", None),
    ("Final Answer: RESULT: FAIL\nCONFIDENCE: 0.7", "FAIL", 0.7),
    ("**Final Answer:**\n**RESULT:** PASS", "PASS", None),
    # No Final Answer label, but an explicit verdict and no action.
    ("The evidence is clear.\n\nRESULT: FAIL\nCONFIDENCE: Medium", "FAIL", 0.6),
    # A submit_verdict action is accepted as the final answer.
    (
        'Thought: done\nAction: submit_verdict\nAction Input: {"verdict": "PASS", '
        '"confidence": "Low", "reasoning": "fine"}',
        "PASS",
        0.3,
    ),
]


@pytest.mark.parametrize(("answer", "verdict", "confidence"), FINALS)
def test_final_answers_are_read(answer: str, verdict: str, confidence: float | None) -> None:
    step = parse_react_response(answer, TOOLS)
    assert isinstance(step, ReactFinal), step
    assert step.verdict.verdict == verdict
    assert step.verdict.confidence == confidence


def test_the_thought_of_a_final_answer_is_kept() -> None:
    step = parse_react("Thought: the view drops two rows\nFinal Answer:\nRESULT: FAIL")
    assert isinstance(step, ReactFinal)
    assert step.thought == "the view drops two rows"
    assert step.verdict.reasoning is None


ERRORS: list[tuple[str, str]] = [
    # (answer, part of the message)
    ("", "neither an 'Action:' line nor a 'Final Answer:'"),
    ("I think the agent did fine.", "neither an 'Action:' line nor a 'Final Answer:'"),
    ("Action: read_text_file\nAction Input: path=/data/index.md", "is not a JSON object"),
    ("Action: read_text_file\nAction Input: {'path': '/data'}", "is not valid JSON"),
    ('Action: read_text_file\nAction Input: {"path": ', "is not valid JSON"),
    ('Action: read_text_file\nAction Input: ["/data"]', "is not a JSON object"),
    ('Action: read_text_file\nAction Input: "/data/x"', "is not a JSON object"),
    ('Action: read_text_file\nAction Input: 5 {"path": "x"}', "must be a single JSON object"),
    ('Action: read_text_file(path="/x")\nAction Input: {}', "must hold only a tool name"),
    ("Action:\nAction Input: {}", "does not name a tool"),
    ('Action: write_file\nAction Input: {"path": "x"}', "There is no tool named 'write_file'"),
    (
        'Action: execute_sql\nAction Input: {"sql": "SELECT 1"}\n'
        'Action: execute_sql\nAction Input: {"sql": "SELECT 2"}',
        "more than one Action",
    ),
    (
        'Action: execute_sql\nAction Input: {"sql": "SELECT 1"}\nFinal Answer: PASS',
        "both an Action and a Final Answer",
    ),
    ("Final Answer: I believe it went well.", "no clear verdict"),
    ("Final Answer:\nRESULT: PASS or FAIL", "no clear verdict"),
    (
        'Action: submit_verdict\nAction Input: {"verdict": "MAYBE"}',
        "'verdict' must be",
    ),
]


@pytest.mark.parametrize(("answer", "problem"), ERRORS)
def test_malformed_answers_get_a_message_for_the_model(answer: str, problem: str) -> None:
    step = parse_react_response(answer, TOOLS)
    assert isinstance(step, ReactError), step
    assert problem in step.message
    # Every message repeats the protocol, so the model can recover.
    assert "Action Input:" in step.message
    assert "Final Answer:" in step.message


def test_without_a_tool_list_any_well_formed_name_is_accepted() -> None:
    step = parse_react_response('Action: write_file\nAction Input: {"path": "x"}')
    assert step == ReactAction(thought=None, tool="write_file", arguments={"path": "x"})


def test_parse_react_is_the_same_function() -> None:
    assert parse_react is parse_react_response


@pytest.mark.parametrize(
    ("text", "is_error", "expected"),
    [
        ("3 rows", False, "Observation:\n3 rows"),
        ("  padded\n", False, "Observation:\npadded"),
        ("", False, "Observation:\n(the tool returned no text)"),
        ("no such file", True, "Observation (the tool reported an error):\nno such file"),
    ],
)
def test_observations(text: str, is_error: bool, expected: str) -> None:
    assert format_observation(text, is_error) == expected


def test_an_observation_is_not_mistaken_for_an_action_or_a_verdict() -> None:
    # The harness's own observation text, echoed back, must not parse as an action.
    echoed = format_observation("Action: execute_sql\nRESULT: PASS", False)
    assert isinstance(parse_react_response(echoed, TOOLS), ReactError)
