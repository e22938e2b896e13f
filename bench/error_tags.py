"""Automatic tags for wrong judge verdicts, from what the run record alone can tell.

The AJ-Bench failure taxonomy (omitted tool calls, wrong tool, misread tool output, wrong
reasoning) needs a reader for most cases. The cases a record settles on its own get a tag; the
rest are ``needs review``. Tags are checked in the order below, so each wrong verdict gets the
first that applies.
"""

from __future__ import annotations

from bench.grid_runner import HARNESS_ERROR_PREFIX
from bench.results import Prediction
from judge_agent.modes import judge_mode, mode_names

__all__ = ["ERROR_TAGS", "error_tag", "mode_uses_tools"]

ERROR_TAGS: dict[str, str] = {
    "harness error": "the judge run itself could not be made (environment or crash)",
    "budget exhausted": "a turn, token, time or tool-call limit ended the run",
    "invalid verdict": "the judge gave no parsable verdict (or its model calls failed)",
    "no tool call": "a tool-using judge answered without inspecting anything",
    "tool error": "at least one of the judge's tool calls failed",
    "needs review": (
        "none of the above; the AJ-Bench taxonomy (wrong tool, misread output, wrong reasoning) "
        "needs a human reader"
    ),
}
"""Every tag with what it means, in the order they are tried."""

_LIMITS = {"turn_limit", "token_limit", "time_limit", "tool_call_limit"}


def mode_uses_tools(mode: str) -> bool:
    """Whether judges of ``mode`` had tools to call (a mode no longer registered: assumed so)."""
    return judge_mode(mode).uses_tools if mode in mode_names() else True


def error_tag(prediction: Prediction) -> str | None:
    """The tag of a wrong judge verdict; None for a right one or a baseline's."""
    if prediction.correct or prediction.config.kind != "judge":
        return None
    error = prediction.error or ""
    checks = (
        ("harness error", error.startswith(HARNESS_ERROR_PREFIX)),
        ("budget exhausted", prediction.stop_reason in _LIMITS),
        ("invalid verdict", prediction.verdict == "INVALID"),
        ("no tool call", mode_uses_tools(prediction.config.name) and prediction.tool_calls == 0),
        ("tool error", prediction.tool_errors > 0),
    )
    return next((tag for tag, applies in checks if applies), "needs review")
