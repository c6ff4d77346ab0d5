"""Statistics over several runs per case: rates with Wilson intervals, pass@k and pass^k.

Quality numbers are computed over runs whose wire was healthy; transport and infrastructure
failures are reported beside them, never folded in.
"""

from __future__ import annotations

import math
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


def case_stats(case_id: str, outcomes: Sequence[str], ks: Sequence[int] = (1, 3)) -> CaseStats:
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[str(o)] = counts.get(str(o), 0) + 1
    healthy = sum(counts.get(o.value, 0) for o in HEALTHY)
    passes = counts.get(Outcome.PASS.value, 0)
    usable = [k for k in ks if 0 < k <= healthy]
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
