"""The built-in price table prices every stub trajectory (at zero), so no demo row says n/a."""

from __future__ import annotations

from replay.run.prices import PriceTable, load_prices
from replay.run.trajectories import TRAJECTORIES


def test_every_stub_trajectory_has_a_price() -> None:
    prices = load_prices()
    missing = [t for t in TRAJECTORIES if prices.cost(f"stub:{t}", 10, 10) is None]
    assert missing == []
    assert all(prices.cost(f"stub:{t}", 1000, 1000) == 0 for t in TRAJECTORIES)
    assert prices.cost("gpt-4.1-nano", 10, 10) is None, "a model the table lacks has no cost"


def test_an_exact_key_wins_over_a_prefix_and_a_longer_prefix_over_a_shorter() -> None:
    table = PriceTable.model_validate(
        {
            "m*": {"input": 1, "output": 0},
            "model-*": {"input": 2, "output": 0},
            "model-x": {"input": 3, "output": 0},
        }
    )
    assert table.cost("model-x", 1_000_000, 0) == 3
    assert table.cost("model-y", 1_000_000, 0) == 2
    assert table.cost("mini", 1_000_000, 0) == 1
    assert table.cost("other", 1_000_000, 0) is None
