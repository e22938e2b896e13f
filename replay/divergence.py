"""Whether a step that did not replay as recorded could change the end state.

A replayed output that differs from the recorded one is not always a different state: the
server may word or lay out the same answer differently, or the call may have only read. Replay
classifies every diverged or failed step as one of:

* ``presentation``: the difference is only in what the agent was shown. The tool cannot write;
  or the call failed both when recorded and when replayed (a failed call commits nothing); or
  the output text is the same and only the error flag differs; or the replayed call wrote
  nothing and its SQL is a query, so the recorded call, with the same SQL, wrote nothing either;
  or it was recorded failing and the replay wrote nothing.
* ``state``: the call may have left the state differently: a write that succeeded on one side
  only, or that succeeded on both sides with different outcomes (rows affected, rows returned).

The rule is kind-agnostic: it reads the tool's ``writes`` flag and, when the tool can tell,
whether the replayed call wrote (``ToolResult.wrote``). Whether SQL is a plain query is judged
from its statements' first words (``SELECT``, ``VALUES``, ``TABLE``, ``SHOW``, ``EXPLAIN``
without ``ANALYZE``, ``WITH`` without a data-modifying verb); anything else counts as a write.
"""

from __future__ import annotations

import re
from typing import Literal

from dataset.models import Step
from mcp_servers.results import ToolResult
from mcp_servers.sql.statements import split_statements, sql_text

StepEffect = Literal["presentation", "state"]
"""What a diverged or failed step's difference can affect."""

_ERROR_TEXT = re.compile(r"^\s*(Error\b|An error occurred while running the tool)")
_LEADING_COMMENTS = re.compile(r"^(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.DOTALL)
_QUERY_START = re.compile(r"^(SELECT|VALUES|TABLE|SHOW|EXPLAIN|WITH)\b", re.IGNORECASE)
_WRITING_WORD = re.compile(
    r"\b(INSERT|UPDATE|DELETE|MERGE|INTO|ANALY[SZ]E|COPY|NEXTVAL|SETVAL|LOCK|FOR\s+UPDATE|"
    r"FOR\s+SHARE)\b",
    re.IGNORECASE,
)


def recorded_failure(step: Step) -> bool:
    """Whether the recorded call failed: flagged as an error, or answered with an error text
    (postgres-mcp reports failures as ``Error: ...`` without the flag)."""
    text = step.observation.text if step.observation else ""
    return step.is_error or bool(_ERROR_TEXT.match(text or ""))


def is_query(sql: str) -> bool:
    """Whether every statement of ``sql`` only reads (judged from its words; see above)."""
    spans = split_statements(sql)
    if not spans:
        return False
    for start, end in spans:
        statement = _LEADING_COMMENTS.sub("", sql[start:end], count=1)
        if not _QUERY_START.match(statement) or _WRITING_WORD.search(statement):
            return False
    return True


def classify_step(
    step: Step,
    *,
    writes: bool,
    replayed: ToolResult | None,
    same_text: bool = False,
) -> tuple[StepEffect, str]:
    """The effect of a diverged or failed step and why (``replayed`` is None when the call
    could not run at all)."""
    failed_then = recorded_failure(step)
    failed_now = replayed is None or replayed.is_error
    wrote_nothing = replayed is not None and replayed.wrote is False
    arguments = getattr(step.action, "arguments", {})
    query = is_query(sql_text(arguments if isinstance(arguments, dict) else {}))
    rules: list[tuple[bool, StepEffect, str]] = [
        (same_text, "presentation", "same output; only the error flag differs"),
        (not writes, "presentation", "the tool only reads"),
        (
            failed_then and failed_now,
            "presentation",
            "failed when recorded and when replayed: neither committed anything",
        ),
        (
            failed_then and wrote_nothing,
            "presentation",
            "recorded as failing; the replayed call wrote nothing",
        ),
        (
            wrote_nothing and query,
            "presentation",
            "a query: it wrote nothing when replayed, nor when recorded",
        ),
        (failed_now and query, "presentation", "a query: it cannot have written when recorded"),
        (failed_then, "state", "recorded as failing, but the replayed call wrote"),
        (failed_now, "state", "a write that succeeded when recorded failed when replayed"),
    ]
    for applies, effect, reason in rules:
        if applies:
            return effect, reason
    return "state", "a write whose replayed outcome differs from the recorded one"
