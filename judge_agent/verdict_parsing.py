"""Turning a judge model's answer into a verdict: the ``submit_verdict`` tool and the text formats.

Owns the structured way to submit (``SUBMIT_VERDICT_TOOL`` and ``parse_submit_arguments``), the
parser for the published free-text formats (``parse_verdict_text``), confidence parsing, and the
re-ask message sent once when an answer holds no verdict.

Text formats recognised (keys case-insensitive, markdown bold/italics, bullets, quotes and
brackets tolerated, trailing punctuation ignored):

- ``RESULT: PASS`` / ``RESULT: FAIL`` (also ``Verdict:``, ``Final verdict:``, ``Final result:``);
- ``Response: [1]`` / ``Response: [0]``;
- ``judgement: true`` / ``judgement: false`` (or ``judgment``), usually with ``CONFIDENCE:``;
- ``Result: 1`` / ``Result: 0`` with ``Reason:``;
- tags: ``<success>yes</success>`` (also ``<verdict>``, ``<result>``, ``<judgement>``);
- ``Final Answer: PASS`` (the ReAct protocol), and ``Final Answer: RESULT: PASS``;
- a line holding nothing but ``PASS`` or ``FAIL`` in capitals.

A key's value counts only when it is a single verdict word (``PASS``/``FAIL``, ``1``/``0``,
``true``/``false``, ``yes``/``no``, ``success``/``failure``, ...); ``Result: the view exists`` is
not a verdict. ``PASS``/``FAIL`` words may be followed by an explanation after a dash, colon or
parenthesis (``RESULT: FAIL - index.md is missing``).

Choosing among several: the LAST explicit verdict wins, so a draft verdict later corrected is
overridden. But the answer is refused (``None``) when the last verdict is itself ambiguous (an
echoed template such as ``RESULT: PASS or FAIL``) or when the paragraph holding it (the lines
between blank lines) also holds a verdict of the other value. ``None`` means "ask again, then
record INVALID" — never a silent ``FAIL``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from judge_agent.model import ToolInfo

__all__ = [
    "CONFIDENCE_LEVELS",
    "REASK_MESSAGE",
    "SUBMIT_TOOL_NAME",
    "SUBMIT_VERDICT_TOOL",
    "ParsedVerdict",
    "parse_confidence",
    "parse_submit_arguments",
    "parse_verdict_text",
]

CONFIDENCE_LEVELS: dict[str, float] = {"high": 0.9, "medium": 0.6, "low": 0.3}
"""Worded confidence levels and the numbers they stand for."""

SUBMIT_TOOL_NAME = "submit_verdict"

SUBMIT_VERDICT_TOOL = ToolInfo(
    name=SUBMIT_TOOL_NAME,
    description=(
        "Record your final verdict on the agent run and end the judgement. Call it once, after "
        "gathering evidence: verdict PASS only if the final state meets every explicit "
        "requirement of the task, else FAIL; confidence as High, Medium or Low (or a number "
        "from 0 to 1); reasoning naming the evidence that decided it."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "verdict": {
                "type": "string",
                "enum": ["PASS", "FAIL"],
                "description": "PASS if the task was accomplished, FAIL otherwise.",
            },
            "confidence": {
                "anyOf": [
                    {"type": "number", "minimum": 0, "maximum": 1},
                    {"type": "string", "enum": ["High", "Medium", "Low"]},
                ],
                "description": "How sure you are: High, Medium or Low, or a number from 0 to 1.",
            },
            "reasoning": {
                "type": "string",
                "description": "The evidence that decided the verdict, in a few sentences.",
            },
            "claims": {
                "type": "object",
                "additionalProperties": {"type": "string", "enum": ["PASS", "FAIL"]},
                "description": (
                    "Only when the prompt lists numbered claims to judge: each claim's number "
                    'with its own verdict, e.g. {"1": "PASS", "2": "FAIL"}.'
                ),
            },
        },
        "required": ["verdict", "confidence", "reasoning"],
        "additionalProperties": False,
    },
)
"""The tool the ``agent`` mode offers for submitting the verdict (added by the loop)."""

REASK_MESSAGE = (
    "I could not find a verdict in your last answer (or it gave conflicting ones). Reply again "
    "now, without calling any tool, and end your reply with exactly these three lines:\n"
    "RESULT: PASS or FAIL (write only one of the two words)\n"
    "CONFIDENCE: High, Medium or Low\n"
    "REASON: one to three sentences naming the evidence that decided it"
)
"""Sent once when an answer holds no parsable verdict; a second miss makes the run INVALID."""


class ParsedVerdict(BaseModel):
    """A verdict read from a judge's answer."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    verdict: Literal["PASS", "FAIL"]
    """The judge's decision."""

    confidence: float | None = None
    """The stated confidence mapped to 0..1 (High/Medium/Low: 0.9/0.6/0.3); None if not given."""

    reasoning: str | None = None
    """The judge's stated reason, or the text before its verdict when it gave no reason line."""

    format: str
    """Where the verdict came from: ``submit_verdict``, ``result``, ``verdict``, ``judgement``,
    ``response``, ``final_answer``, ``tag`` or ``bare``."""

    details: dict[str, JsonValue] = Field(default_factory=dict)
    """Further answers a judge method asks for besides the verdict (e.g. side effects,
    optimality and looping), by name; empty for most modes."""


# --- confidence -----------------------------------------------------------------------------

_NUMBER = re.compile(r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(%?)$")


def parse_confidence(value: object) -> float | None:
    """A confidence as a number in 0..1, or None when ``value`` is not a confidence.

    Accepts High/Medium/Low (any case, also ``High confidence``), numbers in 0..1, percentages
    (``85%``) and numbers in (1, 100], which are read as percentages.
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _scale(float(value))
    text = _strip_decoration(value).lower() if isinstance(value, str) else ""
    words = text.split()
    if words and words[0] in CONFIDENCE_LEVELS:
        return CONFIDENCE_LEVELS[words[0]]
    match = _NUMBER.match(text)
    if match is None:
        return None
    number = float(match.group(1))
    if match.group(2):
        return number / 100 if number <= 100 else None
    return _scale(number)


def _scale(number: float) -> float | None:
    if math.isnan(number) or number < 0:
        return None
    if number <= 1:
        return number
    if number <= 100:
        return number / 100
    return None


# --- submit_verdict -------------------------------------------------------------------------


def parse_submit_arguments(arguments: Mapping[str, JsonValue]) -> ParsedVerdict | str:
    """The verdict in a ``submit_verdict`` call, or an error message to return to the model.

    Only ``verdict`` is indispensable; a missing reasoning is recorded as None. A confidence that
    is present but not understood is an error (so the model can correct it).
    """
    raw_verdict = arguments.get("verdict")
    verdict = raw_verdict.strip().upper() if isinstance(raw_verdict, str) else None
    if verdict not in ("PASS", "FAIL"):
        return (
            f'\'verdict\' must be "PASS" or "FAIL"; got {raw_verdict!r}. Call submit_verdict again.'
        )
    confidence: float | None = None
    if "confidence" in arguments and arguments["confidence"] is not None:
        confidence = parse_confidence(arguments["confidence"])
        if confidence is None:
            return (
                "'confidence' must be High, Medium or Low, or a number from 0 to 1; got "
                f"{arguments['confidence']!r}. Call submit_verdict again."
            )
    raw_reasoning = arguments.get("reasoning")
    reasoning = raw_reasoning.strip() if isinstance(raw_reasoning, str) else None
    return ParsedVerdict(
        verdict="PASS" if verdict == "PASS" else "FAIL",
        confidence=confidence,
        reasoning=reasoning or None,
        format=SUBMIT_TOOL_NAME,
    )


# --- free text ------------------------------------------------------------------------------

_PASS_WORDS = frozenset(
    {"pass", "passed", "1", "true", "yes", "success", "successful", "succeeded"}
)
_FAIL_WORDS = frozenset({"fail", "failed", "0", "false", "no", "failure", "unsuccessful"})
# Words that may be followed by an explanation on the same line.
_EXPLAINABLE = frozenset({"pass", "passed", "fail", "failed"})

_VERDICT_KEYS: dict[str, str] = {
    "result": "result",
    "final result": "result",
    "overall result": "result",
    "task result": "result",
    "verdict": "verdict",
    "final verdict": "verdict",
    "judgement": "judgement",
    "judgment": "judgement",
    "final judgement": "judgement",
    "final judgment": "judgement",
    "response": "response",
    "final answer": "final_answer",
}
_CONFIDENCE_KEYS = ("confidence", "confidence level", "confidence score")
_REASON_KEYS = (
    "reason",
    "reasoning",
    "detailed_reasoning",
    "detailed reasoning",
    "explanation",
    "justification",
    "rationale",
)


def _key_alternation(keys: tuple[str, ...] | list[str]) -> str:
    ordered = sorted(keys, key=len, reverse=True)
    return "|".join(re.escape(key).replace(r"\ ", r"[ _]+") for key in ordered)


_PREFIX = r"^[ \t>]*(?:[-*+•]\s+|\d+[.)]\s+|#{1,6}\s*)?[*_`\"']*\s*"
_SEPARATOR = r"\s*[*_`\"']*\s*[:=\uff1a]\s*"
_FINAL_ANSWER_PREFIX = r"(?:final[ _]+answer\s*[*_`]*\s*:\s*[*_`]*\s*)?"
_VERDICT_LINE = re.compile(
    _PREFIX
    + _FINAL_ANSWER_PREFIX
    + rf"(?P<key>{_key_alternation(list(_VERDICT_KEYS))}){_SEPARATOR}(?P<value>.*)$",
    re.IGNORECASE,
)
_CONFIDENCE_LINE = re.compile(
    _PREFIX + rf"(?P<key>{_key_alternation(_CONFIDENCE_KEYS)}){_SEPARATOR}(?P<value>.*)$",
    re.IGNORECASE,
)
_REASON_LINE = re.compile(
    _PREFIX + rf"(?P<key>{_key_alternation(_REASON_KEYS)}){_SEPARATOR}(?P<value>.*)$",
    re.IGNORECASE,
)
_BARE_LINE = re.compile(r"^[ \t>]*[*_`]*\s*(?P<value>PASS|FAIL)\s*[*_`]*\s*[.!]?\s*$")
_TAG = re.compile(
    r"<(?P<tag>success|verdict|result|judgement|judgment)>\s*(?P<value>.*?)\s*</(?P=tag)>",
    re.IGNORECASE | re.DOTALL,
)
_CHOICE = re.compile(r"^\W*(\w+)\W*?\s*(?:\bor\b|\band\b|/|\|)\s*\W*(\w+)\W*$", re.IGNORECASE)
_FIRST_WORD = re.compile(r"^[\s\[\(\"'<{]*(\w+)(?P<rest>.*)$", re.DOTALL)
_EXPLANATION = re.compile(r"^\s*(?:[-\u2013\u2014:;,(]|\.\s)")

Polarity = Literal["PASS", "FAIL", "AMBIGUOUS"]


def _strip_decoration(value: str) -> str:
    return value.strip().strip("*_`[]()\"',").strip()


def _polarity(word: str) -> Literal["PASS", "FAIL"] | None:
    lowered = word.lower()
    if lowered in _PASS_WORDS:
        return "PASS"
    if lowered in _FAIL_WORDS:
        return "FAIL"
    return None


def _read_value(raw: str) -> Polarity | None:
    """What a key's value says: a verdict, an echoed choice (AMBIGUOUS), or nothing."""
    value = re.sub(r"[*_`]", "", raw).strip()
    choice = _CHOICE.match(value)
    if choice is not None:
        first, second = _polarity(choice.group(1)), _polarity(choice.group(2))
        if first is not None and second is not None and first != second:
            return "AMBIGUOUS"
    match = _FIRST_WORD.match(value)
    if match is None:
        return None
    word, rest = match.group(1), match.group("rest")
    polarity = _polarity(word)
    if polarity is None:
        return None
    rest_clean = rest.strip().rstrip(".!;,").strip()
    rest_clean = rest_clean.strip("[]()\"'<>{} ").strip().rstrip(".!;,")
    if not rest_clean:
        return polarity
    if word.lower() in _EXPLAINABLE and _EXPLANATION.match(rest.lstrip("]\"')>}")):
        return polarity
    return None


@dataclass(frozen=True)
class _Marker:
    line: int
    polarity: Polarity
    format: str


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position)


def _markers(text: str, lines: list[str]) -> list[_Marker]:
    found: list[_Marker] = []
    for number, line in enumerate(lines):
        match = _VERDICT_LINE.match(line)
        if match is not None:
            polarity = _read_value(match.group("value"))
            if polarity is not None:
                key = re.sub(r"[ _]+", " ", match.group("key").lower())
                found.append(_Marker(number, polarity, _VERDICT_KEYS[key]))
            continue
        bare = _BARE_LINE.match(line)
        if bare is not None:
            found.append(
                _Marker(number, "PASS" if bare.group("value") == "PASS" else "FAIL", "bare")
            )
    for tag in _TAG.finditer(text):
        polarity = _read_value(tag.group("value"))
        if polarity is not None:
            found.append(_Marker(_line_of(text, tag.start()), polarity, "tag"))
    found.sort(key=lambda marker: marker.line)
    return found


def _paragraph_bounds(lines: list[str], line: int) -> tuple[int, int]:
    start = line
    while start > 0 and lines[start - 1].strip():
        start -= 1
    end = line
    while end + 1 < len(lines) and lines[end + 1].strip():
        end += 1
    return start, end


def _is_key_line(line: str) -> bool:
    return any(
        pattern.match(line) is not None
        for pattern in (_VERDICT_LINE, _CONFIDENCE_LINE, _REASON_LINE)
    ) or bool(_TAG.search(line))


def _reason_from(lines: list[str], first: int) -> str | None:
    match = _REASON_LINE.match(lines[first])
    if match is None:
        return None
    parts = [match.group("value")]
    for line in lines[first + 1 :]:
        if _is_key_line(line):
            break
        parts.append(line)
    reason = "\n".join(parts).strip().strip("*_`").strip()
    return reason or None


def parse_verdict_text(text: str) -> ParsedVerdict | None:
    """The verdict stated in ``text``, or None when there is none or it is ambiguous.

    See the module docstring for the formats and the last-verdict-wins / conflict rules.
    """
    if not text or not text.strip():
        return None
    lines = text.splitlines()
    markers = _markers(text, lines)
    if not markers:
        return None
    last = markers[-1]
    if last.polarity == "AMBIGUOUS":
        return None
    start, end = _paragraph_bounds(lines, last.line)
    in_block = [marker for marker in markers if start <= marker.line <= end]
    if any(marker.polarity != last.polarity for marker in in_block):
        return None

    # Confidence and reason: from the final paragraph or anything after it; the last one wins.
    confidence: float | None = None
    reason: str | None = None
    for number in range(start, len(lines)):
        confidence_match = _CONFIDENCE_LINE.match(lines[number])
        if confidence_match is not None:
            parsed = parse_confidence(confidence_match.group("value"))
            if parsed is not None:
                confidence = parsed
        found_reason = _reason_from(lines, number)
        if found_reason is not None:
            reason = found_reason
    if reason is None:
        reason = "\n".join(lines[:start]).strip() or None
    return ParsedVerdict(
        verdict="PASS" if last.polarity == "PASS" else "FAIL",
        confidence=confidence,
        reasoning=reason,
        format=last.format,
    )
