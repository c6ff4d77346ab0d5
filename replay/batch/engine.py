"""Executing a batch: claim a key, run it, complete it; resume whatever is not finished.

A key's row in ``batch_runs`` is the only coordination: claiming inserts it (the primary key
lets one claim win) or takes it over in one UPDATE guarded by what was read (a dead owner's
``running``, an ``infra_fail`` under the retry limit), so two executors, or a task retried
by a scheduler, never run one key twice to completion and never count it twice.

A run that crashes the runner (an exception nothing expected, in the run or its grading) is
``infra_fail`` with its error and never stops the batch's other runs; a key whose tries crash
the runner :data:`QUARANTINE_AFTER` times is ``quarantined``: recorded with its error,
reported, and never claimed again, by this batch or any rerun of it.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import traceback
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, func, select, update
from sqlalchemy.exc import IntegrityError

from replay.base.errors import ReplayError
from replay.base.outcomes import Outcome
from replay.batch.plan import Plan, PlannedRun
from replay.results import Store
from replay.results.models import BatchRow, BatchRunRow
from replay.run.runner import RunOptions, RunResult, run_case
from replay.runtime.base import process_start
from replay.world.warm import WarmPool, use_pool

DONE = "done"
RUNNING = "running"
INFRA = "infra_fail"
QUARANTINED = "quarantined"
QUARANTINE_AFTER = 2
"""Crashes of the runner after which a key is quarantined rather than retried."""
CLAIM_LEASE = timedelta(hours=6)
"""A running claim whose owner cannot be checked (another host, a Ray task) is taken over
after this long: longer than any run's wall-time budget, so only an abandoned one."""


class BatchError(ReplayError):
    """A batch cannot go on as asked (its plan changed under its name...)."""


def owner_token() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def owner_alive(owner: str | None) -> bool:
    """Whether the process holding a key still runs. Only this host's processes can be
    checked; another host's, or a Ray task's (``ray:<task id>``, which only its own retry
    may take over), are taken as alive."""
    if not owner:
        return False
    if owner.startswith("ray:"):
        return True
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return True
    # Not os.kill(pid, 0): a SIGKILLed batch nobody has reaped yet is a zombie, and dead.
    return process_start(int(pid)) is not None


def fix_batch(store: Store, plan: Plan) -> None:
    """Record the plan under its name, or check that a rerun plans the same keys."""
    name = plan.spec.name
    try:
        with store.session() as s:
            if s.get(BatchRow, name) is None:
                s.add(
                    BatchRow(
                        name=name,
                        plan=plan.path.read_text(),
                        plan_digest=plan.digest,
                        created_at=datetime.now(UTC),
                    )
                )
    except IntegrityError:
        pass  # another executor recorded it first: checked below like any rerun
    with store.session() as s:
        row = s.get(BatchRow, name)
    if row is None or row.plan_digest != plan.digest:
        raise BatchError(
            f"batch {name!r} was planned with other runs (cases, candidates or runs changed "
            "since it began); name a new batch to run a new plan"
        )


def claim(store: Store, run: PlannedRun, batch: str, owner: str, retries: int) -> bool:
    """Take ``run``'s key for ``owner``; False when it is finished, held by a live process,
    or out of retries."""
    now = datetime.now(UTC)
    try:
        with store.session() as s:
            s.add(
                BatchRunRow(
                    run_key=run.key,
                    batch=batch,
                    case_id=run.case.id,
                    case_digest=run.digest,
                    candidate=run.candidate.key,
                    index=run.index,
                    state=RUNNING,
                    owner=owner,
                    claimed_at=now,
                    tries=1,
                )
            )
        return True
    except IntegrityError:
        pass
    with store.session() as s:
        row = s.get(BatchRunRow, run.key)
        if row is None or row.state in (DONE, QUARANTINED):
            return False
        claimed = row.claimed_at if row.claimed_at.tzinfo else row.claimed_at.replace(tzinfo=UTC)
        if (
            row.state == RUNNING
            and row.owner != owner
            and owner_alive(row.owner)
            and now - claimed < CLAIM_LEASE
        ):
            return False
        if row.state == INFRA and row.tries > retries:
            return False
        taken = s.execute(
            update(BatchRunRow)
            .where(
                BatchRunRow.run_key == run.key,
                BatchRunRow.state == row.state,
                BatchRunRow.tries == row.tries,
            )
            .values(state=RUNNING, owner=owner, claimed_at=now, tries=row.tries + 1)
        )
        return bool(cast("CursorResult[Any]", taken).rowcount)


@dataclass(frozen=True)
class Finished:
    """How a key's runs ended: its last run (after wire retries) and what they all used."""

    run_id: str
    outcome: Outcome
    tokens: int
    cost_usd: float | None
    crashed: str | None = None
    """The traceback of a run of the key that crashed the runner (graded ``infra_fail``)."""

    @classmethod
    def of(cls, results: list[RunResult]) -> Finished:
        costs = [r.grade.cost_usd for r in results]
        return cls(
            run_id=results[-1].run_id,
            outcome=results[-1].outcome,
            tokens=sum(r.grade.tokens.input + r.grade.tokens.output for r in results),
            cost_usd=None if any(c is None for c in costs) else sum(c or 0.0 for c in costs),
            crashed=next((r.crashed for r in results if r.crashed), None),
        )


def _after_crash(s: Any, key: str, crashed: bool) -> tuple[str | None, int]:
    """The state a key's crash takes it to (None: it did not crash) and its crash count."""
    row = s.get(BatchRunRow, key)
    crashes = (row.crashes or 0) if row is not None else 0
    if not crashed:
        return None, crashes
    crashes += 1
    return (QUARANTINED if crashes >= QUARANTINE_AFTER else INFRA), crashes


def complete(store: Store, key: str, owner: str, end: Finished) -> bool:
    """Record a key's end, once: only the claim's owner completes it (False otherwise: the
    key was taken over meanwhile, and this end is not counted). A run that crashed the runner
    counts towards the key's quarantine."""
    state = INFRA if end.outcome == Outcome.INFRA_FAIL else DONE
    with store.session() as s:
        crash_state, crashes = _after_crash(s, key, end.crashed is not None)
        done = s.execute(
            update(BatchRunRow)
            .where(
                BatchRunRow.run_key == key,
                BatchRunRow.owner == owner,
                BatchRunRow.state == RUNNING,
            )
            .values(
                state=crash_state or state,
                owner=None,
                run_id=end.run_id,
                outcome=end.outcome.value,
                tokens=BatchRunRow.tokens + end.tokens,
                cost_usd=end.cost_usd,
                error=None if end.crashed is None else end.crashed[-2000:],
                crashes=crashes,
            )
        )
        return bool(cast("CursorResult[Any]", done).rowcount)


def release(store: Store, key: str, owner: str, error: str, *, crashed: bool = False) -> None:
    """A run that raised before it was graded (its image did not build, say): recorded as an
    infrastructure failure, retried up to the plan's limit. With ``crashed`` (an exception
    nothing expected), it counts towards the key's quarantine."""
    with store.session() as s:
        crash_state, crashes = _after_crash(s, key, crashed)
        s.execute(
            update(BatchRunRow)
            .where(BatchRunRow.run_key == key, BatchRunRow.owner == owner)
            .values(
                state=crash_state or INFRA,
                owner=None,
                outcome=INFRA,
                error=error[-2000:],
                crashes=crashes,
            )
        )


@dataclass
class BatchProgress:
    """What a batch has done so far, from the store."""

    total: int
    outcomes: Counter[str] = field(default_factory=Counter)
    running: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    exhausted: int = 0
    """Keys whose infra_fail is past the retry limit."""
    quarantined: int = 0
    """Keys quarantined: their runs crashed the runner twice (counted as infra_fail)."""

    @property
    def finished(self) -> int:
        return sum(self.outcomes.values())


def progress(store: Store, plan: Plan) -> BatchProgress:
    """One aggregate query (by state and outcome), not a row per key: it runs after every
    completion. Every row of the batch is one of the plan's keys (:func:`fix_batch`)."""
    exhausted = BatchRunRow.tries > plan.spec.infra_retries
    with store.session() as s:
        groups = s.execute(
            select(
                BatchRunRow.state,
                BatchRunRow.outcome,
                exhausted,
                func.count(),
                func.coalesce(func.sum(BatchRunRow.tokens), 0),
                func.coalesce(func.sum(BatchRunRow.cost_usd), 0.0),
            )
            .where(BatchRunRow.batch == plan.spec.name)
            .group_by(BatchRunRow.state, BatchRunRow.outcome, exhausted)
        ).all()
    prog = BatchProgress(total=len(plan.runs))
    for state, outcome, past_retries, count, tokens, cost in groups:
        prog.tokens += int(tokens)
        prog.cost_usd += float(cost or 0.0)
        if state == RUNNING:
            prog.running += count
        elif state == QUARANTINED:
            prog.outcomes[outcome or INFRA] += count
            prog.quarantined += count
        elif state == DONE or (state == INFRA and past_retries):
            prog.outcomes[outcome or INFRA] += count
            prog.exhausted += count if state == INFRA else 0
    return prog


def failures(store: Store, plan: Plan, limit: int = 20) -> list[BatchRunRow]:
    """The batch's keys whose last try failed before it was graded (with its error), the
    most recently claimed first."""
    with store.session() as s:
        return list(
            s.scalars(
                select(BatchRunRow)
                .where(BatchRunRow.batch == plan.spec.name, BatchRunRow.error.is_not(None))
                .order_by(BatchRunRow.claimed_at.desc())
                .limit(limit)
            ).all()
        )


def dead_owners(store: Store, plan: Plan) -> set[str]:
    """``pid@host`` (the runtime's owner label) of this host's processes that held running
    keys of the batch and are gone: a batch killed mid-run, whose leftovers are collected."""
    with store.session() as s:
        held = s.scalars(
            select(BatchRunRow.owner).where(
                BatchRunRow.batch == plan.spec.name, BatchRunRow.state == RUNNING
            )
        ).all()
    dead = set()
    for owner in held:
        if owner and not owner.startswith("ray:") and not owner_alive(owner):
            host, _, rest = owner.partition(":")
            dead.add(f"{rest.partition(':')[0]}@{host}")
    return dead


def collect(owners: set[str], runtime: str, store: Store | None = None) -> int:
    """Remove what the dead ``owners``' runs left: their world processes (if any survived
    their parent) and their containers, networks, volumes and run directories, and mark
    their runs in ``store`` abandoned. How many things it removed."""
    if not owners:
        return 0
    from replay.runtime import get_runtime
    from replay.world.process import kill_worlds, orphan_worlds

    worlds = kill_worlds(orphan_worlds(owners))
    rt = get_runtime(runtime)
    try:
        report = rt.gc(owners=owners)
    finally:
        rt.close()
    if store is not None:
        store.abandon_dead("its runner died mid-run (found by a resuming batch)", owners)
    return len(worlds) + sum(
        len(x) for x in (report.containers, report.networks, report.volumes, report.run_dirs)
    )


def spent(store: Store, plan: Plan) -> tuple[int, float]:
    """Tokens and USD the batch's runs have used so far (one aggregate query)."""
    with store.session() as s:
        tokens, cost = s.execute(
            select(
                func.coalesce(func.sum(BatchRunRow.tokens), 0),
                func.coalesce(func.sum(BatchRunRow.cost_usd), 0.0),
            ).where(BatchRunRow.batch == plan.spec.name)
        ).one()
    return int(tokens), float(cost or 0.0)


def over_budget(store: Store, plan: Plan) -> str | None:
    budget = plan.spec.budget
    if budget.tokens is None and budget.usd is None:
        return None
    tokens, cost = spent(store, plan)
    if budget.tokens is not None and tokens >= budget.tokens:
        return f"the token budget is spent ({tokens} of {budget.tokens})"
    if budget.usd is not None and cost >= budget.usd:
        return f"the budget is spent (${cost:.2f} of ${budget.usd:.2f})"
    return None


@dataclass
class BatchResult:
    ran: int
    skipped: int
    stopped: str | None
    collected: int = 0
    """Leftovers of the batch's dead processes removed before it went on (resources and
    world processes)."""


def execute(
    store: Store,
    plan: Plan,
    base: RunOptions,
    *,
    jobs: int = 1,
    starts_per_second: float = 1.0,
    on_change: Callable[[BatchProgress], None] | None = None,
    run: Callable[[PlannedRun, RunOptions], Finished] | None = None,
) -> BatchResult:
    """Run every key of ``plan`` that is not finished, ``jobs`` at a time.

    Starts are spaced (``starts_per_second``, halved after each infrastructure failure and
    restored after a healthy run) so a batch does not flood the Docker daemon. The first run
    of a case runs alone when it builds images the others reuse (:func:`_prepared`). New runs
    stop being submitted once the budget is spent; those running finish.
    """
    fix_batch(store, plan)
    # A batch killed mid-run left its runs' containers (and worlds, if any outlived it).
    collected = collect(dead_owners(store, plan), base.runtime, store)
    run = run or _run_one
    owner = owner_token()
    lock = threading.Lock()
    interval = [1.0 / starts_per_second]
    last_start = [0.0]
    ran = 0
    stopped: str | None = None

    # Warm worlds (replay.world.warm), one pool per worker at a time: a worker's next run
    # of a case reuses the world its last run of that case left, reset between them.
    pools: list[WarmPool] = []
    free: list[WarmPool] = []

    def take(item: PlannedRun) -> WarmPool:
        snapshot = item.case.case.snapshot
        with lock:
            for i, pool in enumerate(free):
                if pool.current is not None and pool.current.snapshot == snapshot:
                    return free.pop(i)
            if free:
                return free.pop()
            pools.append(WarmPool())
            return pools[-1]

    def task(item: PlannedRun) -> None:
        pool = take(item)
        try:
            with use_pool(pool):
                end = run(item, base)
        except ReplayError as exc:
            release(store, item.key, owner, str(exc))
            with lock:
                interval[0] = min(interval[0] * 2, 30.0)
            return
        except Exception as exc:
            # The runner crashed outside any run's own handling (setting a case up, say):
            # recorded, counted towards the key's quarantine; the batch goes on.
            release(store, item.key, owner, crash_text(exc), crashed=True)
            with lock:
                interval[0] = min(interval[0] * 2, 30.0)
            return
        finally:
            with lock:
                free.append(pool)
        complete(store, item.key, owner, end)
        with lock:
            if end.outcome == Outcome.INFRA_FAIL:
                interval[0] = min(interval[0] * 2, 30.0)
            else:
                interval[0] = 1.0 / starts_per_second

    def pace() -> None:
        with lock:
            wait_s = last_start[0] + interval[0] - time.monotonic()
        if wait_s > 0:
            time.sleep(wait_s)
        with lock:
            last_start[0] = time.monotonic()

    pending = list(_order(plan.runs))
    skipped = 0
    # A fake run (tests) builds nothing: every case's first run runs alone, as if cold.
    warmed = _prepared(plan, base) if run is _run_one else set()
    building: set[str] = set()
    with ExitStack() as worlds, ThreadPoolExecutor(max_workers=jobs) as pool:
        # Closed after the workers (exits run in reverse): every world ends with the batch.
        worlds.callback(_close_pools, pools)
        running: dict[Future[None], PlannedRun] = {}
        while pending or running:
            while len(running) < jobs and stopped is None:
                # The first run of a case version runs alone: it builds the images the
                # case's other runs reuse. Other cases go ahead meanwhile.
                item = next(
                    (r for r in pending if r.digest in warmed or r.digest not in building),
                    None,
                )
                if item is None:
                    break
                if (reason := over_budget(store, plan)) is not None:
                    stopped = reason
                    break
                pending.remove(item)
                if not claim(store, item, plan.spec.name, owner, plan.spec.infra_retries):
                    skipped += 1
                    continue
                if item.digest not in warmed:
                    building.add(item.digest)
                pace()
                running[pool.submit(task, item)] = item
                ran += 1
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                item = running.pop(fut)
                warmed.add(item.digest)
                fut.result()
            if on_change is not None:
                on_change(progress(store, plan))
    return BatchResult(ran, skipped, stopped, collected)


def crash_text(exc: BaseException) -> str:
    """What a crash of the runner leaves in its key's ``error``: the traceback's end."""
    return "".join(traceback.format_exception(exc))[-2000:]


def quarantined(store: Store, plan: Plan) -> list[BatchRunRow]:
    """The batch's quarantined keys (their runs crashed the runner twice), by case."""
    with store.session() as s:
        return list(
            s.scalars(
                select(BatchRunRow)
                .where(BatchRunRow.batch == plan.spec.name, BatchRunRow.state == QUARANTINED)
                .order_by(BatchRunRow.case_id, BatchRunRow.candidate, BatchRunRow.index)
            ).all()
        )


def _close_pools(pools: list[WarmPool]) -> None:
    """Close every pool (and its world), the others even if one fails."""
    with ExitStack() as stack:
        for pool in pools:
            stack.callback(pool.close)


def _prepared(plan: Plan, base: RunOptions) -> set[str]:
    """The case versions whose first run would build nothing, so need not run alone: the
    environment image exists (its audits, cached, are made here once if they are not) and no
    candidate's harness has an image of its own."""
    from replay.harness.install import needs_image
    from replay.harness.spec import load_harness
    from replay.images.audit import image_leaks_cached
    from replay.images.env import cached_env_image
    from replay.runtime import get_runtime
    from replay.snapshot.audit import audit_cached

    if any(needs_image(load_harness(c.harness)[0]) for c in plan.spec.candidates):
        return set()
    ready: set[str] = set()
    runtime = get_runtime(base.runtime)
    try:
        for item in {r.digest: r for r in plan.runs}.values():
            case = item.case.case
            try:
                env = cached_env_image(case, runtime)
            except ReplayError:
                continue  # no base image yet: the first run makes it
            if env is not None:
                audit_cached(case.snapshot, case)
                image_leaks_cached(case, runtime, [env.id])
                ready.add(item.digest)
    finally:
        runtime.close()
    return ready


def _order(runs: list[PlannedRun]) -> Iterator[PlannedRun]:
    """Index-major: every case and candidate gets its first run before any gets a second."""
    return iter(sorted(runs, key=lambda r: r.index))


def _run_one(item: PlannedRun, base: RunOptions) -> Finished:
    options = item.candidate.options(base, runs=1, first_attempt=item.index)
    return Finished.of(run_case(item.case, options))
