"""Runs whose runner died mid-run are marked abandoned, never left ``running``."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from replay.results import Store
from replay.results.models import RunRow
from replay.runtime.base import Owner, process_start


def test_only_runs_of_dead_owners_on_this_host_are_abandoned(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    start = process_start(child.pid)
    child.kill()
    child.wait()
    me = Owner.current()
    dead = f"{child.pid}@{me.host}"
    rows = {
        "dead": (f"{dead}#{start}", "running"),
        "dead-other-batch": (f"{dead}#{start}", "running"),
        "alive": (f"{me.pid}@{me.host}#{me.start}", "running"),
        "pid-reused": (f"{me.pid}@{me.host}#1", "running"),  # same pid, another start: dead
        "other-host": (f"{child.pid}@not-{me.host}#{start}", "running"),
        "finished": (f"{dead}#{start}", "finished"),
        "no-owner": (None, "running"),  # written before owners were recorded
    }
    store = Store.open(f"sqlite:///{tmp_path / 'r.db'}")
    try:
        now = datetime.now(UTC)
        for run_id, (owner, status) in rows.items():
            store.add_run(
                RunRow(
                    id=run_id,
                    case_id="c",
                    harness="h",
                    model="m",
                    started_at=now,
                    owner=owner,
                    status=status,
                )
            )
        # Restricted to other owners: nothing of this one is touched.
        assert store.abandon_dead("why", owners={"1@elsewhere"}) == []
        marked = store.abandon_dead("its runner died", owners=None)
        assert sorted(marked) == ["dead", "dead-other-batch", "pid-reused"]
        assert store.abandon_dead("again") == []  # idempotent
        status = {r.id: (r.status, r.stop_reason) for r in store.runs()}
    finally:
        store.close()
    assert status["dead"] == ("abandoned", "its runner died")
    for run_id in ("alive", "other-host", "no-owner"):
        assert status[run_id] == ("running", None), run_id
    assert status["finished"] == ("finished", None)
