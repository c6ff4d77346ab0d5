"""Benchmarks that report ratios measured side by side in one run, never absolute verdicts.

Timings on a shared 2-core machine are noisy; a ratio of two things measured in the same
process, interleaved, is what carries over. ``python bench/run.py [SUITE...]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


@dataclass(frozen=True)
class Pair:
    """Two ways of doing one thing; the ratio is ``subject / baseline``."""

    name: str
    subject: Callable[[], object]
    baseline: Callable[[], object]
    unit: str = "call"


SUITES: dict[str, Callable[[], list[Pair]]] = {}


def suite(fn: Callable[[], list[Pair]]) -> Callable[[], list[Pair]]:
    SUITES[fn.__name__] = fn
    return fn


def measure(pair: Pair, rounds: int) -> tuple[float, float]:
    """Median seconds per call of subject and baseline, interleaved round by round."""
    subject, baseline = [], []
    for _ in range(rounds):
        for fn, sink in ((pair.subject, subject), (pair.baseline, baseline)):
            start = time.perf_counter()
            fn()
            sink.append(time.perf_counter() - start)
    return statistics.median(subject), statistics.median(baseline)


@suite
def snapshot() -> list[Pair]:
    """Loading the demo snapshot (every hash checked, every file validated) vs reading its bytes."""
    from replay.snapshot import load_snapshot
    from replay.snapshot.load import list_files

    snap = ROOT / "snapshots" / "demo"
    files = [snap / name for name in list_files(snap)]
    return [
        Pair(
            "load_snapshot vs reading the same files",
            lambda: load_snapshot(snap),
            lambda: [f.read_bytes() for f in files],
        )
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "suites", nargs="*", help=f"suites to run (default: all of {sorted(SUITES)})"
    )
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    unknown = set(args.suites) - set(SUITES)
    if unknown:
        parser.error(f"unknown suite(s) {sorted(unknown)}; known: {sorted(SUITES)}")
    print(f"{'suite':<12} {'comparison':<50} {'subject':>12} {'baseline':>12} {'ratio':>8}")
    for name in args.suites or sorted(SUITES):
        for pair in SUITES[name]():
            subject, baseline = measure(pair, args.rounds)
            print(
                f"{name:<12} {pair.name:<50} {subject * 1e3:>10.2f}ms {baseline * 1e3:>10.2f}ms "
                f"{subject / baseline:>7.1f}x"
            )


if __name__ == "__main__":
    main()
