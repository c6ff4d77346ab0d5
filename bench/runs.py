"""The runner's own overhead per run: everything but the harness's time (world, sandbox,
diff, hidden tests, grading), as a ratio to the harness's time on the demo's gold trajectory.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from bench.common import ROOT_DIR, Measured, suite

CASE = ROOT_DIR / "cases" / "demo-caret-zero" / "case.yaml"
RUNS = 3


@suite
def runs() -> list[Measured]:
    from replay.base.outcomes import Outcome
    from replay.run.runner import RunOptions, run_case

    out = Path(tempfile.mkdtemp(prefix="replay-bench-runs-"))
    # The first run may build the environment image; it is not part of a run's cost.
    run_case(CASE, RunOptions(stub="gold", out=out, db=str(out / "r.db")))
    results = run_case(CASE, RunOptions(stub="gold", runs=RUNS, out=out, db=str(out / "r.db")))
    assert all(r.outcome == Outcome.PASS for r in results), [r.reason for r in results]
    harness = [r.grade.seconds.harness for r in results]
    total = [r.grade.seconds.total for r in results]
    overhead = [t - h for t, h in zip(total, harness, strict=True)]
    return [
        Measured(
            f"runner overhead vs harness time (gold, median of {RUNS})",
            statistics.median(overhead),
            statistics.median(harness),
        )
    ]
