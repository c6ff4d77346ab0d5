"""The benchmark runner works and prints ratios (no timing is asserted: timings are noisy)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

from bench.batch import Usage

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


def test_batch_bench_runs_each_worker_count_on_a_fresh_batch() -> None:
    """The batch bench's plumbing with a fake run (no Docker, nothing timed): every worker
    count runs the whole plan, and the rows compare each to one worker."""
    from bench.batch import CASE, machine_limit, rows, run_batches
    from replay.base.outcomes import Outcome
    from replay.batch.engine import Finished
    from replay.batch.plan import PlannedRun
    from replay.run.runner import RunOptions

    seen: list[tuple[str, float]] = []

    def fake(item: PlannedRun, options: RunOptions) -> Finished:
        seen.append((item.key, options.stub_think_seconds))
        time.sleep(0.05)
        return Finished(uuid.uuid4().hex, Outcome.PASS, 10, 0.0)

    batches = run_batches(CASE, (1, 2), runs=3, think=2.5, starts=1000, cores=2, run=fake)
    assert [b.jobs for b in batches] == [1, 2]
    assert all(b.runs == 3 and b.outcomes == {"pass": 3} for b in batches)
    # The same three keys in each batch (each has its own database), the think time passed on.
    assert len(seen) == 6 and len({k for k, _ in seen}) == 3
    assert {t for _, t in seen} == {2.5}
    for b in batches:
        assert 0 <= b.usage.cores <= 2 and b.usage.min_available > 0
        assert b.usage.own_memory > 0  # this process at least
    limit = machine_limit(Usage(0.5, 8 << 30), batches[0], cores=2, memory=16 << 30, starts=1000)
    table = rows(batches, Usage(0.5, 8 << 30), limit, cores=2)
    assert [r.name for r in table] == [
        "batch runs/min, 1 worker(s) vs 1 (3 runs)",
        "batch runs/min, 2 worker(s) vs 1 (3 runs)",
        "CPU busy during 2 workers vs cores (idle: 0.50)",
    ]
    assert table[0].subject == table[0].baseline == batches[0].per_minute
    assert table[1].subject == batches[1].per_minute and table[1].unit == "/min"
    assert isinstance(table[2].goal, str) and table[2].goal.startswith("limit: ")


def test_batch_limit_says_when_the_machine_cpu_was_full() -> None:
    from bench.batch import BatchRun, saturated

    busy = BatchRun(4, 4, 40.0, Usage(cores=1.9, min_available=1 << 30), {"pass": 4})
    assert saturated(busy, Usage(cores=1.2), 2) == (
        "; and the machine's CPU was saturated: 1.90 of 2 cores busy during 4 workers, "
        "1.20 before the batches (other work)"
    )
    calm = BatchRun(4, 4, 40.0, Usage(cores=1.7, min_available=1 << 30), {"pass": 4})
    assert saturated(calm, Usage(cores=0.2), 2) == ""


def test_batch_goal_is_capped_at_the_machine_limit() -> None:
    from bench.batch import scaling_goal

    four = scaling_goal(4, 10.0)
    assert four.text == ">= 3.20x"
    assert four.met(3.2, 1.0) and not four.met(3.1, 1.0)
    capped = scaling_goal(4, 2.5)
    assert capped.text == ">= 2.00x (limit 2.5)"
    assert capped.met(2.0, 1.0) and not capped.met(1.9, 1.0)
    assert scaling_goal(2, 0.3).text == ">= 0.80x (limit 0.3)"


def test_batch_limit_is_the_resource_that_runs_out_first() -> None:
    from bench.batch import BatchRun, machine_limit

    idle = Usage(cores=1.5, min_available=8 << 30)
    # One run at a time kept 0.5 cores busy (20 of 40 s) and took 1 GiB: CPU allows 4 runs
    # at once on 2 cores (whatever else the machine ran), memory 8.
    one = BatchRun(
        1, 4, 40.0, Usage(1.9, 7 << 30, 20.0, containers=8, own_memory=1 << 30), {"pass": 4}
    )
    cpu = machine_limit(idle, one, cores=2, memory=16 << 30, starts=1.0)
    assert (cpu.resource, cpu.runs) == ("CPU", 4.0)
    assert cpu.detail == "2 cores, a run at a time kept 0.50 busy over 8 containers"
    # Memory runs out first when a run takes 4 GiB of the 8 free.
    heavy = BatchRun(1, 4, 40.0, Usage(1.9, 4 << 30, 20.0, own_memory=4 << 30), {"pass": 4})
    assert machine_limit(idle, heavy, cores=2, memory=16 << 30, starts=1.0).resource == "memory"
    # Starts spaced 10 s apart allow 1 run at once when a run lasts 10 s.
    slow = machine_limit(idle, one, cores=2, memory=16 << 30, starts=0.1)
    assert (slow.resource, slow.runs) == ("Docker starts", 1.0)


def test_bench_prints_rates_and_cores() -> None:
    from bench.run import _value

    assert _value(12.345, "/min") == "   12.3/min"
    assert _value(1.5, "cores") == " 1.50 cores"
    assert len(_value(0.002, "s")) == len(_value(3, "/min")) == len(_value(1, "cores"))
