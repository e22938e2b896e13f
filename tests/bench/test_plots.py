"""The report's figures: label placement in the cost-vs-F1 plot (every label gets its own place,
and it ends), and the F1-vs-turn-budget plot drawing every judge mode, baselines apart."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from matplotlib.legend import Legend

from bench.plots import _LINE_HEIGHT, _place_labels, f1_vs_turns, f1_vs_turns_figure, turn_plot
from bench.results import JudgeConfig, Prediction
from bench.scores import BenchReport
from bench.scoring import build_report


def test_labels_on_one_spot_are_stacked_without_overlap() -> None:
    # Thirty configurations with the same cost and F1 (as a scripted run gives): a regression
    # for a placement loop that never ended when rounding made a moved label overlap again.
    points = [(0.0, 0.1 * 7 / 3, f"config {index}") for index in range(30)]
    centres = _place_labels(points, 0.0, 1.0)
    assert len(centres) == 30
    ordered = sorted(centres)
    assert ordered[0] == points[0][1]
    for lower, upper in itertools.pairwise(ordered):
        assert upper - lower >= _LINE_HEIGHT - 1e-9


def test_labels_far_apart_stay_at_their_points() -> None:
    points = [(0.0, 0.1, "a"), (0.0, 0.9, "b")]
    assert _place_labels(points, 0.0, 1.0) == [0.1, 0.9]


MODEL = "mock/plot"
LLM = JudgeConfig(kind="judge", name="llm", model=MODEL)
ALWAYS_PASS = JudgeConfig(kind="baseline", name="always-pass")
LABELS = ["PASS"] * 4 + ["FAIL"] * 4


def _predictions(config: JudgeConfig, verdicts: list[str]) -> list[Prediction]:
    return [
        Prediction(
            config=config,
            trajectory_id=f"t{index}",
            task_id=f"task-{index}",
            domain="ds",
            subdomain="filesystem",
            label=label,
            verdict=verdict,
        )
        for index, (label, verdict) in enumerate(zip(LABELS, verdicts, strict=True))
    ]


@pytest.fixture(scope="module")
def grid_report() -> BenchReport:
    """An LLM judge (3 of 4 PASS found, 1 false PASS: F1 0.75), an agent judge at turn budgets
    1 (every verdict FAIL: F1 0) and 4 (every verdict right: F1 1), and always-pass (F1 2/3)."""
    agent = JudgeConfig(kind="judge", name="agent", model=MODEL)
    predictions = [
        *_predictions(LLM, ["PASS", "PASS", "PASS", "FAIL", "PASS", "FAIL", "FAIL", "FAIL"]),
        *_predictions(agent.model_copy(update={"turns": 1}), ["FAIL"] * 8),
        *_predictions(agent.model_copy(update={"turns": 4}), LABELS),
        *_predictions(ALWAYS_PASS, ["PASS"] * 8),
    ]
    return build_report(predictions, dataset="grid", replicates=50)


def test_the_turn_plot_data_holds_the_llm_judge_as_a_level(grid_report: BenchReport) -> None:
    data = turn_plot(grid_report)
    assert [curve.family for curve in data.curves] == [f"agent {MODEL}"]
    assert [(p.turns, p.f1) for p in data.curves[0].points] == [(1, 0.0), (4, 1.0)]
    assert [(level.label, level.f1) for level in data.flat_judges] == [(f"llm {MODEL}", 0.75)]
    assert [level.label for level in data.baselines] == ["baseline: always-pass"]
    assert data.baselines[0].f1 == pytest.approx(2 / 3)
    assert data.budgets == [1, 4]


def _legend(figure_legends: list[Legend], title: str) -> list[str]:
    found = [legend for legend in figure_legends if legend.get_title().get_text() == title]
    assert len(found) == 1, title
    return [text.get_text() for text in found[0].get_texts()]


def test_the_figure_draws_the_llm_line_and_keeps_baselines_in_their_own_legend(
    grid_report: BenchReport,
) -> None:
    figure = f1_vs_turns_figure(grid_report)
    axes = figure.axes[0]
    lines = {str(line.get_label()): line for line in axes.get_lines()}
    llm = next(line for label, line in lines.items() if label.startswith(f"llm {MODEL}"))
    assert np.asarray(llm.get_ydata(), dtype=float).tolist() == [0.75, 0.75]  # flat, at its F1
    assert llm.get_linestyle() == "-."
    baseline = next(line for label, line in lines.items() if label.startswith("baseline:"))
    assert baseline.get_linestyle() == "--"
    judges = _legend(figure.legends, "judges")
    assert any(text.startswith(f"llm {MODEL} (no turn budget") for text in judges)
    assert any(text.startswith(f"agent {MODEL}") for text in judges)
    assert _legend(figure.legends, "baselines (no model)") == ["baseline: always-pass (F1 0.67)"]
    assert f1_vs_turns(grid_report).startswith(b"\x89PNG")


def test_without_turn_budgets_the_llm_judge_is_still_drawn(grid_report: BenchReport) -> None:
    only_llm = grid_report.model_copy(
        update={
            "curves": [],
            "configs": [c for c in grid_report.configs if c.config.turns == 0],
        }
    )
    figure = f1_vs_turns_figure(only_llm)
    labels = [str(line.get_label()) for line in figure.axes[0].get_lines()]
    assert any(label.startswith(f"llm {MODEL}") for label in labels)
    assert "baselines only" not in figure.axes[0].get_title()


def test_baselines_of_the_same_f1_are_told_apart_by_their_dashes() -> None:
    """Five baselines all at F1 2/3 lie on one line: only their dash patterns (grey shades
    repeat every four) tell them apart, so no two may share one."""
    names = ["always-pass", "random", "length-threshold", "self-report", "verifier"]
    report = build_report(
        [
            prediction
            for name in names
            for prediction in _predictions(JudgeConfig(kind="baseline", name=name), ["PASS"] * 8)
        ],
        dataset="grid",
        replicates=20,
    )
    axes = f1_vs_turns_figure(report).axes[0]
    baselines = [line for line in axes.get_lines() if str(line.get_label()).startswith("baseline:")]
    assert len(baselines) == len(names)
    # Line2D keeps its dash pattern (offset, on/off lengths) unscaled by the line width here.
    patterns = {str(line._unscaled_dash_pattern) for line in baselines}  # type: ignore[attr-defined]
    assert len(patterns) == len(names)
