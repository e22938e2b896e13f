"""Reading an MCPMark ``meta.json``: the verifier's label, token usage, times and stop reason.

Owns the meaning of ``meta.json``'s fields (``execution_result``, ``token_usage``, ``time``,
``turn_count``) and how a run's end is classified. Knows nothing about ``messages.json`` or task
folders.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from dataset.importers.mcpmark.paths import PathRewriter
from dataset.models import AgentStopReason, AgentUsage, Label
from dataset.problems import ProblemLog

_TURN_LIMIT = re.compile(r"max(imum)?[\s_-]*turns?|turn[\s_-]*limit|too many turns", re.I)


def execution_result(meta: dict[str, Any]) -> dict[str, Any]:
    """``meta.json``'s ``execution_result`` object ({} when absent or not an object)."""
    result = meta.get("execution_result")
    return result if isinstance(result, dict) else {}


def read_label(
    meta: dict[str, Any],
    meta_path: Path,
    rewrite: PathRewriter,
    log: ProblemLog,
    path_label: bool | None = None,
) -> Label | None:
    """The verifier's PASS/FAIL label; None (logged) when the run has no boolean outcome.

    ``path_label`` is the outcome the run's folder gives (AJ-Bench's ``success``/``fail``): it
    is the published label, so it wins over ``meta.json`` (a disagreement is logged).
    """
    result = execution_result(meta)
    recorded = result.get("success")
    if path_label is not None:
        if isinstance(recorded, bool) and recorded != path_label:
            log.add(
                meta_path,
                f"execution_result.success is {recorded} but the run lies in a "
                f"{'success' if path_label else 'fail'} folder; the folder's label is kept",
                field="execution_result.success",
                severity="warning",
            )
        recorded = path_label
    if not isinstance(recorded, bool):
        log.add(
            meta_path,
            "no boolean execution_result.success: the trajectory is imported unlabelled",
            field="execution_result.success",
            severity="warning",
        )
        return None
    return Label(
        value="PASS" if recorded else "FAIL",
        source="verifier",
        verifier_output=rewrite.optional(result.get("verification_output")),
        error_message=rewrite.optional(result.get("error_message")),
    )


def stop_reason(
    error_message: str | None, final: str | None, turn_count: int | None, max_turns: int
) -> AgentStopReason:
    """How the run ended, from its error message, final answer and turn count."""
    if error_message and _TURN_LIMIT.search(error_message):
        return "turn_limit"
    if final is None and turn_count is not None and turn_count >= max_turns:
        return "turn_limit"
    if final is not None:
        return "completed"
    return "error" if error_message else "unknown"


def read_usage(meta: dict[str, Any], meta_path: Path, log: ProblemLog) -> AgentUsage | None:
    """The run's token usage; None when absent or (logged) invalid."""
    raw = meta.get("token_usage")
    if not isinstance(raw, dict):
        return None
    try:
        return AgentUsage.model_validate(
            {k: v for k, v in raw.items() if k in AgentUsage.model_fields}
        )
    except ValidationError as error:
        log.add_validation_error(meta_path, error, prefix="token_usage")
        return None


def parse_time(value: object, path: Path, field_name: str, log: ProblemLog) -> datetime | None:
    """A recorded timestamp (epoch seconds or ISO 8601); None when absent or (logged) unreadable."""
    if value is None:
        return None
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, tz=UTC)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            pass
    log.add(path, f"unreadable timestamp {value!r}; left out", field=field_name, severity="warning")
    return None


def optional_text(value: object) -> str | None:
    """A value as text (JSON serialised when it is not a string); None when absent or empty."""
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
