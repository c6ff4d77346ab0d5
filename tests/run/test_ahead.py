"""The next run's sandbox, started while a run is graded (``_Ahead`` in the runner): every run
but a batch's first gets one, it is that run's own (its id, its directory), a world whose
gateway changed in between makes the run start a fresh one, and nothing of a sandbox started
ahead outlives the batch. Against the real Docker engine, on the demo case.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import docker  # type: ignore[import-untyped]
import pytest

from replay.run.runner import RunOptions, RunResult, run_case
from replay.runtime.base import RUN_LABEL
from replay.runtime.sandbox import Sandbox
from replay.world.warm import WarmWorld
from tests.run.conftest import CARET


@pytest.fixture
def starts(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, bool]]]:
    """Every sandbox started: its run id, and whether it was started in the runner's thread."""
    seen: list[tuple[str, bool]] = []
    real = Sandbox.start

    def start(self: Sandbox) -> Sandbox:
        seen.append((self.run_id, threading.current_thread() is threading.main_thread()))
        return real(self)

    monkeypatch.setattr(Sandbox, "start", start)
    yield seen


@pytest.fixture
def turns(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, float, float, int]]]:
    """Every agent's turn: its run id, when it began (monotonic), when its sandbox's wall-time
    limit is counted from, and the clock's offset from T's reading then (seconds)."""
    seen: list[tuple[str, float, float, int]] = []
    real = Sandbox.agent_turn

    def agent_turn(self: Sandbox) -> None:
        began = time.monotonic()
        real(self)
        assert self.container is not None and self.config.clock_at is not None
        expected = round((self.config.clock_at - datetime.now(UTC)).total_seconds())
        offset = int(self.env["FAKETIME"]) - expected
        seen.append((self.run_id, began, self.container.started, offset))  # type: ignore[attr-defined]

    monkeypatch.setattr(Sandbox, "agent_turn", agent_turn)
    yield seen


def _batch(tmp: Path, runs: int, clock: bool = False) -> list[RunResult]:
    options = RunOptions(
        stub="gold", runs=runs, out=tmp / "runs", db=str(tmp / "r.db"), clock=clock
    )
    results = run_case(CARET, options)
    assert [r.outcome for r in results] == ["pass"] * runs, [r.reason for r in results]
    return results


def _leftovers(run_ids: list[str]) -> list[str]:
    """Containers and volumes of these runs still on the engine."""
    client = docker.from_env()
    try:
        found: list[str] = []
        for run in run_ids:
            flt = {"label": f"{RUN_LABEL}={run}"}
            found += [c.name for c in client.containers.list(all=True, filters=flt)]
            found += [v.name for v in client.volumes.list(filters=flt)]
        return found
    finally:
        client.close()


def test_every_run_but_the_first_gets_the_sandbox_started_ahead_and_nothing_outlives_it(
    tmp_path: Path, starts: list[tuple[str, bool]], turns: list[tuple[str, float, float, int]]
) -> None:
    results = _batch(tmp_path, 3, clock=True)
    ids = [r.run_id for r in results]
    # The first run starts its own; the second's and third's were started while the run
    # before was graded, each under the id (and in the directory) of the run that used it.
    assert starts == [(ids[0], True), (ids[1], False), (ids[2], False)]
    assert [r.run_dir.name for r in results] == ids
    assert sorted(p.name for p in (tmp_path / "runs" / "demo-caret-zero").iterdir()) == sorted(ids)
    assert _leftovers(ids) == []
    # Each agent's wall-time limit and clock count from its own turn, not from its sandbox's
    # start ahead of it (which would take the previous run's grading off its time).
    assert [t[0] for t in turns] == ids
    assert all(began <= counted for _, began, counted, _ in turns), turns
    assert all(abs(offset) <= 1 for *_, offset in turns), turns


def test_a_world_whose_gateway_changed_gets_a_fresh_sandbox(
    tmp_path: Path, starts: list[tuple[str, bool]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sandbox started ahead was made for another gateway: it is removed, unused."""
    real = WarmWorld.gateway

    def moved(self: WarmWorld) -> dict[str, Any] | None:
        state = real(self)
        return None if state is None else {**state, "proxy": "http://127.0.0.1:9"}

    monkeypatch.setattr(WarmWorld, "gateway", moved)
    results = _batch(tmp_path, 2)
    ids = [r.run_id for r in results]
    assert starts == [(ids[0], True), (ids[1], False), (ids[1], True)]
    assert _leftovers(ids) == []
