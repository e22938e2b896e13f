"""Verdict parsing: the submit tool's arguments and the published free-text formats."""

from __future__ import annotations

import jsonschema
import pytest
from pydantic import JsonValue

from judge_agent.verdict_parsing import (
    REASK_MESSAGE,
    SUBMIT_VERDICT_TOOL,
    ParsedVerdict,
    parse_confidence,
    parse_submit_arguments,
    parse_verdict_text,
)
from prompts import load_template

# --- free text: positive cases --------------------------------------------------------------

POSITIVE: list[tuple[str, str, str]] = [
    # (answer, verdict, format)
    ("RESULT: PASS", "PASS", "result"),
    ("RESULT: FAIL", "FAIL", "result"),
    ("result: pass", "PASS", "result"),
    ("Result: Fail.", "FAIL", "result"),
    ("RESULT: PASS!", "PASS", "result"),
    ("**RESULT:** PASS", "PASS", "result"),
    ("**RESULT: FAIL**", "FAIL", "result"),
    ("**Result**: **PASS**", "PASS", "result"),
    ("- RESULT: FAIL", "FAIL", "result"),
    ("## RESULT: PASS", "PASS", "result"),
    ("> RESULT: PASS", "PASS", "result"),
    ("RESULT: [FAIL]", "FAIL", "result"),
    ("RESULT: `PASS`", "PASS", "result"),
    ("RESULT: FAIL - index.md is missing", "FAIL", "result"),
    ("RESULT: PASS (all four requirements hold)", "PASS", "result"),
    ("RESULT: FAIL: the view drops two customers", "FAIL", "result"),
    ("Final result: PASS", "PASS", "result"),
    ("Result: 1", "PASS", "result"),
    ("Result: 0", "FAIL", "result"),
    ("Reason: The note has the wrong name.\nResult: 0", "FAIL", "result"),
    ("Response: [1]", "PASS", "response"),
    ("Response: [0]", "FAIL", "response"),
    ("Response: 1", "PASS", "response"),
    ("judgement: true", "PASS", "judgement"),
    ("judgement: false", "FAIL", "judgement"),
    ("Judgment: [True]", "PASS", "judgement"),
    ("**judgement**: [false]", "FAIL", "judgement"),
    ("Verdict: PASS", "PASS", "verdict"),
    ("Final verdict: **FAIL**", "FAIL", "verdict"),
    ('"verdict": "PASS",', "PASS", "verdict"),
    ("<success>yes</success>", "PASS", "tag"),
    ("<success>No</success>", "FAIL", "tag"),
    ("<success>\n  yes\n</success>\n<side_effects>none</side_effects>", "PASS", "tag"),
    ("<verdict>FAIL</verdict>", "FAIL", "tag"),
    ("Final Answer: PASS", "PASS", "final_answer"),
    ("Final Answer: fail", "FAIL", "final_answer"),
    ("Final Answer: RESULT: PASS", "PASS", "result"),
    ("Final Answer:\nRESULT: FAIL\nCONFIDENCE: Low", "FAIL", "result"),
    ("The file exists and is correct.\n\nPASS", "PASS", "bare"),
    ("**FAIL**", "FAIL", "bare"),
    ("RESULT：PASS", "PASS", "result"),  # noqa: RUF001 (a full-width colon, as some models write)
]


@pytest.mark.parametrize(("answer", "verdict", "fmt"), POSITIVE)
def test_published_formats_are_read(answer: str, verdict: str, fmt: str) -> None:
    parsed = parse_verdict_text(answer)
    assert parsed is not None, answer
    assert parsed.verdict == verdict
    assert parsed.format == fmt


# --- free text: nothing (or nothing clear) to read ------------------------------------------

NEGATIVE = [
    "",
    "   \n  ",
    "I think the agent did a good job overall.",
    "The task passed all checks and nothing failed.",  # prose is not an explicit verdict
    "Result: the view exists but has five rows.",
    "Result: no evidence that index.md was written",  # 'no' followed by prose is not a verdict
    "Result: Failed to determine the file contents",
    "RESULT: PASS or FAIL",  # an echoed template
    "RESULT: PASS/FAIL",
    "Response: [1]|[0]",
    "judgement: true or false",
    "RESULT: MAYBE",
    "RESULT:",
    "Pass the salt, please.",
    "PASSWORD: hunter2",
    "RESULTS: PASS",
    "I would say RESULT: PASS is likely",  # not at the start of a line
    "<success>partially</success>",
    "CONFIDENCE: High\nREASON: the file is there",
    # Conflicting verdicts in the final paragraph.
    "RESULT: PASS\nRESULT: FAIL",
    "RESULT: PASS\njudgement: false\nCONFIDENCE: High",
    "Final Answer: PASS\n<success>no</success>",
    # An ambiguous last verdict after a clear one.
    "RESULT: PASS\n\nRESULT: PASS or FAIL",
]


@pytest.mark.parametrize("answer", NEGATIVE)
def test_unclear_answers_give_no_verdict(answer: str) -> None:
    assert parse_verdict_text(answer) is None


def test_the_last_explicit_verdict_wins() -> None:
    answer = (
        "Draft after reading the trajectory:\nRESULT: PASS\n\n"
        "But the directory listing shows index.md is absent.\n\n"
        "RESULT: FAIL\nCONFIDENCE: High\nREASON: index.md does not exist."
    )
    parsed = parse_verdict_text(answer)
    assert parsed == ParsedVerdict(
        verdict="FAIL", confidence=0.9, reasoning="index.md does not exist.", format="result"
    )


def test_a_verdict_after_an_echoed_template_counts() -> None:
    answer = "The format is:\nRESULT: PASS or FAIL\n\nMy answer:\n\nRESULT: PASS"
    parsed = parse_verdict_text(answer)
    assert parsed is not None
    assert parsed.verdict == "PASS"


def test_agreeing_verdicts_in_one_paragraph_are_fine() -> None:
    parsed = parse_verdict_text("judgement: true\nRESULT: PASS\nCONFIDENCE: Medium")
    assert parsed is not None
    assert parsed.verdict == "PASS"
    assert parsed.confidence == 0.6


def test_gui_format_with_detailed_reasoning_and_confidence() -> None:
    answer = (
        "judgement: false\n"
        "DETAILED_REASONING: The heading was changed on screen,\n"
        "but the document was saved as memo.odt.\n"
        "CONFIDENCE: Medium"
    )
    parsed = parse_verdict_text(answer)
    assert parsed is not None
    assert parsed.verdict == "FAIL"
    assert parsed.confidence == 0.6
    assert parsed.reasoning == (
        "The heading was changed on screen,\nbut the document was saved as memo.odt."
    )
    assert parsed.format == "judgement"


def test_spa_bench_style_reason_before_result() -> None:
    parsed = parse_verdict_text("Reason: The note is named shopping list.md.\nResult: 0")
    assert parsed is not None
    assert parsed.verdict == "FAIL"
    assert parsed.reasoning == "The note is named shopping list.md."


def test_confidence_after_a_blank_line_is_still_read() -> None:
    parsed = parse_verdict_text("RESULT: PASS\n\nCONFIDENCE: 85%")
    assert parsed is not None
    assert parsed.confidence == pytest.approx(0.85)


def test_a_draft_confidence_before_the_final_paragraph_is_ignored() -> None:
    parsed = parse_verdict_text("CONFIDENCE: Low\n\nmore checks...\n\nRESULT: PASS")
    assert parsed is not None
    assert parsed.confidence is None


def test_without_a_reason_line_the_preceding_analysis_is_the_reasoning() -> None:
    parsed = parse_verdict_text("The view drops customers without orders.\n\nRESULT: FAIL")
    assert parsed is not None
    assert parsed.reasoning == "The view drops customers without orders."
    alone = parse_verdict_text("RESULT: FAIL")
    assert alone is not None
    assert alone.reasoning is None
    assert alone.confidence is None


def test_the_prompts_verdict_format_itself_is_not_a_verdict() -> None:
    # A model that merely repeats its instructions must be re-asked, not scored.
    assert parse_verdict_text(load_template("verdict_format.md").template) is None
    assert parse_verdict_text(REASK_MESSAGE) is None


# --- confidence -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("High", 0.9),
        ("medium", 0.6),
        ("LOW", 0.3),
        ("**High**", 0.9),
        ("[Medium]", 0.6),
        ("High confidence", 0.9),
        ("0.75", 0.75),
        (".5", 0.5),
        ("1", 1.0),
        ("0", 0.0),
        ("85", 0.85),
        ("85%", 0.85),
        ("100%", 1.0),
        (0.4, 0.4),
        (70, 0.7),
        ("very", None),
        ("-0.2", None),
        ("250", None),
        ("150%", None),
        ("", None),
        (True, None),
        (None, None),
        (float("nan"), None),
        ([0.5], None),
    ],
)
def test_confidence_parsing(value: object, expected: float | None) -> None:
    result = parse_confidence(value)
    if expected is None:
        assert result is None
    else:
        assert result == pytest.approx(expected)


# --- submit_verdict -------------------------------------------------------------------------


def test_the_submit_tool_schema_is_valid_and_strict() -> None:
    assert SUBMIT_VERDICT_TOOL.name == "submit_verdict"
    schema = SUBMIT_VERDICT_TOOL.input_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"verdict": "PASS", "confidence": "High", "reasoning": "ok"})
    assert validator.is_valid({"verdict": "FAIL", "confidence": 0.2, "reasoning": "no"})
    assert not validator.is_valid({"verdict": "MAYBE", "confidence": 0.2, "reasoning": "?"})
    assert not validator.is_valid({"verdict": "PASS", "confidence": 2, "reasoning": "?"})
    assert not validator.is_valid({"verdict": "PASS", "confidence": "Sure", "reasoning": "?"})
    assert not validator.is_valid({"verdict": "PASS"})


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            {"verdict": "PASS", "confidence": "High", "reasoning": " index.md is right "},
            ParsedVerdict(
                verdict="PASS",
                confidence=0.9,
                reasoning="index.md is right",
                format="submit_verdict",
            ),
        ),
        (
            {"verdict": "fail", "confidence": 0.35, "reasoning": "missing rows"},
            ParsedVerdict(
                verdict="FAIL", confidence=0.35, reasoning="missing rows", format="submit_verdict"
            ),
        ),
        (
            {"verdict": " Pass ", "confidence": "80"},
            ParsedVerdict(verdict="PASS", confidence=0.8, reasoning=None, format="submit_verdict"),
        ),
        (
            {"verdict": "FAIL", "confidence": None, "reasoning": ""},
            ParsedVerdict(verdict="FAIL", confidence=None, reasoning=None, format="submit_verdict"),
        ),
    ],
)
def test_submit_arguments_are_read(
    arguments: dict[str, JsonValue], expected: ParsedVerdict
) -> None:
    assert parse_submit_arguments(arguments) == expected


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({}, "'verdict' must be"),
        ({"verdict": "MAYBE"}, "'verdict' must be"),
        ({"verdict": True}, "'verdict' must be"),
        ({"verdict": "PASS", "confidence": "certain"}, "'confidence' must be"),
        ({"verdict": "PASS", "confidence": -1}, "'confidence' must be"),
        ({"verdict": "PASS", "confidence": False}, "'confidence' must be"),
    ],
)
def test_bad_submit_arguments_get_an_error_message(
    arguments: dict[str, JsonValue], complaint: str
) -> None:
    result = parse_submit_arguments(arguments)
    assert isinstance(result, str)
    assert complaint in result
    assert "submit_verdict" in result


def test_the_reask_message_asks_for_the_strict_format() -> None:
    for line in ("RESULT:", "CONFIDENCE:", "REASON:"):
        assert line in REASK_MESSAGE
    answer = "RESULT: PASS\nCONFIDENCE: High\nREASON: fine"
    assert parse_verdict_text(answer) is not None
