"""pass@k, pass^k and Wilson intervals, checked against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from replay.results.stats import case_stats, pass_at_k, pass_hat_k, wilson


def test_pass_at_k_and_pass_hat_k() -> None:
    assert pass_at_k(3, 1, 1) == pytest.approx(1 / 3)
    assert pass_at_k(3, 1, 3) == 1.0
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - math.comb(3, 2) / math.comb(5, 2))  # 0.7
    assert pass_at_k(4, 0, 2) == 0.0
    assert pass_hat_k(3, 2, 2) == pytest.approx(1 / 3)
    assert pass_hat_k(3, 3, 3) == 1.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_wilson_interval() -> None:
    low, high = wilson(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-3) and high == pytest.approx(0.9433, abs=1e-3)
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(0, 5)[0] == 0.0


def test_quality_is_computed_over_healthy_runs_only() -> None:
    stats = case_stats("c", ["pass", "transport_fail", "pass", "model_fail", "infra_fail"])
    assert stats.runs == 5 and stats.healthy == 3 and stats.passes == 2
    assert stats.pass_rate == pytest.approx(2 / 3)
    assert stats.pass_at[1] == pytest.approx(2 / 3)
    assert stats.pass_hat[3] == 0.0
    assert stats.outcomes == {"pass": 2, "transport_fail": 1, "model_fail": 1, "infra_fail": 1}
    empty = case_stats("d", ["transport_fail"])
    assert empty.pass_rate is None and empty.pass_at == {}
