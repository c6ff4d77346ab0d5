"""The statistics module, checked against values worked out by hand and by simulation."""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import pytest

from replay.results.stats import (
    bootstrap_cases,
    case_stats,
    clustered_mean,
    format_pass_k,
    mcnemar_exact,
    paired_difference,
    pass_at_k,
    pass_hat_k,
    wilson,
)


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


def test_pass_k_for_every_k_up_to_the_healthy_count() -> None:
    # --runs 3 with one retried transport failure: 4 runs, 3 healthy. pass^3 is there, and
    # no k goes past the healthy runs (k=4 once made pass^k vanish).
    stats = case_stats("c", ["pass", "transport_fail", "pass", "pass"])
    assert stats.healthy == 3
    assert sorted(stats.pass_hat) == [1, 2, 3] and stats.pass_hat[3] == 1.0
    assert sorted(stats.pass_at) == [1, 2, 3]
    # 2 of 3 pass: pass@2 = 1 - C(1,2)/C(3,2) = 1; pass^2 = C(2,2)/C(3,2) = 1/3.
    two = case_stats("d", ["pass", "model_fail", "pass"])
    assert format_pass_k(two) == "@1 0.67 @2 1.00 @3 1.00 | ^1 0.67 ^2 0.33 ^3 0.00"
    assert format_pass_k(case_stats("e", ["infra_fail"])) == "n/a"


def test_clustered_standard_error_by_hand() -> None:
    # One run per case: the ordinary SE of the mean. 1,0,1,1: mean .75, sd .5, SE .25.
    one = clustered_mean([[True], [False], [True], [True]])
    assert one.mean == 0.75 and one.se == pytest.approx(0.25)
    # Two cases, two runs each, each case all-pass or all-fail: mean .5, residual sums +1 and
    # -1, SE^2 = 2/1 * (1 + 1) / 4^2 = 1/4, SE = .5 -- twice the naive sqrt(.25/4) = .25.
    two = clustered_mean([[True, True], [False, False]])
    assert two.mean == 0.5 and two.se == pytest.approx(0.5)
    assert two.interval == pytest.approx((0.5 - 1.96 * 0.5, 0.5 + 1.96 * 0.5))


def test_paired_difference_by_hand() -> None:
    # d = 1, .5, 0, 0: mean .375; sum of squared deviations .6875, sd = sqrt(.6875/3).
    res = paired_difference([0, 0, 0.5, 1], [1, 0.5, 0.5, 1])
    se = math.sqrt(0.6875 / 3) / 2
    assert res.diff == pytest.approx(0.375) and res.se == pytest.approx(se)
    assert res.p_value == pytest.approx(2 * (1 - NormalDist().cdf(0.375 / se)))
    assert res.p_value == pytest.approx(0.1172, abs=1e-3)
    assert res.interval == pytest.approx((0.375 - 1.96 * se, 0.375 + 1.96 * se))
    same = paired_difference([0.5, 1], [0.5, 1])
    assert same.diff == 0 and same.p_value == 1.0
    with pytest.raises(ValueError):
        paired_difference([1.0], [1.0, 0.0])


def test_mcnemar_exact_by_hand() -> None:
    # 1 vs 6 discordant: P(X <= 1 | n=7, 1/2) = 8/128; two-sided 16/128.
    assert mcnemar_exact(1, 6) == pytest.approx(0.125)
    assert mcnemar_exact(6, 1) == pytest.approx(0.125)
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(3, 3) == 1.0 and mcnemar_exact(0, 0) == 1.0


def test_bootstrap_resamples_cases_and_is_seeded() -> None:
    a, b = [0.0, 0.0, 0.5, 1.0, 0.2], [1.0, 0.5, 0.5, 1.0, 0.4]
    first = bootstrap_cases(a, b, seed=7)
    assert first == bootstrap_cases(a, b, seed=7)
    # Case differences are 1, .5, 0, 0, .2: a resampled mean lies within [0, 1], and the
    # interval holds the observed mean .34.
    assert 0.0 <= first[0] <= 0.34 <= first[1] <= 1.0
    # Every case the same difference: no spread to resample.
    assert bootstrap_cases([0.0, 0.0], [0.5, 0.5]) == (0.5, 0.5)


def _naive_run_level_p(a_runs: list[bool], b_runs: list[bool]) -> float:
    """Two-proportion z test over runs, as if every run were an independent sample."""
    na, nb = len(a_runs), len(b_runs)
    pooled = (sum(a_runs) + sum(b_runs)) / (na + nb)
    se = math.sqrt(pooled * (1 - pooled) * (1 / na + 1 / nb))
    diff = sum(b_runs) / nb - sum(a_runs) / na
    return 1.0 if se == 0 else 2 * (1 - NormalDist().cdf(abs(diff) / se))


def _simulate(interaction: float, sims: int = 1000, cases: int = 30, k: int = 5) -> list[float]:
    """False-positive rates (paired test, naive run-level test) at alpha .05 over simulated
    comparisons whose null holds: per-case rates vary (.05 to .95); with ``interaction``, B is
    better on half the cases and worse on the other half by that much (no difference on
    average over the case population), else B's rate equals A's on every case (A/A)."""
    rng = random.Random(2411)
    paired = naive = 0
    for _ in range(sims):
        rates_a, rates_b, runs_a, runs_b = [], [], [], []
        for _ in range(cases):
            p = rng.choice([0.05, 0.3, 0.7, 0.95])
            shift = rng.choice([-interaction, interaction]) / 2
            pa, pb = min(max(p - shift, 0), 1), min(max(p + shift, 0), 1)
            xa = [rng.random() < pa for _ in range(k)]
            xb = [rng.random() < pb for _ in range(k)]
            runs_a += xa
            runs_b += xb
            rates_a.append(sum(xa) / k)
            rates_b.append(sum(xb) / k)
        paired += paired_difference(rates_a, rates_b).p_value < 0.05
        naive += _naive_run_level_p(runs_a, runs_b) < 0.05
    return [paired / sims, naive / sims]


def test_simulated_null_paired_test_holds_its_level_and_run_level_does_not() -> None:
    # A/A (the same true per-case rates): the paired test rejects near the nominal 5%.
    aa_paired, _ = _simulate(interaction=0.0)
    assert 0.02 <= aa_paired <= 0.09
    # The null over the case population with per-case effects that cancel: the paired test
    # still holds its level; the run-level test treats 150 runs as 150 independent samples,
    # ignores how much cases differ, and rejects a true null far more often.
    paired, naive = _simulate(interaction=0.4)
    assert 0.02 <= paired <= 0.09
    assert naive > 0.1 and naive > 2 * paired


def test_clustered_interval_covers_the_population_mean_and_the_naive_one_does_not() -> None:
    # Cases drawn from a population whose true mean rate is .5, 5 runs each.
    rng = random.Random(7)
    clustered = naive = 0
    sims = 1000
    for _ in range(sims):
        per_case = []
        for _ in range(30):
            p = rng.choice([0.05, 0.3, 0.7, 0.95])
            per_case.append([rng.random() < p for _ in range(5)])
        est = clustered_mean(per_case)
        clustered += est.interval[0] <= 0.5 <= est.interval[1]
        half = 1.96 * math.sqrt(est.mean * (1 - est.mean) / 150)
        naive += est.mean - half <= 0.5 <= est.mean + half
    assert 0.91 <= clustered / sims <= 0.98
    assert naive / sims < 0.85
