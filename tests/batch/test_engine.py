"""Batches without Docker (a fake run): the plan's keys, claims that one process wins,
takeover of a dead process's keys, infra retries, the budget, and a batch SIGKILLed halfway
and resumed that ends with every key finished exactly once."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import select

from replay.base.errors import InputError, ReplayError
from replay.base.outcomes import Outcome
from replay.batch.engine import (
    DONE,
    INFRA,
    BatchError,
    Finished,
    claim,
    complete,
    dead_owners,
    execute,
    failures,
    fix_batch,
    owner_token,
    progress,
)
from replay.batch.plan import PlannedRun, load_plan
from replay.results import Store
from replay.results.models import BatchRunRow
from replay.run.runner import RunOptions
from replay.runtime import rundir
from replay.runtime.base import Owner
from tests.batch.fake import fake_run
from tests.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]


def write_plan(tmp: Path, text: str = "", runs: int = 2, name: str = "b") -> Path:
    path = tmp / "plan.yaml"
    path.write_text(
        f"schema: 1\nname: {name}\ncases: [{ROOT}/cases/demo-*/case.yaml]\n"
        "candidates:\n  - {name: gold, stub: gold}\n  - {name: cheat, stub: cheat}\n"
        f"runs: {runs}\n" + text
    )
    return path


def rows(store: Store) -> list[BatchRunRow]:
    with store.session() as s:
        return list(s.scalars(select(BatchRunRow)).all())


def test_the_plan_is_cases_times_candidates_times_runs(tmp_path: Path, store: Store) -> None:
    plan = load_plan(write_plan(tmp_path))
    assert len(plan.runs) == 3 * 2 * 2
    assert len({r.key for r in plan.runs}) == 12
    assert load_plan(write_plan(tmp_path)).digest == plan.digest
    fix_batch(store, plan)
    with pytest.raises(BatchError, match="planned with other runs"):
        fix_batch(store, load_plan(write_plan(tmp_path, runs=3)))
    # The budget may change between invocations: it plans no other key.
    fix_batch(store, load_plan(write_plan(tmp_path, "budget: {tokens: 10}\n")))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("schema: 1\nname: b\ncases: [nothing-*.yaml]\ncandidates: [{name: a}]\n", "names no case"),
        ("schema: 1\nname: b\ncases: [x]\ncandidates: [{name: a}, {name: a}]\n", "share a name"),
        ("schema: 1\nname: b\ncases: [x]\ncandidates: []\n", "candidates"),
    ],
)
def test_bad_plans_are_input_errors(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=problem):
        load_plan(path)


def test_one_claim_wins_and_a_dead_owners_key_is_taken_over(tmp_path: Path, store: Store) -> None:
    plan = load_plan(write_plan(tmp_path))
    run = plan.runs[0]
    me, other = owner_token(), owner_token()
    assert claim(store, run, "b", me, retries=2)
    assert not claim(store, run, "b", other, retries=2), "held by a live process (this one)"
    # A process that is gone: its key is taken over, and its late completion does not count.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    ghost = f"{owner_token().split(':')[0]}:{dead.pid}:dead"
    with store.session() as s:
        s.get(BatchRunRow, run.key).owner = ghost  # type: ignore[union-attr]
    assert claim(store, run, "b", other, retries=2)
    assert not complete(store, run.key, ghost, Finished("x", Outcome.PASS, 1, None))
    assert complete(store, run.key, other, Finished("y", Outcome.PASS, 1, None))
    (row,) = rows(store)
    assert (row.state, row.run_id, row.tries) == (DONE, "y", 2)
    assert not claim(store, run, "b", me, retries=2), "finished keys are never redone"


def test_a_resuming_batch_names_only_its_own_dead_processes_for_collection(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = load_plan(write_plan(tmp_path))
    host = socket.gethostname()
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])  # ends; not reaped yet
    until_zombie = time.monotonic() + 30
    while Path(f"/proc/{zombie.pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
        assert time.monotonic() < until_zombie
        time.sleep(0.05)
    owners = [f"{host}:{zombie.pid}:dead", f"{host}:{os.getpid()}:live", "ray:abc", "far:1:x"]
    for run, owner in zip(plan.runs, owners, strict=False):
        assert claim(store, run, "b", owner, retries=2)
    # A SIGKILLed batch its parent has not reaped yet (a zombie) is dead; a live process, a
    # Ray task and another host's process are not this process's to collect.
    assert dead_owners(store, plan) == {f"{zombie.pid}@{host}"}
    zombie.wait()
    # The run directories of those owners only, never another dead process's.
    monkeypatch.setenv("REPLAY_RUN_ROOT", str(tmp_path / "runs"))
    other = subprocess.Popen([sys.executable, "-c", "pass"])
    other.wait()
    for name, pid in (("mine", zombie.pid), ("theirs", other.pid), ("live", os.getpid())):
        rundir.create(name, Owner(pid, host, "1" if pid != os.getpid() else Owner.current().start))
    stale = [name for name, _ in rundir.stale(owners={f"{zombie.pid}@{host}"})]
    assert stale == ["mine"]
    assert sorted(name for name, _ in rundir.stale()) == ["mine", "theirs"]


def test_infra_failures_are_retried_up_to_the_limit(tmp_path: Path, store: Store) -> None:
    path = write_plan(tmp_path, runs=1)
    path.write_text(path.read_text().replace("{name: cheat, stub: cheat}", "{name: broken}")
                    + "infra_retries: 2\n")  # fmt: skip
    plan = load_plan(path)
    markers = tmp_path / "markers"
    for _ in range(4):
        execute(store, plan, RunOptions(), starts_per_second=1000, run=fake_run(markers))
    calls = Counter(markers.read_text().split())
    broken = {r.key for r in plan.runs if r.candidate.name == "broken"}
    assert {calls[k] for k in broken} == {3}, "the first try and two retries, no more"
    assert {calls[k] for k in calls.keys() - broken} == {1}
    prog = progress(store, plan)
    assert prog.finished == 6 and prog.outcomes == {"pass": 3, INFRA: 3}


def test_status_shows_why_runs_failed_before_grading_and_progress_counts_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_plan(tmp_path, runs=1)
    path.write_text(path.read_text().replace("{name: cheat, stub: cheat}", "{name: broken}")
                    + "infra_retries: 0\n")  # fmt: skip
    plan = load_plan(path)
    db = f"sqlite:///{tmp_path}/r.db"
    good = fake_run(tmp_path / "markers")

    def run(item: PlannedRun, options: RunOptions) -> Finished:
        if item.candidate.name == "broken":
            raise ReplayError("the env image did not build:\nstep 3: exit 1")
        return good(item, options)

    store = Store(db)
    try:
        execute(store, plan, RunOptions(), starts_per_second=1000, run=run)
        prog = progress(store, plan)
        assert prog.outcomes == {"pass": 3, INFRA: 3} and prog.exhausted == 3
        assert [r.case_id for r in failures(store, plan)] != []
        assert {r.candidate.split(":")[0] for r in failures(store, plan)} == {"broken"}
    finally:
        store.close()
    status = run_cli(capsys, "--db", db, "batch", "status", str(path))
    assert status.code == 0, status.err
    assert status.out.count("step 3: exit 1") == 3 and "demo-caret-zero" in status.out


def test_the_budget_stops_new_runs(tmp_path: Path, store: Store) -> None:
    plan = load_plan(write_plan(tmp_path, "budget: {tokens: 250}\n"))
    markers = tmp_path / "markers"
    result = execute(store, plan, RunOptions(), starts_per_second=1000, run=fake_run(markers))
    assert result.stopped == "the token budget is spent (300 of 250)"
    assert result.ran == 3 and progress(store, plan).finished == 3


def test_two_executors_at_once_finish_each_key_once(tmp_path: Path, store: Store) -> None:
    plan = load_plan(write_plan(tmp_path, runs=3))
    markers = tmp_path / "markers"
    threads = [
        threading.Thread(
            target=execute,
            args=(store, plan, RunOptions()),
            kwargs={"jobs": 3, "starts_per_second": 1000, "run": fake_run(markers, 0.05)},
        )
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    calls = Counter(markers.read_text().split())
    assert set(calls) == {r.key for r in plan.runs}
    assert set(calls.values()) == {1}
    assert {r.state for r in rows(store)} == {DONE}


def test_a_batch_killed_halfway_resumes_with_each_key_finished_once(
    tmp_path: Path, store: Store
) -> None:
    plan_path = write_plan(tmp_path, runs=2)
    markers = tmp_path / "markers"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.batch.fake", str(plan_path), store.url, str(markers), "2"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (
        not markers.exists() or len(markers.read_text().split()) < 4
    ):
        assert proc.poll() is None, "the batch ended before it was killed"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    plan = load_plan(plan_path)
    before = progress(store, plan)
    assert 0 < before.finished < before.total
    recorded = {r.run_key for r in rows(store) if r.state == DONE}
    # Resume: the dead process's running keys are taken over; finished ones are not redone.
    again = tmp_path / "again"
    execute(store, plan, RunOptions(), jobs=2, starts_per_second=1000, run=fake_run(again))
    redone = set(again.read_text().split())
    assert not redone & recorded
    assert redone | recorded == {r.key for r in plan.runs}
    assert len(rows(store)) == len(plan.runs)
    assert {r.state for r in rows(store)} == {DONE}
    assert progress(store, plan).finished == len(plan.runs)


def test_each_worker_runs_with_a_warm_pool_of_its_own_closed_with_the_batch(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's runs reuse one pool of warm worlds (replay.world.warm): never two runs at
    once on the same pool, no more pools than workers, and every pool closed at the end."""
    from replay.world.warm import WarmPool, warm_pool

    closed: list[int] = []
    monkeypatch.setattr(WarmPool, "close", lambda self: closed.append(id(self)))
    plan = load_plan(write_plan(tmp_path, runs=3))
    lock = threading.Lock()
    busy: set[int] = set()
    seen: Counter[int] = Counter()
    marks = fake_run(tmp_path / "markers", 0.02)

    def run(item: PlannedRun, options: RunOptions) -> Finished:
        pool = warm_pool()
        assert pool is not None
        with lock:
            assert id(pool) not in busy, "two runs at once on one worker's pool"
            busy.add(id(pool))
            seen[id(pool)] += 1
        try:
            return marks(item, options)  # type: ignore[no-any-return]
        finally:
            with lock:
                busy.discard(id(pool))

    execute(store, plan, RunOptions(), jobs=3, starts_per_second=1000, run=run)
    assert warm_pool() is None  # the batch's pools were this worker threads' alone
    assert sum(seen.values()) == len(plan.runs) == 18
    assert 1 <= len(seen) <= 3
    assert max(seen.values()) > 1, "a pool serves more than one run"
    assert sorted(closed) == sorted(seen)
