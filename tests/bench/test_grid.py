"""Ablation grid files: validation with named fields, and expansion into arms."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.grid import GridError, expand_grid, load_grid
from bench.grid_runner import GridSpec, run_key
from judge_agent.conversation import JudgeLimits


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(text)
    return path


def test_a_full_grid_expands_to_the_product_of_its_arms(tmp_path: Path) -> None:
    grid = load_grid(
        _write(
            tmp_path,
            """
models: [mock/pass, mock/fail]
modes: [agent, llm]
turns: [1, 2, 4, 8, 16, 32]
reasoning_efforts: [null, high]
observations: [last, none]
runs: 3
limits: {tool_call_limit: 40}
""",
        )
    )
    arms = expand_grid(grid, GridSpec(), [])
    assert len(arms) == 2 * 2 * 2  # models x efforts x observations
    assert {model for model, _ in arms} == {"mock/pass", "mock/fail"}
    for _, spec in arms:
        assert spec.modes == ("agent", "llm")
        assert spec.turns == (1, 2, 4, 8, 16, 32)
        assert spec.runs == 3
        assert spec.limits.tool_call_limit == 40
    variants = {(model, spec.variant) for model, spec in arms}
    assert len(variants) == len(arms)
    assert {spec.variant for _, spec in arms} == {
        "",
        "effort=high",
        "screenshots=none",
        "effort=high screenshots=none",
    }
    keys = {run_key("t1", "agent", 16, model, 1, spec.variant) for model, spec in arms}
    assert len(keys) == len(arms)  # variants never share a run key


def test_axes_missing_from_the_file_keep_the_command_line_values(tmp_path: Path) -> None:
    base = GridSpec(
        modes=("react",), turns=(5,), runs=2, limits=JudgeLimits(time_limit=30), screenshots="all"
    )
    arms = expand_grid(load_grid(_write(tmp_path, "turns: [1, 3]\n")), base, ["mock/pass"])
    assert len(arms) == 1
    model, spec = arms[0]
    assert model == "mock/pass"
    assert spec.turns == (1, 3)
    assert (spec.modes, spec.runs, spec.screenshots) == (("react",), 2, "all")
    assert spec.limits.time_limit == 30


def test_the_trees_axis_multiplies_the_observation_axis(tmp_path: Path) -> None:
    grid = load_grid(_write(tmp_path, "observations: [last, none]\ntrees: [all, none]\n"))
    arms = expand_grid(grid, GridSpec(), ["mock/pass"])
    assert sorted((spec.screenshots, spec.trees) for _, spec in arms) == [
        ("last", "all"),
        ("last", "none"),
        ("none", "all"),
        ("none", "none"),
    ]
    assert {spec.variant for _, spec in arms} == {
        "",
        "trees=none",
        "screenshots=none",
        "screenshots=none trees=none",
    }


def test_an_empty_file_with_no_model_has_no_arms(tmp_path: Path) -> None:
    assert expand_grid(load_grid(_write(tmp_path, "")), GridSpec(), []) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("turns: [0]\n", "turns.0"),
        ("modes: [agent, vibes]\n", "modes.1"),
        ("runs: many\n", "runs"),
        ("colour: blue\n", "colour"),
        ("reasoning_efforts: [extreme]\n", "reasoning_efforts.0"),
        ("- just\n- a list\n", "expected a mapping"),
        ("turns: [1\n", "not valid YAML"),
    ],
)
def test_bad_grid_files_name_the_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(GridError) as caught:
        load_grid(path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


def test_a_missing_grid_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(GridError, match="cannot read"):
        load_grid(tmp_path / "absent.yaml")
