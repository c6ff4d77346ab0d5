"""What every benchmark suite uses: a pair of things measured side by side, and a registry.

A suite is a function returning :class:`Pair` objects, registered with :func:`suite` in any
module of ``bench/``; ``bench/run.py`` imports them all.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT_DIR = Path(__file__).resolve().parent.parent

SMOKE = False
"""Set by ``bench/run.py --smoke``: every suite at its smallest (one round, short loads), to
show that each row is produced with its goal; the figures of such a run mean nothing."""


def sized(full: int, smoke: int) -> int:
    """``full``, or ``smoke`` in a smoke run (rounds, requests per load, repeats)."""
    return smoke if SMOKE else full


@dataclass(frozen=True)
class Goal:
    """What a row must show (the issue's goal), checked on its two figures."""

    text: str
    met: Callable[[float, float], bool]
    """(subject, baseline) seconds -> whether the goal is met."""
    figure: Callable[[float, float], str] | None = None
    """The figure the goal speaks of, when it is not the ratio (an overhead in ms...)."""


def at_most(ratio: float) -> Goal:
    return Goal(f"<= {ratio:g}x", lambda s, b: s <= ratio * b)


def overhead_at_most(ms: float) -> Goal:
    return Goal(
        f"<= +{ms:g}ms",
        lambda s, b: (s - b) * 1e3 <= ms,
        lambda s, b: f"{(s - b) * 1e3:+.2f}ms",
    )


def rate_at_least(ratio: float) -> Goal:
    """For rows whose figures are rates (``unit="/s"``): subject / baseline at least."""
    return Goal(f">= {ratio:g}x", lambda s, b: s >= ratio * b)


def throughput_at_least(ratio: float) -> Goal:
    """For rows whose figures are seconds per request under load: 1 / throughput."""
    return Goal(
        f">= {ratio:g}x thru",
        lambda s, b: b >= ratio * s,
        lambda s, b: f"{b / s:.2f}x thru",
    )


@dataclass(frozen=True)
class Pair:
    """Two ways of doing one thing; the ratio is ``subject / baseline``."""

    name: str
    subject: Callable[[], object]
    baseline: Callable[[], object]
    rounds: int | None = None
    """Override the runner's rounds for slow pairs."""
    goal: Goal | str | None = None
    """The goal for the ratio: a :class:`Goal` (checked, met or MISSED) or its text alone
    (e.g. ``<= 1.3x``), printed beside it."""


@dataclass(frozen=True)
class Measured:
    """Two parts of one operation, timed by the operation itself (e.g. a run's own clocks)."""

    name: str
    subject: float
    """Seconds (or, with ``unit="/s"``, a rate)."""
    baseline: float
    """Seconds (or, with ``unit="/s"``, a rate)."""
    goal: Goal | str | None = None
    """As :attr:`Pair.goal`."""
    unit: str = "s"
    """``s`` (printed as ms), ``/s`` or ``/min`` (a rate, e.g. requests per second), or
    ``cores`` (CPU cores busy)."""
    spread: str = ""
    """The ratio's spread over repeated rounds, printed after the goal."""


SUITES: dict[str, Callable[[], list[Pair | Measured]]] = {}


def suite(fn: Callable[[], list[Pair | Measured]]) -> Callable[[], list[Pair | Measured]]:
    SUITES[fn.__name__] = fn
    return fn


def measure(pair: Pair | Measured, rounds: int) -> tuple[float, float]:
    """Median seconds per call of subject and baseline, interleaved round by round."""
    if isinstance(pair, Measured):
        return pair.subject, pair.baseline
    subject: list[float] = []
    baseline: list[float] = []
    for _ in range(sized(pair.rounds or rounds, 1)):
        for fn, sink in ((pair.subject, subject), (pair.baseline, baseline)):
            start = time.perf_counter()
            fn()
            sink.append(time.perf_counter() - start)
    return statistics.median(subject), statistics.median(baseline)
