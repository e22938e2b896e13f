"""Per-claim verdicts read from a judge's answer (claims judged together)."""

from __future__ import annotations

from judge_agent.claim_verdicts import claim_verdicts, parse_claim_lines, parse_claims_argument
from judge_agent.model import ChatMessage, ChatMessageAssistant, ChatMessageUser, ToolCall


def test_claim_lines_in_the_usual_spellings() -> None:
    text = (
        "Checked the pages.\n"
        "Claim 1: PASS\n"
        "- **Claim 2**: FAIL - the table says 2009\n"
        "Claim 3: [1]\n"
        "claim #4 = false\n"
        "Item 5: correct\n"
        "\nRESULT: FAIL"
    )
    assert parse_claim_lines(text) == {1: "PASS", 2: "FAIL", 3: "PASS", 4: "FAIL", 5: "PASS"}


def test_the_last_line_for_a_claim_wins_and_prose_is_not_a_verdict() -> None:
    text = "Claim 1: PASS\nClaim 1 seems doubtful, so:\nClaim 1: FAIL\nclaims were hard"
    assert parse_claim_lines(text) == {1: "FAIL"}


def test_submit_argument_by_number() -> None:
    assert parse_claims_argument({"1": "PASS", "#2": "fail", "x": "PASS", "3": "maybe"}) == {
        1: "PASS",
        2: "FAIL",
    }
    assert parse_claims_argument(["PASS"]) == {}


def test_missing_claims_are_invalid_and_the_latest_answer_with_claims_counts() -> None:
    messages: list[ChatMessage] = [
        ChatMessageUser(content="judge"),
        ChatMessageAssistant(content="Claim 1: FAIL\nClaim 2: FAIL"),
        ChatMessageAssistant(content="Looking again."),
        ChatMessageAssistant(
            content="",
            tool_calls=[
                ToolCall(
                    id="1",
                    name="submit_verdict",
                    arguments={"verdict": "FAIL", "claims": {"1": "PASS"}},
                )
            ],
        ),
    ]
    assert claim_verdicts(messages, ["c1", "c2", "c3"]) == {
        "c1": "PASS",
        "c2": "INVALID",
        "c3": "INVALID",
    }
    assert claim_verdicts(messages[:1], ["c1"]) == {"c1": "INVALID"}
