"""A batch executed with a fake run (no Docker): each run sleeps, appends its key to a
marker file and ends as the outcome the plan's candidate name asks for. Run as a module so a
test can SIGKILL it mid-batch: ``python -m tests.batch.fake PLAN DB MARKERS [JOBS]``."""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path

from replay.base.outcomes import Outcome
from replay.batch.engine import Finished, execute
from replay.batch.plan import PlannedRun, load_plan
from replay.results import Store
from replay.run.runner import RunOptions


def fake_run(markers: Path, seconds: float = 0.0, tokens: int = 100):  # type: ignore[no-untyped-def]
    def run(item: PlannedRun, _: RunOptions) -> Finished:
        time.sleep(seconds)
        with markers.open("a") as fh:
            fh.write(item.key + "\n")
        outcome = Outcome.INFRA_FAIL if item.candidate.name.startswith("broken") else Outcome.PASS
        return Finished(uuid.uuid4().hex, outcome, tokens, 0.01)

    return run


def main() -> None:
    plan_path, db, markers = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    jobs = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    store = Store(db)
    try:
        execute(
            store,
            load_plan(plan_path),
            RunOptions(),
            jobs=jobs,
            starts_per_second=1000,
            run=fake_run(markers, seconds=0.4),
        )
    finally:
        store.close()


if __name__ == "__main__":
    main()
