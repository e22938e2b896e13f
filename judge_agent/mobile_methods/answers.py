"""Reading the methods' answers: binary results, yes/no lines, tagged answers, per-state lists.

Each reader returns None when the answer does not hold what was asked (the method re-asks once,
then records ``INVALID``); the runtime's general verdict parser
(``judge_agent.verdict_parsing.parse_verdict_text``) is tried as well, so an answer in another
published format still counts.
"""

from __future__ import annotations

import re

from pydantic import JsonValue

from judge_agent.verdict_parsing import ParsedVerdict, parse_confidence, parse_verdict_text

__all__ = ["parse_numbered_list", "parse_state_marks", "parse_tagged", "parse_yes_no"]

_YES = {"yes", "y", "true", "1", "achieved", "success", "successful", "pass"}
_NO = {"no", "n", "false", "0", "not achieved", "failure", "fail", "failed"}


def _word(value: str) -> bool | None:
    text = value.strip().strip("*_`.\"'[]()").strip().lower()
    if text in _YES:
        return True
    if text in _NO:
        return False
    return None


def parse_yes_no(text: str, key: str = "Answer") -> ParsedVerdict | None:
    """``<key>: yes|no`` (the last such line wins; a reason after it is kept), else any verdict
    the general parser reads."""
    pattern = re.compile(rf"^\W*{re.escape(key)}\W*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
    found = None
    for match in pattern.finditer(text):
        head = re.split(r"[\s,;:.-]", match.group(1).strip().strip("*_`"), maxsplit=1)[0]
        value = _word(head)
        if value is not None:
            found = (value, match)
    if found is None:
        return parse_verdict_text(text)
    value, match = found
    reason = text[: match.start()].strip() or text[match.end() :].strip() or None
    return ParsedVerdict(verdict="PASS" if value else "FAIL", reasoning=reason, format="answer")


def parse_tagged(text: str, tags: dict[str, str]) -> tuple[dict[str, str], str | None]:
    """The text inside each ``<tag>...</tag>`` (the last occurrence), by name; and the text
    before the first tag (the reasoning)."""
    found: dict[str, str] = {}
    first: int | None = None
    for name, tag in tags.items():
        matches = list(re.finditer(rf"<{tag}>\s*(.*?)\s*</{tag}>", text, re.IGNORECASE | re.DOTALL))
        if matches:
            found[name] = matches[-1].group(1).strip()
            first = matches[0].start() if first is None else min(first, matches[0].start())
    reasoning = text[:first].strip() if first else None
    return found, reasoning or None


def yes_no_value(value: str) -> bool | None:
    """``yes``/``no`` (and the other spellings of a binary answer) as a bool."""
    return _word(value)


def parse_numbered_list(text: str) -> list[str]:
    """The items of a numbered or bulleted list (``1. ...``, ``2) ...``, ``- ...``)."""
    items = []
    for line in text.splitlines():
        match = re.match(r"^\s*(?:\d+[.)]|[-*•])\s+(.+?)\s*$", line)
        if match:
            items.append(match.group(1))
    return items


def parse_state_marks(text: str, count: int) -> dict[int, bool] | None:
    """``State N: yes|no`` lines for states 1..count; None unless every state is answered."""
    marks: dict[int, bool] = {}
    for match in re.finditer(
        r"^\W*State\s*(\d+)\W*[:=-]\s*(\S+)", text, re.IGNORECASE | re.MULTILINE
    ):
        number = int(match.group(1))
        value = _word(match.group(2))
        if 1 <= number <= count and value is not None:
            marks[number] = value
    return marks if len(marks) == count else None


def confidence_of(text: str) -> float | None:
    """The ``Confidence: ...`` line's value mapped to 0..1, if any."""
    match = re.search(r"^\W*Confidence\W*:\s*(.+?)\s*$", text, re.IGNORECASE | re.MULTILINE)
    return parse_confidence(match.group(1).strip("*_` ")) if match else None


def details_value(value: str) -> JsonValue:
    """A tagged answer as a bool, an int or the text itself."""
    as_bool = _word(value)
    if as_bool is not None and not value.strip().isdigit():
        return as_bool
    digits = re.match(r"^\s*(\d+)", value)
    return int(digits.group(1)) if digits else value
