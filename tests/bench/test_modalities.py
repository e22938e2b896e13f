"""The observation-modality axis: grid files, what each modality renders or asks the GUI tools
for, and the report's F1-per-modality table with paired tests between modalities."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.grid import expand_grid, load_grid
from bench.grid_runner import GridSpec
from bench.report.blocks import DASH
from bench.report.render import render_markdown
from bench.results import JudgeConfig, Prediction
from bench.scoring import build_report


def test_modalities_in_the_observation_axis_become_arms(tmp_path: Path) -> None:
    path = tmp_path / "grid.yaml"
    path.write_text("observations: [screenshot, a11y_tree, screenshot_a11y_tree]\nturns: [4]\n")
    arms = expand_grid(load_grid(path), GridSpec(screenshots="all"), ["mock/coin"])
    assert [spec.modality for _, spec in arms] == [
        "screenshot",
        "a11y_tree",
        "screenshot_a11y_tree",
    ]
    # The screenshot policy stays the command line's; the modality names the variant.
    assert {spec.screenshots for _, spec in arms} == {"all"}
    assert [spec.variant for _, spec in arms] == [
        "screenshots=all modality=screenshot",
        "screenshots=all modality=a11y_tree",
        "screenshots=all modality=screenshot_a11y_tree",
    ]


def test_screenshot_policies_and_modalities_mix(tmp_path: Path) -> None:
    path = tmp_path / "grid.yaml"
    path.write_text("observations: [none, a11y_tree]\n")
    arms = expand_grid(load_grid(path), GridSpec(), ["mock/coin"])
    assert [(spec.screenshots, spec.modality) for _, spec in arms] == [
        ("none", None),
        ("last", "a11y_tree"),
    ]


@pytest.mark.parametrize(
    ("modality", "screenshots", "trees", "rendered"),
    [
        (None, "last", "all", ("last", "all")),
        ("screenshot", "all", "all", ("all", "none")),
        ("a11y_tree", "all", "last", ("none", "last")),
        ("screenshot_a11y_tree", "3", "last", ("3", "last")),
        # A modality showing a kind the policies had turned off shows the defaults.
        ("screenshot_a11y_tree", "none", "none", ("last", "all")),
        ("a11y_tree", "last", "none", ("none", "all")),
    ],
)
def test_an_llm_judge_sees_what_the_modality_holds(
    modality: str | None, screenshots: str, trees: str, rendered: tuple[str, str]
) -> None:
    spec = GridSpec(modality=modality, screenshots=screenshots, trees=trees)
    assert spec.rendered() == rendered


# Six trajectories on three tasks; labels PASS, FAIL alternating.
LABELS = ["PASS", "FAIL"] * 3


def _predictions(config: JudgeConfig, verdicts: list[str]) -> list[Prediction]:
    return [
        Prediction(
            config=config,
            trajectory_id=f"t{i}",
            task_id=f"task{i // 2}",
            domain="gui",
            subdomain="word",
            label=LABELS[i],
            verdict=verdict,
            scripted=True,
        )
        for i, verdict in enumerate(verdicts)
    ]


def _config(mode: str, modality: str, turns: int = 4) -> JudgeConfig:
    return JudgeConfig(
        kind="judge",
        name=mode,
        turns=turns if mode != "llm" else 0,
        model="mock/coin",
        variant=f"modality={modality}",
    )


def test_the_report_pairs_the_modalities_of_each_set_up() -> None:
    right = LABELS
    # Wrong on t1 and t3 (FAIL judged PASS): tp 3, fp 2 -> F1 6/8.
    two_wrong = ["PASS", "PASS", "PASS", "PASS", "PASS", "FAIL"]
    predictions = [
        *_predictions(_config("agent", "screenshot"), two_wrong),
        *_predictions(_config("agent", "a11y_tree"), right),
        *_predictions(_config("agent", "screenshot_a11y_tree"), right),
        *_predictions(_config("llm", "screenshot"), right),
        *_predictions(_config("llm", "a11y_tree"), two_wrong),
    ]
    report = build_report(predictions, dataset="d", replicates=200)
    pairs = [
        (c.setup.label, c.first, c.second, c.paired.agent_only_correct, c.paired.llm_only_correct)
        for c in report.modality_comparisons
    ]
    assert pairs == [
        ("agent T=4 mock/coin", "screenshot", "a11y_tree", 0, 2),
        ("agent T=4 mock/coin", "screenshot", "screenshot_a11y_tree", 0, 2),
        ("agent T=4 mock/coin", "a11y_tree", "screenshot_a11y_tree", 0, 0),
        ("llm mock/coin", "screenshot", "a11y_tree", 2, 0),
    ]
    first = report.modality_comparisons[0].paired
    assert first.pairs == 6
    assert first.delta_f1 == pytest.approx(6 / 8 - 1.0)
    markdown = render_markdown(report)
    section = markdown.split("## Observation modalities", 1)[1]
    assert "| Set-up | screenshot | a11y_tree | screenshot_a11y_tree |" in section
    row = next(line for line in section.splitlines() if line.startswith("| llm mock/coin |"))
    assert row.startswith("| llm mock/coin | 1.000")
    assert row.startswith("| llm mock/coin | 1.000 [1.00, 1.00] | 0.750")
    assert row.rstrip().endswith(f"| {DASH} |")  # no llm run with both
    assert "screenshot vs a11y_tree" in section


def test_a_report_without_modalities_has_no_modality_section() -> None:
    config = JudgeConfig(kind="judge", name="agent", turns=4, model="mock/coin")
    report = build_report(_predictions(config, LABELS), dataset="d", replicates=100)
    assert report.modality_comparisons == []
    assert "Observation modalities" not in render_markdown(report)
