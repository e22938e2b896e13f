"""Token counts to dollars, with the bundled and a custom price table."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge_agent.model import ModelUsage
from judge_agent.pricing import Price, cost_usd, load_prices


def test_cost_counts_cached_input_at_its_own_rate() -> None:
    prices = {"openai/x": Price(input=2.0, cached_input=0.5, output=8.0)}
    usage = ModelUsage(input_tokens=1_000_000, output_tokens=500_000, cache_read_tokens=400_000)
    # 600k fresh input at $2/M + 400k cached at $0.5/M + 500k output at $8/M
    assert cost_usd("openai/x", usage, prices) == pytest.approx(1.2 + 0.2 + 4.0)


def test_unknown_models_have_no_cost_rather_than_a_guess() -> None:
    assert cost_usd("openai/not-in-the-table", ModelUsage(input_tokens=10), {}) is None


def test_the_bundled_table_loads_and_a_broken_one_is_named(tmp_path: Path) -> None:
    table = load_prices()
    assert table["mock/*"].input == 0.0
    assert cost_usd("mock/anything", ModelUsage(input_tokens=5)) == 0.0
    assert table["openai/gpt-4o"].output > table["openai/gpt-4o"].input
    broken = tmp_path / "prices.toml"
    broken.write_text('[models."openai/x"]\ninput = "cheap"\noutput = 1\n')
    with pytest.raises(ValueError, match=r"prices.toml: models\.'openai/x'"):
        load_prices(broken)


def test_the_prices_variable_points_at_another_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    custom = tmp_path / "mine.toml"
    custom.write_text('[models."openai/house-model"]\ninput = 1.0\noutput = 3.0\n')
    monkeypatch.setenv("AGENTJUDGE_PRICES", str(custom))
    assert set(load_prices()) == {"openai/house-model"}
    assert cost_usd("openai/house-model", ModelUsage(output_tokens=1_000_000)) == 3.0
    monkeypatch.delenv("AGENTJUDGE_PRICES")
    assert "mock/*" in load_prices()  # back to the bundled table
