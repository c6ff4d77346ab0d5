"""A real ``replay batch run`` (Docker, the stub model, PostgreSQL) SIGKILLed while a run is
mid-flight: its world processes end on their own within a bounded wait, and once the batch is
run again no container, network, volume, run directory or process of the killed batch is
left, and every key is finished exactly once."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import docker
import pytest
from sqlalchemy import select

from replay.results import Store
from replay.results.models import BatchRunRow, RunRow
from replay.runtime.base import OWNER_LABEL
from tests.postgres import fresh_database

ROOT = Path(__file__).resolve().parents[2]
REPLAY = Path(sys.executable).with_name("replay")


def world_groups(parent: int) -> set[int]:
    """The process groups of the world processes ``parent`` started (each leads its own)."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        at = argv.index(b"--parent-pid") + 1 if b"--parent-pid" in argv else 0
        if at and b"world" in argv and b"up" in argv and argv[at] == str(parent).encode():
            found.add(int(entry.name))
    return found


def members(groups: set[int]) -> list[int]:
    """Live processes (not zombies) in any of ``groups``: the worlds and what they started."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if fields[0] not in ("Z", "X") and int(fields[2]) in groups:
            found.append(int(entry.name))
    return found


def until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


@pytest.fixture
def client() -> Iterator[docker.DockerClient]:
    c = docker.from_env()
    try:
        yield c
    finally:
        c.close()


def leftovers(client: docker.DockerClient, pid: int) -> list[str]:
    """Containers, networks and volumes whose owner label is the batch process ``pid``."""
    flt = {"label": f"{OWNER_LABEL}={pid}@{socket.gethostname()}"}
    return (
        # A run may remove a container between the list and its inspect: skip those.
        [
            f"container {c.name}"
            for c in client.containers.list(all=True, filters=flt, ignore_removed=True)
        ]
        + [f"network {n.name}" for n in client.networks.list(filters=flt)]
        + [f"volume {v.name}" for v in client.volumes.list(filters=flt)]
    )


def test_a_real_batch_sigkilled_mid_run_leaves_nothing_once_resumed(
    tmp_path: Path, postgres: str, client: docker.DockerClient
) -> None:
    db = fresh_database(postgres)
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "schema: 1\nname: killed\n"
        f"cases: [{ROOT}/cases/demo-caret-zero/case.yaml]\n"
        "candidates: [{name: gold, stub: gold}]\nruns: 3\n"
    )
    # Run directories under a root of the test's own: what is left there is this batch's.
    # Its containers, networks and volumes carry that root, so no sweep of another test
    # (the xdist workers share the engine) takes them before the resume can.
    run_root = Path(tempfile.mkdtemp(prefix="rr-", dir="/tmp"))
    env = {**os.environ, "REPLAY_RUN_ROOT": str(run_root)}
    argv = [str(REPLAY), "--db", db, "batch", "run", str(plan), "--jobs", "2",
            "--out", str(tmp_path / "runs")]  # fmt: skip
    store = Store(db)
    try:

        def finished() -> int:
            with store.session() as s:
                rows = s.scalars(select(BatchRunRow)).all()
            return sum(r.state == "done" for r in rows)

        log = (tmp_path / "first.log").open("wb")
        batch = subprocess.Popen(
            argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        seen: list[set[int]] = []

        def in_flight() -> bool:
            # The batch is stopped while it is looked at, so that a run seen in flight cannot
            # finish and clean up between the look and the kill (CI's load once let it).
            os.killpg(batch.pid, signal.SIGSTOP)
            groups = world_groups(batch.pid)
            seen[:] = [groups]
            if groups and leftovers(client, batch.pid):
                return True  # left stopped: the kill comes next
            os.killpg(batch.pid, signal.SIGCONT)
            return False

        try:
            # Halfway: one key finished, the next ones mid-flight (their sandbox and world up),
            # and the kill at once (a run's containers live only seconds).
            until(lambda: finished() >= 1, 300, "a first finished run")
            until(in_flight, 120, "a run in flight (a world and a container of the batch)")
        finally:
            os.killpg(batch.pid, signal.SIGKILL)
            batch.wait()
            log.close()
        groups = seen[0] if seen else set()
        assert finished() < 3
        # The worlds (in sessions of their own, so not hit by the killpg) end by themselves.
        until(lambda: not members(groups), 30, f"the worlds {groups} to end")
        # What the kill left: the run's containers and volumes, or (when the engine was
        # removing the last of them as the kill came) its run directory.
        left = leftovers(client, batch.pid) + [str(p) for p in run_root.iterdir()]
        assert left, "the kill left nothing of the run in flight to collect"

        again = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "leftover(s) of this batch's dead processes" in again.stdout
        assert leftovers(client, batch.pid) == []
        assert members(groups) == [] and world_groups(batch.pid) == set()
        assert list(run_root.iterdir()) == []

        with store.session() as s:
            keys = s.scalars(select(BatchRunRow)).all()
            graded = s.scalars(select(RunRow).where(RunRow.outcome.is_not(None))).all()
        assert sorted((k.index, k.state, k.outcome) for k in keys) == [
            (i, "done", "pass") for i in (1, 2, 3)
        ]
        # Exactly once: one graded run per key, the one the key names.
        assert sorted(r.id for r in graded) == sorted(k.run_id or "" for k in keys)
        # The runs the kill cut short are not left "running": they are marked abandoned.
        with store.session() as s:
            rest = s.scalars(select(RunRow).where(RunRow.outcome.is_(None))).all()
        assert rest, "the kill cut at least one run short"
        assert {(r.status, r.finished_at is not None) for r in rest} == {("abandoned", True)}
    finally:
        store.close()
        shutil.rmtree(run_root, ignore_errors=True)
