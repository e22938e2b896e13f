"""Verdicts on each numbered claim, when a judge checks all claims of an answer in one run.

With ``--items together`` a search trajectory's claims are listed and numbered in the prompt, and
the judge gives one verdict per claim besides its overall verdict: a line per claim in its answer
(``Claim 2: FAIL``, ``Claim 2: [0]``, ``Claim 2: PASS - the table says so``) or the ``claims``
argument of ``submit_verdict`` (``{"2": "FAIL"}``). The latest answer that holds any claim verdict
is the one read; within it the last line for a claim wins. A claim without a verdict is
``INVALID``, never a silent ``FAIL``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import JsonValue

from judge_agent.model import ChatMessage, ChatMessageAssistant
from judge_agent.verdict import VerdictValue
from judge_agent.verdict_parsing import SUBMIT_TOOL_NAME

__all__ = ["CLAIMS_ARGUMENT", "claim_verdicts", "parse_claim_lines", "parse_claims_argument"]

CLAIMS_ARGUMENT = "claims"
"""The ``submit_verdict`` argument holding per-claim verdicts, by claim number."""

_CLAIM_LINE = re.compile(
    r"^[\s>*_`#-]*(?:claim|item)\s*#?\s*(?P<number>\d+)\s*[*_`]*\s*[:=\-]\s*[*_`]*\s*"
    r"\[?\s*(?P<value>pass(?:ed)?|fail(?:ed)?|1|0|true|false|correct|incorrect)\b\s*\]?",
    re.IGNORECASE | re.MULTILINE,
)
_PASS = frozenset({"pass", "passed", "1", "true", "correct"})


def _value(word: str) -> VerdictValue:
    return "PASS" if word.lower() in _PASS else "FAIL"


def parse_claim_lines(text: str) -> dict[int, VerdictValue]:
    """Claim number to verdict, from ``Claim N: PASS|FAIL|[1]|[0]`` lines (last line wins)."""
    return {
        int(match.group("number")): _value(match.group("value"))
        for match in _CLAIM_LINE.finditer(text or "")
    }


def parse_claims_argument(value: JsonValue) -> dict[int, VerdictValue]:
    """Claim number to verdict from ``submit_verdict``'s ``claims`` argument; entries that are
    not a number with a PASS/FAIL word are ignored (their claims stay without a verdict)."""
    found: dict[int, VerdictValue] = {}
    if not isinstance(value, dict):
        return found
    for key, word in value.items():
        number = key.strip().lstrip("#")
        if not number.isdigit() or not isinstance(word, str):
            continue
        if word.strip().lower() in _PASS | {"fail", "failed", "0", "false", "incorrect"}:
            found[int(number)] = _value(word.strip())
    return found


def _from_message(message: ChatMessageAssistant) -> dict[int, VerdictValue]:
    found = parse_claim_lines(message.content)
    for call in message.tool_calls:
        if call.name == SUBMIT_TOOL_NAME and CLAIMS_ARGUMENT in call.arguments:
            found.update(parse_claims_argument(call.arguments[CLAIMS_ARGUMENT]))
    return found


def claim_verdicts(
    messages: Sequence[ChatMessage], item_ids: Sequence[str]
) -> dict[str, VerdictValue]:
    """Each claim's verdict (by item id; claims are numbered from 1 in ``item_ids`` order) from
    the latest assistant answer that holds any; claims it leaves out are ``INVALID``."""
    found: dict[int, VerdictValue] = {}
    for message in reversed(messages):
        if isinstance(message, ChatMessageAssistant):
            found = _from_message(message)
            if found:
                break
    return {
        item_id: found.get(number, "INVALID") for number, item_id in enumerate(item_ids, start=1)
    }
