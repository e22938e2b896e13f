"""A judge configuration with runs missing or mostly INVALID verdicts is marked in every report
(terminal table, Markdown, HTML, the F1-vs-turns curve), never ranked silently at a low F1."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from bench.report.render import render_html, render_markdown
from bench.results import JudgeConfig, Prediction
from bench.scoring import build_report

AGENT = JudgeConfig(kind="judge", name="agent", turns=4, model="openai/x")
AGENT_T1 = JudgeConfig(kind="judge", name="agent", turns=1, model="openai/x")
LLM = JudgeConfig(kind="judge", name="llm", model="openai/x")
ALWAYS_PASS = JudgeConfig(kind="baseline", name="always-pass")


def _prediction(config: JudgeConfig, index: int, verdict: str, run: int = 1) -> Prediction:
    label = "PASS" if index % 2 else "FAIL"
    fields: dict[str, Any] = {
        "config": config,
        "trajectory_id": f"t{index}",
        "task_id": f"task{index // 2}",
        "domain": "ds",
        "subdomain": "filesystem",
        "label": label,
        "verdict": label if verdict == "right" else verdict,
        "key": f"t{index}-{config.label}-{run}",
        "run": run,
    }
    return Prediction(**fields)


@pytest.fixture
def report() -> Any:
    predictions = [_prediction(ALWAYS_PASS, i, "PASS") for i in range(10)]
    predictions += [_prediction(AGENT, i, "right") for i in range(10)]
    predictions += [_prediction(LLM, i, "right") for i in range(3)]  # 7 runs missing
    # Six of ten INVALID (an unreachable model), four right.
    predictions += [_prediction(AGENT_T1, i, "INVALID" if i < 6 else "right") for i in range(10)]
    return build_report(predictions, dataset="d", replicates=100)


def test_partial_and_mostly_invalid_configurations_are_marked(report: Any) -> None:
    marks = {config.label: config.incomplete for config in report.configs}
    assert marks["llm openai/x"] == "partial: 3 of 10 runs"
    assert marks["agent T=1 openai/x"] == "mostly INVALID: 6 of 10"
    assert marks["agent T=4 openai/x"] is None
    assert marks["baseline: always-pass"] is None
    notes = " ".join(report.notes)
    assert "llm openai/x [partial: 3 of 10 runs]" in notes
    assert "agent T=1 openai/x [mostly INVALID: 6 of 10]" in notes
    curve = next(c for c in report.curves if c.family == "agent openai/x")
    assert curve.incomplete == "incomplete at T=1"


def test_a_missing_repetition_counts_as_missing() -> None:
    predictions = [_prediction(ALWAYS_PASS, i, "PASS") for i in range(4)]
    predictions += [_prediction(LLM, i, "right", run) for i in range(4) for run in (1, 2)][:-1]
    report = build_report(predictions, dataset="d", replicates=100)
    llm = next(c for c in report.configs if c.config == LLM)
    assert llm.incomplete == "partial: 7 of 8 runs"


def test_every_rendering_shows_the_mark(report: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentjudge.judge_cli import print_report

    markdown = render_markdown(report)
    html = render_html(report)
    for text in (markdown, html):
        assert "llm openai/x [partial: 3 of 10 runs]" in text
        assert "agent T=1 openai/x [mostly INVALID: 6 of 10]" in text
    buffer = io.StringIO()
    monkeypatch.setattr(
        "agentjudge.judge_cli.console", Console(file=buffer, width=250, highlight=False)
    )
    print_report(report)
    printed = buffer.getvalue()
    assert "llm openai/x [partial: 3 of 10 runs]" in printed
    assert "agent T=1 openai/x [mostly INVALID: 6 of 10]" in printed
