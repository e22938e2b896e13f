"""Turning token counts into dollars with an editable price table.

The table (``prices.toml`` beside this module, or the file ``$AGENTJUDGE_PRICES`` names) maps a
``provider/model`` name to dollars per million input, cached-input and output tokens. An entry
``provider/*`` prices every model of a provider without its own entry. A model that is not in the
table has no cost (``None``), never a guessed one. Prices change: check them
against the provider's page before quoting costs.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, NonNegativeFloat

from judge_agent.model import ModelUsage
from settings import get_settings

DEFAULT_PRICES = Path(__file__).with_name("prices.toml")


class Price(BaseModel):
    """Dollars per million tokens of one model."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    input: NonNegativeFloat
    """Per million prompt tokens."""
    output: NonNegativeFloat
    """Per million completion tokens (reasoning included)."""
    cached_input: NonNegativeFloat | None = None
    """Per million prompt tokens read from the provider's cache (default: the input price)."""


def load_prices(path: Path | None = None) -> dict[str, Price]:
    """The price table at ``path`` (default: ``$AGENTJUDGE_PRICES``, else the bundled
    ``prices.toml``), read once per file."""
    return _read_prices(path or get_settings().prices or DEFAULT_PRICES)


@functools.cache
def _read_prices(source: Path) -> dict[str, Price]:
    try:
        table = tomllib.loads(source.read_text())
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ValueError(f"price table {source}: {error}") from None
    prices: dict[str, Price] = {}
    for name, entry in table.get("models", {}).items():
        try:
            prices[name] = Price.model_validate(entry)
        except ValueError as error:
            raise ValueError(f"price table {source}: models.{name!r}: {error}") from None
    return prices


def add_costs(total: float | None, dollars: float | None) -> float | None:
    """A running dollar total: an unknown cost (None) makes the total unknown, never zero."""
    return None if total is None or dollars is None else total + dollars


def total_cost(costs: Iterable[float | None]) -> float | None:
    """The sum of several costs; unknown if any of them is (see ``add_costs``)."""
    total: float | None = 0.0
    for dollars in costs:
        total = add_costs(total, dollars)
    return total


def cost_usd(model: str, usage: ModelUsage, prices: dict[str, Price] | None = None) -> float | None:
    """The dollar cost of ``usage`` on ``model``; None when the table has no price for it."""
    table = load_prices() if prices is None else prices
    price = table.get(model) or table.get(model.split("/", 1)[0] + "/*")
    if price is None:
        return None
    cached = min(usage.cache_read_tokens, usage.input_tokens)
    cached_rate = price.input if price.cached_input is None else price.cached_input
    dollars = (
        (usage.input_tokens - cached) * price.input
        + cached * cached_rate
        + usage.output_tokens * price.output
    ) / 1_000_000
    return round(dollars, 8)
