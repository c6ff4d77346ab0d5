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


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
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
    """Normal 95% interval (mean +- 1.96 se)."""
    cases: int


def clustered_mean(per_case: Sequence[Sequence[bool]], z: float = 1.96) -> MeanEstimate:
    """Mean pass rate over all healthy runs, with a standard error clustered by case.

    Runs of one case are not independent (the case's difficulty is shared), so the case is
    the cluster (Miller 2024, clustered standard errors): with per-run scores x_{i,j} and the mean
    m over all N runs, SE^2 = n/(n-1) * sum_i (sum_j (x_{i,j} - m))^2 / N^2 over n cases.
    With one run per case this is the ordinary SE of the mean, sd/sqrt(n).
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
    return MeanEstimate(mean, se, (mean - z * se, mean + z * se), n)


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
