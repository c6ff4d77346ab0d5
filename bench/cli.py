"""The command line's own cost: ``replay --help`` beside starting the interpreter at all.

Row (issue 35's goal beside it): ``replay --help`` in a new process, under 0.5 s; the baseline
is ``python -c pass`` in a new process, so the ratio says what importing the command line
costs on this machine. Help is what a person types first: the command groups' modules import
what they drive when a command runs, not when the command line is assembled.
"""

from __future__ import annotations

import subprocess
import sys

from bench.common import Goal, Pair, sized, suite

HELP_LIMIT = 0.5
"""Seconds ``replay --help`` may take (issue 35)."""


def _run(*argv: str) -> None:
    subprocess.run([sys.executable, *argv], check=True, capture_output=True)


@suite
def cli() -> list[Pair]:
    return [
        Pair(
            "replay --help vs python -c pass (new processes)",
            lambda: _run("-m", "replay", "--help"),
            lambda: _run("-c", "pass"),
            rounds=sized(15, 1),
            goal=Goal(
                f"<= {HELP_LIMIT:g}s",
                lambda s, b: s <= HELP_LIMIT,
                lambda s, b: f"{s * 1e3:.0f}ms",
            ),
        )
    ]
