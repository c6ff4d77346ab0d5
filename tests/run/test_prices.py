"""The built-in price table prices every stub trajectory (at zero), so no demo row says n/a."""

from __future__ import annotations

from replay.run.prices import load_prices
from replay.run.trajectories import TRAJECTORIES


def test_every_stub_trajectory_has_a_price() -> None:
    prices = load_prices()
    missing = [t for t in TRAJECTORIES if prices.cost(f"stub:{t}", 10, 10) is None]
    assert missing == []
    assert all(prices.cost(f"stub:{t}", 1000, 1000) == 0 for t in TRAJECTORIES)
