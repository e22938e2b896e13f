"""What every kind's replay comparison shares: the output rules common to all tools, and whether a
step that did not replay as recorded could change the end state.

**Normalisation.** Replay re-executes every call; an output that differs only in what
legitimately changes between two executions of the same call on the same state must still count
as a match. Every kind's ``EnvironmentKind.normalise_output`` starts from these rules, applied to
both sides, in order (a kind adds its own tools' rules, e.g. ``environments.filesystem.comparison``
and ``environments.postgres.comparison``):

1. **Sandbox root.** The sandbox's absolute root (a host directory, or ``/sandbox`` in a
   container) becomes ``${SANDBOX_ROOT}``, the placeholder recorded trajectories use.
2. **Line endings and trailing blanks.** ``\\r\\n`` becomes ``\\n``; spaces at line ends and blank
   lines at the end are dropped.
3. **Date-times** (a date *with* a time of day: ISO 8601 with ``T`` or a space, optional
   fractions and zone; JavaScript ``Date`` strings; ``datetime.datetime(...)`` reprs) become
   ``<DATETIME>``. Bare dates (``2024-03-04``) are data and are kept.
4. **UUIDs** become ``<UUID>``.

**Effect.** A replayed output that differs from the recorded one is not always a different state:
the server may word or lay out the same answer differently, or the call may have only read.
``classify_step`` calls every diverged or failed step one of:

* ``presentation``: the difference is only in what the agent was shown. The tool cannot write;
  or the call failed both when recorded and when replayed (a failed call commits nothing); or
  the output text is the same and only the error flag differs; or the replayed call wrote
  nothing and the kind says the call only reads (``EnvironmentKind.call_only_reads``: an SQL
  query), so the recorded call, with the same arguments, wrote nothing either; or it was recorded
  failing and the replay wrote nothing.
* ``state``: the call may have left the state differently: a write that succeeded on one side
  only, or that succeeded on both sides with different outcomes (rows affected, rows returned).
"""

from __future__ import annotations

import re
from typing import Literal

from dataset.models import SANDBOX_ROOT_PLACEHOLDER, Step
from mcp_servers.results import ToolResult

DATETIME_MARK = "<DATETIME>"
"""What every date-time becomes."""

UUID_MARK = "<UUID>"
"""What every UUID becomes."""

StepEffect = Literal["presentation", "state"]
"""What a diverged or failed step's difference can affect: only what the agent was shown
(``presentation``), or the end state (``state``)."""

_DATETIME_PATTERNS = [
    re.compile(
        r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?\b"
    ),
    re.compile(
        r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
        r" \d{2} \d{4} \d{2}:\d{2}:\d{2} GMT[+-]\d{4}(?: \([^)]*\))?"
    ),
    re.compile(r"datetime\.datetime\([^()]*(?:\([^()]*\)[^()]*)*\)"),
]
_UUID_PATTERN = re.compile(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
_ERROR_TEXT = re.compile(r"^\s*(Error\b|An error occurred while running the tool)")


def replace_root(text: str, root: str) -> str:
    """Rule 1: the sandbox's root path becomes the placeholder."""
    if not root or root == SANDBOX_ROOT_PLACEHOLDER:
        return text
    return text.replace(root.rstrip("/"), SANDBOX_ROOT_PLACEHOLDER)


def common_lines(text: str, root: str) -> str:
    """Rules 1 and 2: the root as the placeholder, plain line ends, no trailing blanks."""
    text = replace_root(text, root).replace("\r\n", "\n")
    return "\n".join(line.rstrip() for line in text.split("\n")).rstrip("\n")


def mask_datetimes(text: str) -> str:
    """Rule 3: every date-time becomes ``DATETIME_MARK``."""
    for pattern in _DATETIME_PATTERNS:
        text = pattern.sub(DATETIME_MARK, text)
    return text


def mask_uuids(text: str) -> str:
    """Rule 4: every UUID becomes ``UUID_MARK``."""
    return _UUID_PATTERN.sub(UUID_MARK, text)


def normalise_common(text: str, root: str = "") -> str:
    """Rules 1 to 4, for a kind whose tools need nothing more."""
    return mask_uuids(mask_datetimes(common_lines(text, root)))


def recorded_failure(step: Step) -> bool:
    """Whether the recorded call failed: flagged as an error, or answered with an error text
    (postgres-mcp reports failures as ``Error: ...`` without the flag)."""
    text = step.observation.text if step.observation else ""
    return step.is_error or bool(_ERROR_TEXT.match(text or ""))


def classify_step(
    step: Step,
    *,
    writes: bool,
    replayed: ToolResult | None,
    only_reads: bool = False,
    same_text: bool = False,
) -> tuple[StepEffect, str]:
    """The effect of a diverged or failed step and why (``replayed`` is None when the call
    could not run at all; ``only_reads``: the kind says the call's arguments only read)."""
    failed_then = recorded_failure(step)
    failed_now = replayed is None or replayed.is_error
    wrote_nothing = replayed is not None and replayed.wrote is False
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
            wrote_nothing and only_reads,
            "presentation",
            "a query: it wrote nothing when replayed, nor when recorded",
        ),
        (
            failed_now and only_reads,
            "presentation",
            "a query: it cannot have written when recorded",
        ),
        (failed_then, "state", "recorded as failing, but the replayed call wrote"),
        (failed_now, "state", "a write that succeeded when recorded failed when replayed"),
    ]
    for applies, effect, reason in rules:
        if applies:
            return effect, reason
    return "state", "a write whose replayed outcome differs from the recorded one"
