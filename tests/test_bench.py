"""The benchmark runner works and prints ratios (no timing is asserted: timings are noisy)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_runner_prints_a_ratio_per_pair() -> None:
    done = subprocess.run(
        [sys.executable, "bench/run.py", "snapshot", "--rounds", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("snapshot ")]
    assert len(lines) == 3  # the suite's three pairs
    for line in lines:
        assert re.search(r"\d+\.\d+x(   .* (met|MISSED))?$", line), line


def test_unknown_suite_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, "bench/run.py", "nope"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2 and "unknown suite" in done.stderr
