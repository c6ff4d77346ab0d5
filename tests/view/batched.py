"""A results store whose runs differ in candidate, harness, model, day and batch (no Docker):
two batches executed by the real batch engine (:func:`replay.batch.engine.execute`, which
fixes each plan and claims and completes each planned run in ``batch_runs``) with a run that
writes its run and grade rows as the runner would, and one run made outside any batch.

- ``nightly`` (2026-12-01): the caret and prerelease demo cases, candidates ``gold`` (stub,
  harness reference: pass, no cost), ``gpt`` (reference, gpt-4.1: model_fail, $0.02) and
  ``broken`` (reference, gpt-4.1: infra_fail, no run graded; no retry);
- ``weekly`` (2026-12-03): the caret case, candidate ``mini`` (mini-swe-agent,
  gpt-4.1-mini: pass, $0.01), whose run the wire spoiled once: the key's first run is in the
  store, its second is the one the batch records;
- a ``replay run`` of the caret case on 2026-12-02 (aider, claude-sonnet-4: model_fail), no
  candidate, no batch.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from replay.base.case import case_digest
from replay.base.outcomes import Outcome
from replay.batch.engine import Finished, execute
from replay.batch.plan import PlannedRun, load_plan
from replay.results import RunRow, Store
from replay.results.models import GradeRow
from replay.run.runner import RunOptions

ROOT = Path(__file__).resolve().parents[2]
CARET = ROOT / "cases" / "demo-caret-zero" / "case.yaml"
PRERELEASE = ROOT / "cases" / "demo-prerelease-order" / "case.yaml"
DAY1 = datetime(2026, 12, 1, 9, tzinfo=UTC)
DAY2 = datetime(2026, 12, 2, 23, 30, tzinfo=UTC)
DAY3 = datetime(2026, 12, 3, 0, 15, tzinfo=UTC)

NIGHTLY = f"""schema: 1
name: nightly
cases: [{CARET}, {PRERELEASE}]
candidates:
  - {{name: gold, stub: gold}}
  - {{name: gpt, harness: reference, model: gpt-4.1}}
  - {{name: broken, harness: reference, model: gpt-4.1}}
infra_retries: 0
"""
WEEKLY = f"""schema: 1
name: weekly
cases: [{CARET}]
candidates:
  - {{name: mini, harness: mini-swe-agent, model: gpt-4.1-mini}}
"""
OUTCOMES = {"gold": Outcome.PASS, "gpt": Outcome.MODEL_FAIL, "broken": Outcome.INFRA_FAIL}
COSTS = {"gold": None, "gpt": 0.02, "broken": None, "mini": 0.01}


def run_id(label: str) -> str:
    return uuid.uuid5(uuid.NAMESPACE_URL, label).hex


@dataclass
class Batched:
    db: Path
    cases: list[Path]
    ids: dict[str, set[str]] = field(default_factory=dict)
    """Run ids by what they are: ``nightly``, ``weekly``, ``spoiled`` (weekly's first try,
    not the batch's), ``loose`` (the run outside any batch), by candidate name and by case."""
    keys: dict[str, str] = field(default_factory=dict)
    """Each candidate's key (``name:<settings digest>``), by name."""

    def every(self) -> set[str]:
        return self.ids["nightly"] | self.ids["weekly"] | self.ids["spoiled"] | self.ids["loose"]


def _record(
    store: Store, rid: str, item: PlannedRun | None, at: datetime, outcome: Outcome, **row: str
) -> None:
    cost = COSTS.get(item.candidate.name) if item is not None else None
    store.add_run(
        RunRow(
            id=rid, case_id=item.case.id if item else "demo-caret-zero",
            case_digest=case_digest(item.case) if item else None,
            candidate=item.candidate.key if item else None, attempt=item.index if item else 1,
            started_at=at, finished_at=at + timedelta(seconds=30), status="finished",
            wall_time_s=30.0, cost_usd=cost, **row,
        )
    )  # fmt: skip
    store.record_grade(
        GradeRow(
            run_id=rid, tests_resolved=outcome == Outcome.PASS, fail_to_pass_passed=0,
            fail_to_pass_total=1, pass_to_pass_passed=0, pass_to_pass_total=0,
            side_effects_ok=True, detail={"reason": f"made for the viewer: {outcome.value}"},
        ),
        outcome,
    )  # fmt: skip


def _runner(
    store: Store, batch: str, day: datetime, made: Batched
) -> Callable[[PlannedRun, RunOptions], Finished]:
    """The batch's run: its rows written as the runner writes them, its end returned."""
    clock = [day]

    def run(item: PlannedRun, _: RunOptions) -> Finished:
        name = item.candidate.name
        tries = 2 if batch == "weekly" else 1  # weekly's first try was spoiled by the wire
        ids = []
        for attempt in range(tries):
            clock[0] += timedelta(minutes=1)
            rid = run_id(f"{batch}/{name}/{item.case.id}/{item.index}/{attempt}")
            outcome = (
                OUTCOMES.get(name, Outcome.PASS) if attempt == tries - 1 else Outcome.TRANSPORT_FAIL
            )
            harness, model = item.candidate.harness, item.candidate.model_label
            _record(store, rid, item, clock[0], outcome, harness=harness, model=model)
            ids.append(rid)
            made.ids.setdefault(name, set()).add(rid)
            made.ids.setdefault(item.case.id, set()).add(rid)
        made.keys[name] = item.candidate.key
        made.ids.setdefault(batch, set()).add(ids[-1])
        made.ids.setdefault("spoiled", set()).update(ids[:-1])
        return Finished(ids[-1], OUTCOMES.get(name, Outcome.PASS), 1000, COSTS[name])

    return run


def make_store(root: Path) -> Batched:
    """The store at ``root/results.db`` (the plans beside it)."""
    made = Batched(root / "results.db", [CARET, PRERELEASE])
    store = Store.open(str(made.db))
    try:
        for text, day in ((NIGHTLY, DAY1), (WEEKLY, DAY3)):
            plan_file = root / f"{day:%d}.yaml"
            plan_file.write_text(text)
            plan = load_plan(plan_file)
            run = _runner(store, plan.spec.name, day, made)
            execute(store, plan, RunOptions(), starts_per_second=1000, run=run)
        loose = run_id("loose")
        _record(
            store, loose, None, DAY2, Outcome.MODEL_FAIL, harness="aider", model="claude-sonnet-4"
        )
        made.ids["loose"] = {loose}
        made.ids["demo-caret-zero"].add(loose)
    finally:
        store.close()
    return made
