"""Benchmarks that report ratios measured side by side in one run, never absolute verdicts.

Timings on a shared 2-core machine are noisy; a ratio of two things measured in the same
process, interleaved, is what carries over. ``python bench/run.py [SUITE...]``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import common  # noqa: E402 - needs the path above
from bench.common import SUITES, Goal, Measured, measure  # noqa: E402


def load_suites() -> None:
    for module in sorted(Path(__file__).parent.glob("*.py")):
        if module.stem not in ("run", "common", "__init__"):
            importlib.import_module(f"bench.{module.stem}")


def main() -> None:
    load_suites()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("suites", nargs="*", help=f"default: all of {sorted(SUITES)}")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="every suite at its smallest, to show each row is produced: its figures mean nothing",
    )
    args = parser.parse_args()
    common.SMOKE = args.smoke
    unknown = set(args.suites) - set(SUITES)
    if unknown:
        parser.error(f"unknown suite(s) {sorted(unknown)}; known: {sorted(SUITES)}")
    if args.smoke:
        print("# smoke run: one round, short loads; the figures below are not measurements")
    print(
        f"{'suite':<12} {'comparison':<58} {'subject':>11} {'baseline':>11} {'ratio':>7}"
        f"   {'goal':<16} {'figure':>12}"
    )
    for name in args.suites or sorted(SUITES):
        for pair in SUITES[name]():
            subject, baseline = measure(pair, args.rounds)
            unit = pair.unit if isinstance(pair, Measured) else "s"
            spread = pair.spread if isinstance(pair, Measured) else ""
            goal = ""
            if isinstance(pair.goal, Goal):
                shown = pair.goal.figure(subject, baseline) if pair.goal.figure else ""
                verdict = "met" if pair.goal.met(subject, baseline) else "MISSED"
                goal = f"   {pair.goal.text:<16} {shown:>12} {verdict}"
            elif pair.goal:
                goal = f"   {pair.goal:<16}"
            print(
                f"{name:<12} {pair.name:<58} {_value(subject, unit)} {_value(baseline, unit)} "
                f"{subject / baseline:>6.2f}x{goal}{'  ' + spread if spread else ''}",
                flush=True,
            )


def _value(value: float, unit: str) -> str:
    if unit == "/min":
        return f"{value:>7.1f}/min"
    if unit == "cores":
        return f"{value:>5.2f} cores"
    return f"{value:>9.0f}/s" if unit == "/s" else f"{value * 1e3:>9.2f}ms"


if __name__ == "__main__":
    main()
