"""Statistics over several runs per case, and over cases: the one module ``replay results
report`` and the run summary both use.

Quality numbers are computed over runs whose wire was healthy; transport and infrastructure
failures are reported beside them, never folded in.

Sources:

- pass@k, unbiased estimator 1 - C(n-c, k) / C(n, k): Chen et al. 2021, "Evaluating Large
  Language Models Trained on Code", arXiv 2107.03374.
- pass^k, all of k runs succeed, C(c, k) / C(n, k): Yao et al. 2024, "tau-bench", arXiv
  2406.12045.
- Cases as clusters, clustered standard errors, the paired difference over the same cases,
  and a bootstrap that resamples cases (never runs): Miller 2024, "Adding Error Bars to
  Evals", arXiv 2411.00640.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from replay.base.outcomes import HEALTHY, Outcome


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a proportion (95% by default); (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: the chance that at least one of k runs drawn from n passes."""
    if k > n:
        raise ValueError(f"k={k} is more than the {n} runs")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k (tau-bench): the chance that all of k runs drawn from n pass."""
    if k > n:
        raise ValueError(f"k={k} is more than the {n} runs")
    return math.comb(c, k) / math.comb(n, k)


@dataclass(frozen=True)
class CaseStats:
    case_id: str
    runs: int
    healthy: int
    """Runs whose wire and sandbox were healthy: the denominator of quality."""
    passes: int
    outcomes: dict[str, int]
    """Runs by outcome (its value)."""
    pass_rate: float | None
    interval: tuple[float, float]
    pass_at: dict[int, float]
    pass_hat: dict[int, float]


def case_stats(case_id: str, outcomes: Sequence[str], ks: Sequence[int] | None = None) -> CaseStats:
    """Counts and rates of one case; pass@k and pass^k for each k in ``ks`` that the healthy
    runs allow, every k from 1 to the healthy count by default (retried transport failures
    are runs too, but never healthy ones, so they never push k past what can be computed)."""
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[str(o)] = counts.get(str(o), 0) + 1
    healthy = sum(counts.get(o.value, 0) for o in HEALTHY)
    passes = counts.get(Outcome.PASS.value, 0)
    usable = [k for k in (ks or range(1, healthy + 1)) if 0 < k <= healthy]
    return CaseStats(
        case_id=case_id,
        runs=len(outcomes),
        healthy=healthy,
        passes=passes,
        outcomes=counts,
        pass_rate=passes / healthy if healthy else None,
        interval=wilson(passes, healthy),
        pass_at={k: pass_at_k(healthy, passes, k) for k in usable},
        pass_hat={k: pass_hat_k(healthy, passes, k) for k in usable},
    )


def format_pass_k(stats: CaseStats) -> str:
    """pass@k and pass^k for every k computed, compactly: ``@1 .67 @2 1.00 | ^1 .67 ^2 .33``."""
    if not stats.pass_at:
        return "n/a"
    at = " ".join(f"@{k} {v:.2f}" for k, v in stats.pass_at.items())
    hat = " ".join(f"^{k} {v:.2f}" for k, v in stats.pass_hat.items())
    return f"{at} | {hat}"


def normal_two_sided_p(z: float) -> float:
    """Two-sided p-value of a standard normal statistic."""
    return math.erfc(abs(z) / math.sqrt(2))


@dataclass(frozen=True)
class MeanEstimate:
    mean: float
    se: float
    """Case-clustered standard error."""
    interval: tuple[float, float]
    """Normal 95% interval (mean +- 1.96 se), widened to the Wilson interval of all the runs
    taken as independent where that is wider: never narrower than the runs' own noise."""
    cases: int


def clustered_mean(per_case: Sequence[Sequence[bool]], z: float = 1.96) -> MeanEstimate:
    """Mean pass rate over all healthy runs, with a standard error clustered by case.

    Runs of one case are not independent (the case's difficulty is shared), so the case is
    the cluster (Miller 2024, clustered standard errors): with per-run scores x_{i,j} and the mean
    m over all N runs, SE^2 = n/(n-1) * sum_i (sum_j (x_{i,j} - m))^2 / N^2 over n cases.
    With one run per case this is the ordinary SE of the mean, sd/sqrt(n).

    When every case's runs agree (all pass, or all fail) the clustered SE is 0 and the normal
    interval a point, which says more than 6 runs can: the interval is never narrower than
    the Wilson interval of the same runs taken as independent (clustering only widens it), so
    6 failed runs give 0.00-0.39, as ``replay run`` shows for them.
    """
    cases = [list(runs) for runs in per_case if runs]
    n = len(cases)
    total = sum(len(runs) for runs in cases)
    if n == 0:
        raise ValueError("no case with a healthy run")
    mean = sum(sum(runs) for runs in cases) / total
    if n < 2:
        return MeanEstimate(mean, math.nan, (0.0, 1.0), n)
    resid = sum(sum(x - mean for x in runs) ** 2 for runs in cases)
    se = math.sqrt(n / (n - 1) * resid) / total
    low, high = wilson(sum(sum(runs) for runs in cases), total, z)
    return MeanEstimate(mean, se, (min(mean - z * se, low), max(mean + z * se, high)), n)


@dataclass(frozen=True)
class PairedDifference:
    diff: float
    """Mean over cases of p_B,i - p_A,i."""
    se: float
    interval: tuple[float, float]
    p_value: float
    cases: int


def paired_difference(
    rates_a: Sequence[float], rates_b: Sequence[float], z: float = 1.96
) -> PairedDifference:
    """Paired difference of two arms over the same cases (Miller 2024, paired differences):
    d_i = p_B,i - p_A,i, SE = sd(d)/sqrt(n), a normal interval and p-value.

    The per-case rates are each arm's pass rate over its healthy runs of case i; cases are
    paired by position.
    """
    if len(rates_a) != len(rates_b):
        raise ValueError("the two arms must cover the same cases")
    n = len(rates_a)
    if n < 2:
        raise ValueError("a paired difference needs at least two cases")
    d = [b - a for a, b in zip(rates_a, rates_b, strict=True)]
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    se = sd / math.sqrt(n)
    p = (1.0 if mean == 0 else 0.0) if se == 0 else normal_two_sided_p(mean / se)
    return PairedDifference(mean, se, (mean - z * se, mean + z * se), p, n)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """McNemar's exact test for k = 1: two-sided p-value of the discordant cases (A passes
    and B fails: ``a_only``; the reverse: ``b_only``) under Binomial(a_only + b_only, 1/2)."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    low = min(a_only, b_only)
    tail = sum(math.comb(n, i) for i in range(low + 1)) / float(1 << n)
    return min(1.0, 2 * tail)


def bootstrap_cases(
    rates_a: Sequence[float],
    rates_b: Sequence[float],
    *,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the paired difference, resampling CASES with
    replacement (never runs: a bootstrap over runs treats them as independent and is too
    narrow; Miller 2024). Seeded, so a report is reproducible."""
    if len(rates_a) != len(rates_b) or not rates_a:
        raise ValueError("the two arms must cover the same, non-empty, cases")
    d = [b - a for a, b in zip(rates_a, rates_b, strict=True)]
    n = len(d)
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(d, k=n)) / n for _ in range(resamples))
    tail = (1 - level) / 2
    lo = means[math.floor(tail * (resamples - 1))]
    hi = means[math.ceil((1 - tail) * (resamples - 1))]
    return lo, hi


# ----------------------------------------------------------------------------- two arms
#
# ``replay compare``'s statistics. Cases are few (tens, often fewer) and runs per case fewer
# still, so two choices keep small samples honest:
#
# - Student's t with n - 1 degrees of freedom over the n paired cases, not the normal: with 3
#   cases the 95% multiplier is 4.30, not 1.96.
# - The standard error of a difference is never taken below the runs' own binomial noise. An
#   arm that passed 3 of 3 runs of every case shows no variance at all, yet 3 runs cannot
#   tell a rate of 1 from one of 0.8. Each case's rate is smoothed by half a run each way
#   ((c + 1/2) / (k + 1), the Jeffreys prior's centre) for this floor only, so a unanimous arm
#   still carries the uncertainty of its k runs; the estimate itself is never smoothed.


def t_quantile(p: float, df: int) -> float:
    """The p-quantile of Student's t with ``df`` degrees of freedom (scipy)."""
    from scipy import stats as st

    return float(st.t.ppf(p, df))


def smoothed_variance(passes: int, runs: int) -> float:
    """p~(1 - p~) of one case's runs, p~ = (c + 1/2) / (k + 1): the per-run binomial variance,
    never zero (see above)."""
    p = (passes + 0.5) / (runs + 1)
    return p * (1 - p)


@dataclass(frozen=True)
class ArmCase:
    """One arm's healthy runs of one case: what a paired comparison reads."""

    passes: int
    runs: int

    @property
    def rate(self) -> float:
        return self.passes / self.runs


@dataclass(frozen=True)
class Comparison:
    estimate: float
    """Mean over cases of B's rate minus A's."""
    se: float
    """max(sd(d)/sqrt(n), the binomial floor)."""
    interval: tuple[float, float]
    """t interval at the confidence asked, clipped to [-1, 1]."""
    p_value: float
    test: str
    cases: int


def binomial_floor_se(a: Sequence[ArmCase], b: Sequence[ArmCase]) -> float:
    """The standard error the difference of means would have from the runs' binomial noise
    alone (cases fixed): sqrt(sum_i v~_A,i / k_A,i + v~_B,i / k_B,i) / n."""
    n = len(a)
    total = sum(
        smoothed_variance(x.passes, x.runs) / x.runs + smoothed_variance(y.passes, y.runs) / y.runs
        for x, y in zip(a, b, strict=True)
    )
    return math.sqrt(total) / n


def compare_arms(
    a: Sequence[ArmCase],
    b: Sequence[ArmCase],
    *,
    confidence: float = 0.95,
    rates_a: Sequence[float] | None = None,
    rates_b: Sequence[float] | None = None,
) -> Comparison:
    """The paired difference B - A over the same cases (Miller 2024), with a t interval.

    ``rates_a``/``rates_b`` replace the per-case pass rates by another per-case metric
    (pass^k, say); the binomial floor is still the runs'. With one run per case in both arms
    the p-value is McNemar's exact test on the discordant cases.
    """
    if len(a) != len(b):
        raise ValueError("the two arms must cover the same cases")
    n = len(a)
    if n < 2:
        raise ValueError("a paired comparison needs at least two cases")
    ra = list(rates_a) if rates_a is not None else [x.rate for x in a]
    rb = list(rates_b) if rates_b is not None else [y.rate for y in b]
    d = [y - x for x, y in zip(ra, rb, strict=True)]
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    se = max(sd / math.sqrt(n), binomial_floor_se(a, b))
    df = n - 1
    half = t_quantile(1 - (1 - confidence) / 2, df) * se
    interval = (max(-1.0, mean - half), min(1.0, mean + half))
    if all(x.runs == 1 for x in a) and all(y.runs == 1 for y in b) and rates_a is None:
        a_only = sum(x.passes == 1 and y.passes == 0 for x, y in zip(a, b, strict=True))
        b_only = sum(x.passes == 0 and y.passes == 1 for x, y in zip(a, b, strict=True))
        p = mcnemar_exact(a_only, b_only)
        test = f"McNemar exact over {n} cases (one run each)"
    else:
        from scipy import stats as st

        p = float(2 * st.t.sf(abs(mean) / se, df))
        test = f"paired t over {n} cases ({df} df)"
    return Comparison(mean, se, interval, p, test, n)


def minimum_detectable_effect(
    se_null: float, cases: int, *, confidence: float = 0.95, power: float = 0.8
) -> float:
    """The smallest true difference the comparison would find with probability ``power`` at
    the two-sided ``confidence``: (t_{1-alpha/2} + t_{power}) * SE under A/A, n - 1 df."""
    df = max(cases - 1, 1)
    return (t_quantile(1 - (1 - confidence) / 2, df) + t_quantile(power, df)) * se_null


def cases_needed(
    se_null: float,
    cases: int,
    effect: float,
    *,
    confidence: float = 0.95,
    power: float = 0.8,
    limit: int = 1_000_000,
) -> int | None:
    """The fewest cases (same runs per case, cases like these) whose minimum detectable effect
    is at most ``effect``: the standard error falls as sqrt(cases / n) and the t quantiles
    shrink with the degrees of freedom. None beyond ``limit``; at least the cases at hand."""
    if effect <= 0:
        raise ValueError("the effect must be positive")
    unit = se_null * math.sqrt(cases)

    def detects(n: int) -> bool:
        return (
            minimum_detectable_effect(unit / math.sqrt(n), n, confidence=confidence, power=power)
            <= effect
        )

    if detects(cases):
        return cases
    high = max(cases, 2)
    while not detects(high):
        if high >= limit:
            return None
        high = min(high * 2, limit)
    low = high // 2
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if detects(mid) else (mid, high)
    return high
