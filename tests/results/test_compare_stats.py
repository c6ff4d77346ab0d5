"""``replay compare``'s statistics against values worked out by hand and by simulation."""

from __future__ import annotations

import math
import random

import pytest

from replay.results.stats import (
    ArmCase,
    binomial_floor_se,
    cases_needed,
    compare_arms,
    minimum_detectable_effect,
    smoothed_variance,
    t_quantile,
)


def test_t_quantiles_match_the_printed_tables() -> None:
    # Student's t, two-sided 95% and one-sided 80%, from any statistics table.
    assert t_quantile(0.975, 2) == pytest.approx(4.303, abs=1e-3)
    assert t_quantile(0.975, 10) == pytest.approx(2.228, abs=1e-3)
    assert t_quantile(0.975, 1000) == pytest.approx(1.962, abs=1e-3)
    assert t_quantile(0.8, 2) == pytest.approx(1.061, abs=1e-3)


def test_smoothed_variance_never_vanishes() -> None:
    # 3 of 3: p~ = 3.5 / 4 = 0.875, p~(1 - p~) = 0.109375; 0 of 3 is its mirror image.
    assert smoothed_variance(3, 3) == pytest.approx(0.109375)
    assert smoothed_variance(0, 3) == pytest.approx(0.109375)
    # 1 of 2: p~ = 1.5 / 3 = 0.5.
    assert smoothed_variance(1, 2) == pytest.approx(0.25)


def test_a_unanimous_difference_by_hand() -> None:
    # Three cases, A 0/3 and B 3/3 on each: d = (1, 1, 1), sd 0. The floor:
    # per case 0.109375/3 + 0.109375/3 = 0.0729167; sqrt(3 * 0.0729167) / 3 = 0.155902.
    a, b = [ArmCase(0, 3)] * 3, [ArmCase(3, 3)] * 3
    assert binomial_floor_se(a, b) == pytest.approx(0.155902, abs=1e-6)
    cmp = compare_arms(a, b)
    assert cmp.estimate == 1.0 and cmp.se == pytest.approx(0.155902, abs=1e-6)
    # Half-width 4.302653 * 0.155902 = 0.670796; the upper end is clipped to 1.
    assert cmp.interval == pytest.approx((0.329204, 1.0), abs=1e-5)
    # t = 1 / 0.155902 = 6.41428 on 2 df: sf = (1 - t / sqrt(t^2 + 2)) / 2 = 0.011728.
    assert cmp.p_value == pytest.approx(0.023456, abs=1e-5)
    assert cmp.test == "paired t over 3 cases (2 df)"


def test_the_observed_spread_wins_when_it_is_wider() -> None:
    # d = (1, 0, -1, 0): mean 0, sd sqrt(2/3) = 0.816497, SE 0.408248 > the floor.
    a = [ArmCase(0, 4), ArmCase(2, 4), ArmCase(4, 4), ArmCase(2, 4)]
    b = [ArmCase(4, 4), ArmCase(2, 4), ArmCase(0, 4), ArmCase(2, 4)]
    cmp = compare_arms(a, b)
    assert cmp.se == pytest.approx(math.sqrt(2 / 3) / 2)
    assert cmp.se > binomial_floor_se(a, b)
    assert cmp.p_value == pytest.approx(1.0)


def test_one_run_per_case_uses_mcnemar() -> None:
    # 5 cases, one run each: B alone passes 4, A alone passes 0, one tie.
    a = [ArmCase(0, 1)] * 4 + [ArmCase(1, 1)]
    b = [ArmCase(1, 1)] * 5
    cmp = compare_arms(a, b)
    assert cmp.test.startswith("McNemar exact")
    assert cmp.p_value == pytest.approx(2 / 16)  # 2 * P(Binomial(4, 1/2) <= 0)


def test_minimum_detectable_effect_and_cases_needed_by_hand() -> None:
    # (t(.975, 2) + t(.8, 2)) * 0.155902 = (4.302653 + 1.060660) * 0.155902 = 0.836152.
    assert minimum_detectable_effect(0.155902, 3) == pytest.approx(0.836152, abs=1e-5)
    # At n cases the SE is 0.155902 * sqrt(3 / n); 60 is the first n whose MDE <= 0.10:
    # n = 60: (2.000995 + 0.848199) * 0.270030 / sqrt(60) = 0.099333; n = 59: 0.100197.
    assert cases_needed(0.155902, 3, 0.1) == 60
    assert cases_needed(0.155902, 3, 0.9) == 3  # already detectable
    assert cases_needed(0.5, 3, 1e-6, limit=1000) is None


def _simulate(sims: int, cases: int, k: int, seed: int) -> float:
    """The share of simulated A/A comparisons (both arms the same true rate on every case,
    case rates drawn from .05 to .95) that compare_arms calls significant at 5%."""
    rng = random.Random(seed)
    rejected = 0
    for _ in range(sims):
        a, b = [], []
        for _ in range(cases):
            p = rng.choice([0.05, 0.3, 0.5, 0.7, 0.95])
            a.append(ArmCase(sum(rng.random() < p for _ in range(k)), k))
            b.append(ArmCase(sum(rng.random() < p for _ in range(k)), k))
        rejected += compare_arms(a, b).p_value < 0.05
    return rejected / sims


def test_simulated_aa_false_positive_rate_is_at_or_below_the_nominal_level() -> None:
    # 600 simulated A/A comparisons of 20 cases x 3 runs. The floor can only widen the
    # interval, so the rate may fall below 5% but must not rise above it by more than
    # sampling noise (SE of a 5% rate over 600 draws: 0.9 points).
    rate = _simulate(sims=600, cases=20, k=3, seed=2411)
    assert rate <= 0.075, rate
    assert rate >= 0.01, f"{rate}: a test that never rejects is no test"
