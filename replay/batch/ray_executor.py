"""Running a batch's keys as Ray tasks on the nodes of a cluster.

Each key is one task that asks for one ``docker`` resource: only nodes that advertise it
(``ray start --resources '{"docker": N}'``, N runs at once) get runs. The task claims its key
in the results store, runs it and completes it, like the local executor; the driver submits
what is not finished, keeps as many tasks in flight as the cluster has ``docker`` slots, and
stops submitting when the budget is spent.

What the nodes share: the results store by URL (PostgreSQL for several machines), and the
plan, cases, snapshots and blob store at the same path on every node (a shared mount). Images
are built on each node the first time a run needs them (the runner's own caching). A node
lost mid-run has its tasks retried by Ray elsewhere (``max_retries``); a retry of a task is
the same Ray task id, which the claim recognises as the same owner, so the retry takes the
key over and only one completion counts. What the lost run leaves on a machine that stays up
(a Ray node process killed, not the machine): its world ends with its worker process (see
:mod:`replay.world.process`), and its containers, whose owner is now dead, are removed by the
garbage collection the next run on that machine starts with (or by ``replay gc``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from replay.base.errors import ReplayError
from replay.batch.engine import (
    DONE,
    QUARANTINED,
    BatchResult,
    claim,
    complete,
    crash_text,
    fix_batch,
    over_budget,
    progress,
    release,
)
from replay.batch.plan import Plan, load_plan
from replay.results import Store
from replay.results.models import BatchRunRow
from replay.run.runner import RunOptions
from replay.world.warm import WarmPool, use_pool

RAY_ENV = {
    # Ray reports usage statistics to its vendor unless told not to: a batch sends nothing.
    "RAY_USAGE_STATS_ENABLED": "0",
}


NODE_POOL_IDLE_S = 120.0
"""A Ray worker's warm world is stopped after this long without a task (a cluster outlives
its batches: an idle worker must not hold a world)."""

_POOL: WarmPool | None = None
_POOL_LOCK = threading.Lock()
_BUSY = 0
_IDLE: threading.Timer | None = None


@contextmanager
def _node_pool() -> Iterator[WarmPool]:
    """This Ray worker's pool of warm worlds, kept across the tasks it runs (Ray reuses a
    worker process for a node's tasks): a node's next run of a case reuses the world its last
    one left, reset between them. Closed after :data:`NODE_POOL_IDLE_S` without a task; if
    the worker dies first, its world ends with it (:mod:`replay.world.process`'s lifeline)."""
    global _POOL, _IDLE, _BUSY
    with _POOL_LOCK:
        if _IDLE is not None:
            _IDLE.cancel()
            _IDLE = None
        if _POOL is None:
            _POOL = WarmPool()
        pool = _POOL
        _BUSY += 1
    try:
        with use_pool(pool):
            yield pool
    finally:
        with _POOL_LOCK:
            _BUSY -= 1
            if _BUSY == 0:
                _IDLE = threading.Timer(NODE_POOL_IDLE_S, _close_idle, args=(pool,))
                _IDLE.daemon = True
                _IDLE.start()


def _close_idle(pool: WarmPool) -> None:
    """Stop ``pool``'s world unless a task took it up again meanwhile."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is not pool or _BUSY > 0:
            return
        _POOL = None
    pool.close()


def run_key_task(plan_path: str, key: str, db: str, out: str) -> tuple[str, str | None]:
    """One key, on a node: claim, run, complete. (key, outcome or None when not taken)."""
    import ray

    from replay.batch.engine import _run_one

    owner = f"ray:{ray.get_runtime_context().get_task_id()}"
    plan = load_plan(Path(plan_path))
    item = next(r for r in plan.runs if r.key == key)
    store = Store(db)
    try:
        if not claim(store, item, plan.spec.name, owner, plan.spec.infra_retries):
            return key, None
        try:
            with _node_pool():
                end = _run_one(item, RunOptions(out=Path(out), db=db))
        except ReplayError as exc:  # recorded, and retried per the plan
            release(store, key, owner, f"{type(exc).__name__}: {exc}")
            return key, "infra_fail"
        except Exception as exc:  # a crash of the runner: counted towards quarantine too
            release(store, key, owner, crash_text(exc), crashed=True)
            return key, "infra_fail"
        complete(store, key, owner, end)
        return key, end.outcome.value
    finally:
        store.close()


def execute_ray(
    store: Store,
    plan: Plan,
    *,
    address: str,
    db: str,
    out: Path,
    max_retries: int = 3,
    on_change: Callable[[Any], None] | None = None,
) -> BatchResult:
    """Submit the plan's unfinished keys to the Ray cluster at ``address``."""
    import ray

    for name, value in RAY_ENV.items():
        os.environ.setdefault(name, value)
    fix_batch(store, plan)
    ray.init(address=address, log_to_driver=False, runtime_env={"env_vars": dict(RAY_ENV)})
    try:
        resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
        slots = int(resources.get("docker", 0))
        if slots < 1:
            raise RuntimeError(
                f"the Ray cluster at {address} has no node with a 'docker' resource: start "
                "nodes with ray start --resources '{\"docker\": N}'"
            )
        task = ray.remote(run_key_task).options(
            resources={"docker": 1}, num_cpus=0, max_retries=max_retries, retry_exceptions=False
        )
        with store.session() as s:
            done = {
                row.run_key
                for row in s.query(BatchRunRow).filter(BatchRunRow.batch == plan.spec.name)
                if row.state in (DONE, QUARANTINED)
            }
        pending = [r.key for r in sorted(plan.runs, key=lambda r: r.index) if r.key not in done]
        in_flight: list[Any] = []
        ran = skipped = 0
        stopped: str | None = None
        while pending or in_flight:
            while pending and len(in_flight) < slots and stopped is None:
                if (reason := over_budget(store, plan)) is not None:
                    stopped = reason
                    break
                key = pending.pop(0)
                in_flight.append(task.remote(str(plan.path.resolve()), key, db, str(out)))
            if not in_flight:
                break
            ready, in_flight = ray.wait(in_flight, num_returns=1)
            for ref in ready:
                _, outcome = ray.get(ref)
                if outcome is None:
                    skipped += 1
                else:
                    ran += 1
            if on_change is not None:
                on_change(progress(store, plan))
        return BatchResult(ran, skipped, stopped)
    finally:
        ray.shutdown()
