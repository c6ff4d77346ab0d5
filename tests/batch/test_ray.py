"""Batches of real runs (Docker, the stub model) on a Ray cluster of three nodes on this
machine (a head without runs and two nodes advertising one ``docker`` slot each), results in
PostgreSQL: a node removed while both nodes are mid-run has its run rescheduled and taken
over, every key is finished and graded once, and the lost node's run leaves no world process
and no container behind."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from sqlalchemy import select

from replay.batch.engine import DONE
from replay.batch.plan import load_plan
from replay.batch.ray_executor import RAY_ENV, execute_ray
from replay.results import Store
from replay.results.models import BatchRunRow, RunRow
from replay.runtime.base import RUN_LABEL, process_start
from tests.postgres import fresh_database

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cluster() -> Iterator[tuple[object, list[object]]]:
    from ray.cluster_utils import Cluster

    saved = dict(os.environ)
    # Inherited by every node's workers: they send no usage stats.
    os.environ.update(RAY_ENV)
    # Every node listens on this machine's own interface address (Ray turns a loopback
    # bootstrap address into that address itself): traffic stays on this machine.
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    try:
        nodes = [cluster.add_node(num_cpus=1, resources={"docker": 1}) for _ in range(2)]
        cluster.wait_for_nodes(timeout=120)
        yield cluster, nodes
    finally:
        cluster.shutdown()
        os.environ.clear()
        os.environ.update(saved)


def batch_rows(store: Store) -> list[BatchRunRow]:
    with store.session() as s:
        return list(s.scalars(select(BatchRunRow)).all())


def told(store: Store, rows: list[BatchRunRow]) -> str:
    """Each key's tries, error and every run of its case with the grade's reason: what a
    failure of this test needs read (one CI run saw a gold run graded model_fail)."""
    with store.session() as s:
        runs = list(s.scalars(select(RunRow)).all())
    lines = [
        f"key {r.index}: {r.state} {r.outcome} tries={r.tries} run={r.run_id} {r.error}"
        for r in rows
    ]
    for run in runs:
        grade = Path(run.run_dir or "/nonexistent") / "grade.json"
        reason = json.loads(grade.read_text()).get("reason") if grade.is_file() else "no grade.json"
        lines.append(f"run {run.id} owner={run.owner} outcome={run.outcome}: {reason}")
    return "\n".join(lines)


def my_worlds() -> dict[int, int]:
    """World processes of this checkout's gateway (pid: parent pid given on their command
    line): other checkouts' runs on this machine are not this test's."""
    gateway = str(ROOT / ".venv-gateway" / "bin" / "python").encode()
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if argv[0] == gateway and b"--parent-pid" in argv and state not in ("Z", "X"):
            found[int(entry.name)] = int(argv[argv.index(b"--parent-pid") + 1])
    return found


def test_real_runs_on_a_ray_cluster_survive_a_lost_node_and_leave_no_orphans(
    tmp_path: Path, postgres: str, cluster: tuple[object, list[object]]
) -> None:
    ray_cluster, nodes = cluster
    db = fresh_database(postgres)
    store = Store(db)
    path = tmp_path / "plan.yaml"
    path.write_text(
        "schema: 1\nname: real\n"
        f"cases: [{ROOT}/cases/demo-caret-zero/case.yaml]\n"
        "candidates: [{name: gold, stub: gold}]\nruns: 3\n"
    )
    plan = load_plan(path)
    address = ray_cluster.address  # type: ignore[attr-defined]
    client = docker.from_env()
    removed = threading.Event()

    def run_ids() -> set[str]:
        with store.session() as s:
            return set(s.scalars(select(RunRow.id)).all())

    def containers() -> list[str]:
        ids = run_ids()
        return [
            c.name
            for c in client.containers.list(
                all=True, filters={"label": RUN_LABEL}, ignore_removed=True
            )
            if c.labels.get(RUN_LABEL) in ids
        ]

    lost: dict[int, int] = {}

    def lose_a_node() -> None:
        # Both nodes mid-run (two keys running, a sandbox each), then one node goes away.
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not (
            sum(r.state == "running" for r in batch_rows(store)) == 2 and len(containers()) >= 2
        ):
            time.sleep(0.2)
        lost.update(my_worlds())
        ray_cluster.remove_node(nodes[1])  # type: ignore[attr-defined]
        removed.set()

    chaos = threading.Thread(target=lose_a_node)
    chaos.start()
    try:
        execute_ray(store, plan, address=address, db=db, out=tmp_path / "runs")
        chaos.join(timeout=330)
        rows = batch_rows(store)
        assert removed.is_set(), [(r.index, r.state, r.outcome, r.error) for r in rows]
        assert sorted((r.index, r.state, r.outcome) for r in rows) == [
            (i, DONE, "pass") for i in (1, 2, 3)
        ], told(store, rows)
        assert any(r.tries == 2 for r in rows), [(r.index, r.tries) for r in rows]
        with store.session() as s:
            graded = s.scalars(select(RunRow.id).where(RunRow.outcome.is_not(None))).all()
        assert sorted(graded) == sorted(r.run_id or "" for r in rows), "each key graded once"
        # The lost node's run left nothing: its world ended with its worker, its containers
        # went with the retry's garbage collection (their owner is dead).
        assert lost, "worlds were up when the node went"
        orphans = {w: p for w, p in my_worlds().items() if process_start(p) is None}
        assert orphans == {}
        assert containers() == []
    finally:
        client.close()
        store.close()
