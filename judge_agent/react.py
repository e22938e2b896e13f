"""The ReAct text protocol: reading one model answer as a tool action or a final verdict.

Owns ``parse_react_response`` (alias ``parse_react``) and ``format_observation``. The protocol,
as the ``react`` prompts describe it (``prompts/tools_react.md``), is one action per answer::

    Thought: <reasoning>
    Action: <tool name>
    Action Input: {"json": "object"}

or a final answer::

    Thought: <summary>
    Final Answer:
    RESULT: PASS
    CONFIDENCE: High
    REASON: ...

Tolerated: markdown bold around the keys, code fences around the JSON, text after the JSON
object, a hallucinated ``Observation:`` (it and everything after it are ignored), a missing
``Action Input`` (empty arguments), and an ``Action: submit_verdict`` whose input holds the verdict.
An answer with no ``Action`` and no ``Final Answer`` but an explicit verdict line counts as final.
AJ-Bench's ``ACTION: {"action_type": ..., "parameters": {...}}`` line (``judge_agent.action_line``)
is an action too: the action type names the tool, the parameters are its arguments.
Everything else yields a ``ReactError`` whose ``message`` is meant to be sent back to the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection

from pydantic import BaseModel, ConfigDict, JsonValue

from judge_agent.action_line import ActionLine, ActionLineError, find_action_line
from judge_agent.verdict_parsing import (
    SUBMIT_TOOL_NAME,
    ParsedVerdict,
    parse_submit_arguments,
    parse_verdict_text,
)

__all__ = [
    "ReactAction",
    "ReactError",
    "ReactFinal",
    "format_observation",
    "parse_react",
    "parse_react_response",
]

PROTOCOL_REMINDER = (
    "Reply with exactly one of these two forms.\n"
    "To use a tool:\n"
    "Thought: <what you want to check and why>\n"
    "Action: <one tool name from your instructions>\n"
    'Action Input: <the arguments as one JSON object, e.g. {"step": 3}>\n'
    "To finish:\n"
    "Thought: <the evidence in brief>\n"
    "Final Answer:\n"
    "RESULT: PASS or FAIL (only one of the two words)\n"
    "CONFIDENCE: High, Medium or Low\n"
    "REASON: <the evidence that decided it>"
)
"""Appended to every ``ReactError`` message, so the model sees the expected shape again."""


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ReactAction(_Frozen):
    """The model asks for one tool call."""

    thought: str | None = None
    """The text under ``Thought:`` (or before ``Action:`` when unlabelled)."""

    tool: str
    """The tool's name as written after ``Action:``."""

    arguments: dict[str, JsonValue]
    """The decoded ``Action Input`` object (empty when the input was absent or empty)."""


class ReactFinal(_Frozen):
    """The model gives its verdict."""

    thought: str | None = None
    """The text under ``Thought:``, if any."""

    verdict: ParsedVerdict
    """The verdict read from the final answer."""


class ReactError(_Frozen):
    """The answer follows neither form; ``message`` says why and how to answer instead."""

    message: str
    """Text to send back to the model as the next user message."""


_KEY = r"^[ \t>]*[*_`]*\s*{key}\s*[*_`]*\s*:[*_`]*[ \t]*"
_THOUGHT = re.compile(_KEY.format(key="thought"), re.IGNORECASE | re.MULTILINE)
_ACTION = re.compile(_KEY.format(key="action") + r"(?P<name>[^\n]*)$", re.IGNORECASE | re.MULTILINE)
_ACTION_INPUT = re.compile(_KEY.format(key=r"action[ _]+input"), re.IGNORECASE | re.MULTILINE)
_OBSERVATION = re.compile(_KEY.format(key="observation"), re.IGNORECASE | re.MULTILINE)
_FINAL = re.compile(_KEY.format(key=r"final[ _]+answer"), re.IGNORECASE | re.MULTILINE)
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")
_FENCE = re.compile(r"```[A-Za-z0-9_-]*")


def _error(problem: str) -> ReactError:
    return ReactError(message=f"{problem}\n\n{PROTOCOL_REMINDER}")


def _thought(text: str, end: int) -> str | None:
    """The thought: after ``Thought:`` (or from the start) up to ``end``."""
    head = text[:end]
    labels = list(_THOUGHT.finditer(head))
    thought = head[labels[-1].end() :] if labels else head
    return thought.strip() or None


def _decode_input(raw: str) -> dict[str, JsonValue] | str:
    """The JSON object in ``raw`` (code fences and trailing text tolerated), or a problem."""
    text = _FENCE.sub("", raw).strip()
    if not text:
        return {}
    start = text.find("{")
    if start < 0:
        shown = text if len(text) <= 200 else text[:200] + "…"
        return f"The Action Input is not a JSON object: {shown!r}."
    if text[:start].strip():
        # Something other than the object comes first (e.g. a bare string or list).
        shown = text if len(text) <= 200 else text[:200] + "…"
        return f"The Action Input must be a single JSON object; got {shown!r}."
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as error:
        return f"The Action Input is not valid JSON ({error.msg} at character {error.pos})."
    if not isinstance(value, dict):
        return "The Action Input must be a JSON object."
    decoded: dict[str, JsonValue] = value
    return decoded


def _final(text: str, start: int) -> ReactFinal | ReactError:
    verdict = parse_verdict_text(text[start:])
    if verdict is None:
        return _error(
            "Your Final Answer has no clear verdict: it must contain one line "
            "'RESULT: PASS' or 'RESULT: FAIL'."
        )
    return ReactFinal(thought=_thought(text, start), verdict=verdict)


def _clean_name(raw: str) -> str:
    return raw.strip().strip("*_`\"'[]").strip()


def _action(
    text: str, action: re.Match[str], tool_names: Collection[str] | None
) -> ReactAction | ReactFinal | ReactError:
    name = _clean_name(action.group("name"))
    rest = text[action.end() :]
    if not name:
        # Tolerate the name on the line after "Action:".
        following = rest.lstrip("\n").split("\n", 1)
        if following[0].strip() and not _ACTION_INPUT.match(following[0]):
            name = _clean_name(following[0])
            rest = following[1] if len(following) > 1 else ""
    problem: str | None = None
    if not name:
        problem = "The 'Action:' line does not name a tool."
    elif not _TOOL_NAME.match(name):
        problem = (
            f"The 'Action:' line must hold only a tool name; got {name!r}. Put the arguments "
            "in 'Action Input:' as a JSON object."
        )
    elif tool_names is not None and name not in tool_names and name != SUBMIT_TOOL_NAME:
        problem = (
            f"There is no tool named {name!r}. The tools are: {', '.join(sorted(tool_names))}."
        )
    if problem is not None:
        return _error(problem)

    action_input = _ACTION_INPUT.search(rest)
    arguments = _decode_input(rest[action_input.end() :]) if action_input is not None else {}
    if isinstance(arguments, str):
        return _error(arguments)
    thought = _thought(text, action.start())
    if name == SUBMIT_TOOL_NAME:
        submitted = parse_submit_arguments(arguments)
        if isinstance(submitted, str):
            return _error(submitted)
        return ReactFinal(thought=thought, verdict=submitted)
    return ReactAction(thought=thought, tool=name, arguments=arguments)


def parse_react_response(
    text: str, tool_names: Collection[str] | None = None
) -> ReactAction | ReactFinal | ReactError:
    """Read one ReAct answer. ``tool_names``, when given, are the tools the model may name."""
    observation = _OBSERVATION.search(text)
    if observation is not None:
        text = text[: observation.start()]
    # ``ACTION: {...}`` lines are AJ-Bench's form; the other Action lines name a tool.
    actions = [m for m in _ACTION.finditer(text) if not _is_json_action(m)]
    final = _FINAL.search(text)
    names = None if tool_names is None else [*tool_names, SUBMIT_TOOL_NAME]
    line = find_action_line(text, names)
    if line is not None:
        if actions or final is not None:
            return _error(
                "Your answer mixes an ACTION line with another Action or a Final Answer. Give "
                "one action per answer, or only the Final Answer."
            )
        return _from_action_line(text, line)
    return _named_action_or_final(text, actions, final, tool_names)


def _named_action_or_final(
    text: str,
    actions: list[re.Match[str]],
    final: re.Match[str] | None,
    tool_names: Collection[str] | None,
) -> ReactAction | ReactFinal | ReactError:
    if actions and final is not None:
        return _error(
            "Your answer contains both an Action and a Final Answer. Give one action and wait for "
            "its Observation, or give only the Final Answer."
        )
    if final is not None:
        return _final(text, final.start())
    if not actions:
        verdict = parse_verdict_text(text)
        if verdict is not None:
            return ReactFinal(thought=None, verdict=verdict)
        return _error("Your answer has neither an 'Action:' line nor a 'Final Answer:'.")
    if len(actions) > 1:
        return _error(
            "Your answer contains more than one Action. Give exactly one action per answer and "
            "wait for its Observation."
        )
    return _action(text, actions[0], tool_names)


def _is_json_action(match: re.Match[str]) -> bool:
    return match.group("name").strip().lstrip("*_").startswith(("{", "```"))


def _from_action_line(
    text: str, line: ActionLine | ActionLineError
) -> ReactAction | ReactFinal | ReactError:
    if isinstance(line, ActionLineError):
        return _error(line.message)
    first = _ACTION.search(text)
    thought = _thought(text, first.start()) if first is not None else None
    if line.tool == SUBMIT_TOOL_NAME:
        submitted = parse_submit_arguments(line.arguments)
        if isinstance(submitted, str):
            return _error(submitted)
        return ReactFinal(thought=thought, verdict=submitted)
    return ReactAction(thought=thought, tool=line.tool, arguments=line.arguments)


parse_react = parse_react_response
"""Short alias of ``parse_react_response``."""


def format_observation(tool_result_text: str, is_error: bool) -> str:
    """A tool result as the next user message of the ReAct conversation."""
    body = tool_result_text.strip() or "(the tool returned no text)"
    if is_error:
        return f"Observation (the tool reported an error):\n{body}"
    return f"Observation:\n{body}"
