"""One run in a process of its own, which then reports its own peak memory: ``python -m
tests.run.bounded_driver CASE STUB OUT`` prints one JSON line, the run's outcome, reason and
directory and this process's peak resident set (``VmHWM`` of ``/proc/self/status``, KiB: the
kernel's high-water mark of the very process that read the sandbox's output, world and stub
server included in it as threads; the world's own process is a child and not counted).

Not ``ru_maxrss``: Linux keeps that across ``exec``, so a process forked from a large one (a
pytest worker late in the suite) reports its parent's size at the fork. ``VmHWM`` belongs to
the address space, which ``exec`` makes anew."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from replay.run.runner import RunOptions, run_case


def main() -> None:
    case, stub, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    (result,) = run_case(case, RunOptions(stub=stub, out=out / "runs", db=f"sqlite:///{out}/r.db"))
    status = Path("/proc/self/status").read_text()
    peak = int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1])
    print(
        json.dumps(
            {
                "outcome": result.outcome.value,
                "reason": result.reason,
                "run_dir": str(result.run_dir),
                "peak_kib": peak,
            }
        )
    )


if __name__ == "__main__":
    main()
