"""The batches of the results store, as the viewer shows them: one summary each, from the
plan fixed when the batch first ran (``batches``) and its planned runs' rows (``batch_runs``).

A planned run's row keeps the store's run it last ended with (:attr:`BatchRunRow.run_id`):
the batch's runs are those. The earlier tries of a key (a run the wire spoiled and replayed,
an infrastructure failure tried again) are not recorded against it, so they are not among
them (they are in the store, under the batch's candidates).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select

from replay.results import RunRow, Store
from replay.results.models import BatchRow, BatchRunRow

RUNNING = "running"
"""A planned run's state while a process holds it (:data:`replay.batch.engine.RUNNING`)."""


@dataclass
class BatchSummary:
    """One batch: its plan and what its planned runs have come to so far."""

    name: str
    created_at: datetime | None
    """When the plan was fixed (the batch's first invocation); None for a batch whose plan
    row is missing (never written by ``replay batch``, which fixes the plan first)."""
    plan: str
    """The plan file, verbatim."""
    keys: int = 0
    """Planned runs claimed so far (a key not yet claimed has no row)."""
    running: int = 0
    """Planned runs a process holds now."""
    runs: int = 0
    """Planned runs whose last run is in the store: what the runs page filtered by the
    batch lists."""
    outcomes: Counter[str] = field(default_factory=Counter)
    """Outcome of each planned run that is not running, by the last try's outcome."""
    tokens: int = 0
    cost_usd: float = 0.0
    """Sum of the planned runs' recorded costs (every try of each)."""
    priced: int = 0
    """Planned runs with a cost recorded."""
    unpriced: int = 0
    """Planned runs that ended with no cost recorded (a model the price table lacks)."""
    last_claim: datetime | None = None
    """When a planned run was last claimed: the batch's latest activity."""


def batch_names(store: Store) -> set[str]:
    """Every batch the store has a plan or a planned run of."""
    with store.session() as s:
        planned = set(s.scalars(select(BatchRow.name)).all())
        claimed = set(s.scalars(select(BatchRunRow.batch).distinct()).all())
    return planned | claimed


def batch_run_ids(store: Store, name: str) -> set[str]:
    """The store's runs the planned runs of batch ``name`` last ended with."""
    with store.session() as s:
        ids = s.scalars(
            select(BatchRunRow.run_id).where(
                BatchRunRow.batch == name, BatchRunRow.run_id.is_not(None)
            )
        ).all()
    return {i for i in ids if i is not None}


def summaries(store: Store) -> list[BatchSummary]:
    """Every batch of the store, the most recently fixed first."""
    with store.session() as s:
        plans = s.scalars(select(BatchRow)).all()
        keys = s.execute(
            select(
                BatchRunRow.batch,
                BatchRunRow.state,
                BatchRunRow.outcome,
                BatchRunRow.tokens,
                BatchRunRow.cost_usd,
                BatchRunRow.claimed_at,
                RunRow.id,
            ).outerjoin(RunRow, RunRow.id == BatchRunRow.run_id)
        ).all()
    found = {p.name: BatchSummary(p.name, p.created_at, p.plan) for p in plans}
    for batch, state, outcome, tokens, cost, claimed, run_id in keys:
        one = found.setdefault(batch, BatchSummary(batch, None, ""))
        one.keys += 1
        one.runs += run_id is not None
        one.tokens += tokens or 0
        if state == RUNNING:
            one.running += 1
        elif outcome is not None:
            one.outcomes[outcome] += 1
            one.unpriced += cost is None and run_id is not None
        one.cost_usd += cost or 0.0
        one.priced += cost is not None
        if one.last_claim is None or claimed > one.last_claim:
            one.last_claim = claimed
    return sorted(found.values(), key=_recent, reverse=True)


def _recent(one: BatchSummary) -> tuple[datetime, str]:
    at = one.created_at or one.last_claim
    return (at.replace(tzinfo=None) if at is not None else datetime.min, one.name)
