"""Batches on a Ray cluster of three nodes on this machine (a head without runs and two
nodes advertising one ``docker`` slot each), results in PostgreSQL, with a fake run: every
key finished once, and a node removed mid-batch has its run rescheduled and taken over."""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from replay.batch.engine import DONE, progress
from replay.batch.plan import load_plan
from replay.batch.ray_executor import RAY_ENV, execute_ray
from replay.results import Store
from replay.results.models import BatchRunRow
from tests.batch.test_engine import write_plan
from tests.postgres import fresh_database

ROOT = Path(__file__).resolve().parents[2]
FAKE = "tests.batch.fake:ray_fake"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[object, list[object], Path]]:
    from ray.cluster_utils import Cluster

    markers = tmp_path / "markers"
    markers.touch()
    saved = dict(os.environ)
    # Inherited by every node's workers: they import the fake run and send no usage stats.
    os.environ.update(RAY_ENV, PYTHONPATH=str(ROOT), REPLAY_TEST_MARKERS=str(markers))
    # Every node listens on this machine's own interface address (Ray turns a loopback
    # bootstrap address into that address itself): traffic stays on this machine.
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    try:
        nodes = [cluster.add_node(num_cpus=1, resources={"docker": 1}) for _ in range(2)]
        cluster.wait_for_nodes(timeout=120)
        yield cluster, nodes, markers
    finally:
        cluster.shutdown()
        os.environ.clear()
        os.environ.update(saved)


def batch_rows(store: Store) -> list[BatchRunRow]:
    with store.session() as s:
        return list(s.scalars(select(BatchRunRow)).all())


def test_a_batch_on_a_ray_cluster_finishes_every_key_once_and_survives_a_lost_node(
    tmp_path: Path, postgres: str, cluster: tuple[object, list[object], Path]
) -> None:
    ray_cluster, nodes, markers = cluster
    db = fresh_database(postgres)
    store = Store(db)
    plan = load_plan(write_plan(tmp_path, runs=2))
    address = ray_cluster.address  # type: ignore[attr-defined]
    removed = threading.Event()

    def lose_a_node() -> None:
        # Once runs are under way on both nodes, one node goes away with its run.
        # Both nodes are mid-run (two keys claimed, running) after a first round finished.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (
            len(markers.read_text().split()) >= 2
            and sum(r.state == "running" for r in batch_rows(store)) == 2
        ):
            time.sleep(0.05)
        ray_cluster.remove_node(nodes[1])  # type: ignore[attr-defined]
        removed.set()

    chaos = threading.Thread(target=lose_a_node)
    chaos.start()
    # The driver runs in the main thread, where Ray installs its signal handlers.
    execute_ray(store, plan, address=address, db=db, out=tmp_path / "runs", runner=FAKE)
    chaos.join(timeout=150)
    assert removed.is_set(), "the node was removed while the batch ran"
    rows = batch_rows(store)
    assert {r.run_key for r in rows} == {r.key for r in plan.runs}
    assert {r.state for r in rows} == {DONE}
    assert progress(store, plan).finished == len(plan.runs)
    # The lost node's run was retried by Ray and taken over by its own retry.
    assert any(r.tries == 2 for r in rows), [(r.run_key[-12:], r.tries) for r in rows]
    calls = Counter(markers.read_text().split())
    assert set(calls) == {r.key for r in plan.runs}
    store.close()
