"""A run's own overhead: everything but the harness's time (world, sandbox, diff, hidden
tests, grading, event log, results), against the harness's time and against its floor.

The floor is what any run of the case must pay: one bare ``docker run`` of the case's
environment image that runs the hidden test command (no sandbox, no gateway, no grading
around it). It is measured before and after the batch of runs, alternately, and its median
taken; the runs are one ``run_case`` call with ``--runs 3`` (one warm world, reset between
runs; every run but the first has its sandbox started while the run before it is graded),
on the demo's gold trajectory. The median is one of the later runs': the first one's figure
includes the world's start (the "overheads" listed show it apart). A run's own clock leaves
out what was done for it ahead of time, so a third row times the calls from outside: one
run alone, then the batch; what each further run adds to the wall clock, less its harness,
is what a run costs in a batch.

Beside the times, which a shared machine makes noisy, the operations a run makes are counted
(Docker API calls, containers created, execs, copies in and out): they do not vary with load.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from bench.common import ROOT_DIR, Measured, at_most, sized, suite

T = TypeVar("T")
CASE = ROOT_DIR / "cases" / "demo-caret-zero" / "case.yaml"
RUNS = 3
FLOORS = 2
"""Floor measurements before the batch, and as many after it."""


def _floor(image: str, workdir: str, command: str) -> float:
    """Seconds of one bare ``docker run`` of the env image running the hidden test command."""
    start = time.perf_counter()
    subprocess.run(
        ["docker", "run", "--rm", "--network", "none", "-w", workdir, image, "bash", "-c", command],
        capture_output=True,
        check=False,  # the hidden tests are not there: some may fail, it costs the same
    )
    return time.perf_counter() - start


@contextmanager
def _docker_calls() -> Iterator[Counter[str]]:
    """Every Docker API call made in the block, by kind (``create``, ``exec``, ``copy-in``...)."""
    from docker.api.client import APIClient  # type: ignore[import-untyped]

    calls: Counter[str] = Counter()
    send = APIClient.send

    def counted(self: APIClient, request: Any, **kwargs: Any) -> Any:
        path, method = request.path_url.split("?")[0], request.method
        calls["api"] += 1
        if method == "POST" and path.endswith("/containers/create"):
            calls["containers"] += 1
        elif method == "POST" and path.endswith("/exec"):
            calls["execs"] += 1
        elif path.endswith("/archive"):
            calls["copy-ins" if method == "PUT" else "copy-outs"] += 1
        return send(self, request, **kwargs)

    APIClient.send = counted
    try:
        yield calls
    finally:
        APIClient.send = send


@suite
def runs() -> list[Measured]:
    from replay.base.case import load_case
    from replay.base.outcomes import Outcome
    from replay.images.env import cached_env_image
    from replay.run.runner import RunOptions, run_case
    from replay.runtime import get_runtime

    out = Path(tempfile.mkdtemp(prefix="replay-bench-runs-"))
    # The first run may build the environment image; it is not part of a run's cost.
    run_case(CASE, RunOptions(stub="gold", out=out, db=str(out / "r.db")))
    case = load_case(CASE)
    runtime = get_runtime("docker")
    try:
        env = cached_env_image(case, runtime)
    finally:
        runtime.close()
    assert env is not None
    command = case.hidden_tests.command.replace("{junit}", "/tmp/replay-floor.xml")
    floors = [_floor(env.id, case.environment.workdir, command) for _ in range(sized(FLOORS, 1))]
    # One run alone (its own world started and stopped), then RUNS in one call, each timed
    # from outside: what RUNS - 1 more runs add to the wall clock is what a run costs in a
    # batch, whatever each run's own clock leaves out (a sandbox started ahead).
    one, alone = _timed(
        lambda: run_case(CASE, RunOptions(stub="gold", out=out, db=str(out / "r.db")))
    )
    with _docker_calls() as calls:
        wall, results = _timed(
            lambda: run_case(
                CASE, RunOptions(stub="gold", runs=RUNS, out=out, db=str(out / "r.db"))
            )
        )
    floors += [_floor(env.id, case.environment.workdir, command) for _ in range(sized(FLOORS, 1))]
    assert all(r.outcome == Outcome.PASS for r in [*alone, *results]), [
        r.reason for r in [*alone, *results]
    ]
    harness = [r.grade.seconds.harness for r in results]
    more = ((wall - sum(harness)) - (one - alone[0].grade.seconds.harness)) / (RUNS - 1)
    total = [r.grade.seconds.total for r in results]
    overhead = [t - h for t, h in zip(total, harness, strict=True)]
    spread = ", ".join(f"{o:.1f}" for o in overhead)
    floor_spread = ", ".join(f"{f:.1f}" for f in floors)
    counts = ", ".join(
        f"{calls[k] / RUNS:.0f} {k}"
        for k in ("api", "containers", "execs", "copy-ins", "copy-outs")
    )
    return [
        Measured(
            f"runner overhead vs harness time (gold, median of {RUNS})",
            statistics.median(overhead),
            statistics.median(harness),
            goal=f"(was 5.5x) overheads s: {spread}",
            spread=f"per run (world start included): {counts}",
        ),
        Measured(
            "run overhead vs its floor (bare docker run of the tests)",
            statistics.median(overhead),
            statistics.median(floors),
            goal=at_most(2.0),
            spread=f"floors s: {floor_spread}",
        ),
        Measured(
            f"  a run's wall clock in a batch, less its harness: {RUNS} runs vs 1, per run",
            more,
            statistics.median(floors),
            goal=at_most(2.0),
            spread=f"1 run {one:.1f}s, {RUNS} runs {wall:.1f}s (harness {sum(harness):.1f}s)",
        ),
    ]


def _timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value
