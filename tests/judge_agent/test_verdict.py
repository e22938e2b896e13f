"""The verdict record: INVALID is a value of its own and limits are named."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from judge_agent.verdict import JudgeToolCall, Verdict


def test_invalid_is_kept_distinct_from_fail_through_serialisation() -> None:
    verdict = Verdict(trajectory_id="t", verdict="INVALID", stop_reason="turn_limit", error="none")
    again = Verdict.model_validate_json(verdict.model_dump_json())
    assert again.verdict == "INVALID"
    assert again.stop_reason == "turn_limit"


@pytest.mark.parametrize(
    "fields",
    [
        {"verdict": "MAYBE"},
        {"verdict": "PASS", "confidence": 1.5},
        {"verdict": "PASS", "tokens_in": -1},
        {"verdict": "PASS", "stop_reason": "bored"},
        {"verdict": "PASS", "cost_usd": -0.01},
    ],
)
def test_out_of_range_verdict_fields_are_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Verdict.model_validate({"trajectory_id": "t", **fields})


def test_judge_tool_calls_record_their_turn_and_outcome() -> None:
    call = JudgeToolCall(turn=2, name="read_text_file", arguments={"path": "a"}, is_error=True)
    verdict = Verdict(trajectory_id="t", verdict="FAIL", tool_calls=[call], turns_used=3)
    assert Verdict.model_validate(verdict.model_dump()).tool_calls[0].is_error
