"""A run that crashes the runner ends that run only: it is ``infra_fail`` with its error, the
batch's other runs go on, and a key whose runs crash the runner twice is quarantined (never
claimed again, reported by ``batch run`` and ``batch status``)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from replay.base.outcomes import Outcome
from replay.batch.engine import (
    DONE,
    INFRA,
    QUARANTINED,
    Finished,
    execute,
    failures,
    progress,
    quarantined,
)
from replay.batch.plan import PlannedRun, load_plan
from replay.grade.model import load_grade
from replay.results import Store
from replay.results.models import BatchRunRow, RunRow
from replay.run.runner import RunOptions
from replay.runtime.base import Runtime
from tests.batch.fake import fake_run
from tests.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
CARET = ROOT / "cases" / "demo-caret-zero" / "case.yaml"


def _plan(tmp: Path, crashing: str, cases: str = f"{ROOT}/cases/demo-*/case.yaml") -> Path:
    path = tmp / "plan.yaml"
    path.write_text(
        f"schema: 1\nname: crashy\ncases: [{cases}]\n"
        f"candidates:\n  - {{name: gold, stub: gold}}\n  - {{name: {crashing}, stub: idle}}\n"
        "runs: 1\ninfra_retries: 5\n"
    )
    return path


def _rows(store: Store) -> dict[str, BatchRunRow]:
    with store.session() as s:
        return {r.run_key: r for r in s.scalars(select(BatchRunRow)).all()}


def test_a_key_whose_runs_crash_twice_is_quarantined_and_never_claimed_again(
    tmp_path: Path, store: Store
) -> None:
    plan = load_plan(_plan(tmp_path, "crashy"))
    markers = tmp_path / "markers"
    good = fake_run(markers)
    calls: Counter[str] = Counter()

    def run(item: PlannedRun, options: RunOptions) -> Finished:
        calls[item.key] += 1
        if item.candidate.name == "crashy":
            # Not a ReplayError: something nothing expected (a reader's bug, say).
            raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")
        return good(item, options)

    first = execute(store, plan, RunOptions(), starts_per_second=1000, run=run)
    assert first.ran == 6, "the crashes stopped nothing"
    crashy = {r.key for r in plan.runs if r.candidate.name == "crashy"}
    rows = _rows(store)
    assert {rows[k].state for k in rows.keys() - crashy} == {DONE}
    assert {(rows[k].state, rows[k].crashes) for k in crashy} == {(INFRA, 1)}
    assert all("UnicodeEncodeError" in (rows[k].error or "") for k in crashy)
    # Run again: each crashing key is tried once more (within the plan's 5 retries), crashes
    # a second time and is quarantined; the next reruns leave it alone.
    for _ in range(3):
        execute(store, plan, RunOptions(), starts_per_second=1000, run=run)
    assert {calls[k] for k in crashy} == {2} and {calls[k] for k in calls.keys() - crashy} == {1}
    rows = _rows(store)
    assert {(rows[k].state, rows[k].crashes, rows[k].outcome) for k in crashy} == {
        (QUARANTINED, 2, INFRA)
    }
    prog = progress(store, plan)
    assert prog.finished == 6 and prog.quarantined == 3 and prog.outcomes == {"pass": 3, INFRA: 3}
    assert {r.run_key for r in quarantined(store, plan)} == crashy
    assert {r.state for r in failures(store, plan)} == {QUARANTINED}


def test_a_run_graded_as_a_crash_counts_towards_quarantine_like_one_that_raised(
    tmp_path: Path, store: Store
) -> None:
    plan = load_plan(_plan(tmp_path, "crashy"))
    good = fake_run(tmp_path / "markers")

    def run(item: PlannedRun, options: RunOptions) -> Finished:
        end = good(item, options)
        if item.candidate.name != "crashy":
            return end
        # What run_case returns for a run that crashed the runner (replay.run.runner._crashed).
        return Finished(end.run_id, Outcome.INFRA_FAIL, 10, 0.0, crashed="Traceback ...\nBoom")

    for _ in range(2):
        execute(store, plan, RunOptions(), starts_per_second=1000, run=run)
    rows = _rows(store)
    crashy = [r for r in rows.values() if r.candidate.startswith("crashy")]
    assert {(r.state, r.crashes, r.error) for r in crashy} == {
        (QUARANTINED, 2, "Traceback ...\nBoom")
    }
    assert {r.tokens for r in crashy} == {20}, "the tokens the crashed runs used still count"


def test_status_names_the_quarantined_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _plan(tmp_path, "crashy")
    plan = load_plan(path)
    db = f"sqlite:///{tmp_path}/r.db"

    def run(item: PlannedRun, options: RunOptions) -> Finished:
        if item.candidate.name == "crashy":
            raise KeyError("no such thing")
        return fake_run(tmp_path / "markers")(item, options)

    store = Store(db)
    try:
        for _ in range(2):
            execute(store, plan, RunOptions(), starts_per_second=1000, run=run)
    finally:
        store.close()
    status = run_cli(capsys, "--db", db, "batch", "status", str(path))
    assert status.code == 0, status.err
    assert status.out.count("quarantined") == 3 and "KeyError: 'no" in status.out


# ------------------------------------------------------------------ real runs


def test_a_real_run_crashing_the_grader_is_infra_fail_and_gold_beside_it_passes(
    tmp_path: Path,
    caret_env: tuple[Runtime, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Through ``replay batch run``: the idle candidate's grading raises (a real exception in
    the real grader, injected only there); gold passes beside it; a rerun tries the crashed
    key once more, it crashes again and is quarantined; a third run leaves it alone."""
    import replay.grade.grader as grader

    real = grader._grade_run

    def crashing(run: Any, box: Any, prices: Any) -> Any:
        if run.model == "stub:idle":
            raise RuntimeError("injected: the grader fell over")
        return real(run, box, prices)

    monkeypatch.setattr(grader, "_grade_run", crashing)
    path = _plan(tmp_path, "idle", cases=str(CARET))
    db = f"sqlite:///{tmp_path}/r.db"
    argv = ("--db", db, "batch", "run", str(path), "--jobs", "1", "--out", str(tmp_path / "runs"))
    first = run_cli(capsys, *argv)
    assert first.code == 1, first.out + first.err  # the crashed key is to be retried
    store = Store(db)
    try:
        rows = {r.candidate.split(":")[0]: r for r in _rows(store).values()}
        assert (rows["gold"].state, rows["gold"].outcome) == (DONE, "pass")
        idle = rows["idle"]
        assert (idle.state, idle.outcome, idle.crashes) == (INFRA, INFRA, 1)
        assert idle.error is not None and "injected: the grader fell over" in idle.error
        with store.session() as s:
            run = s.get(RunRow, idle.run_id)
            assert run is not None and run.outcome == "infra_fail" and run.grade is not None
            run_dir = Path(str(run.run_dir))
            assert run.grade.detail["reason"].endswith(
                "RuntimeError: injected: the grader fell over"
            )
        grade = load_grade(run_dir / "grade.json")
        assert grade.outcome == Outcome.INFRA_FAIL and grade.tests is None
        assert "injected" in (run_dir / "crash.txt").read_text()
        assert grade.tokens.input > 0, "the model calls it made are still counted"

        second = run_cli(capsys, *argv)
        assert second.code == 0, second.out + second.err
        assert "quarantined 1 run(s) that crashed the runner twice" in second.out
        assert "demo-caret-zero idle" in second.out and "injected" in second.out
        third = run_cli(capsys, *argv)
        assert third.code == 0 and "ran 0" in third.out
        with store.session() as s:
            runs = s.scalars(select(RunRow)).all()
        assert Counter(r.model for r in runs) == {"stub:gold": 1, "stub:idle": 2}
        rows = {r.candidate.split(":")[0]: r for r in _rows(store).values()}
        assert (rows["idle"].state, rows["idle"].crashes) == (QUARANTINED, 2)
        assert json.loads((run_dir / "grade.json").read_text())["outcome"] == "infra_fail"
    finally:
        store.close()


def test_a_batch_of_hostile_runs_beside_gold_finishes_each_healthy(
    tmp_path: Path, caret_env: tuple[Runtime, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33: attacks that once crashed the runner or voided their run (the transcript made
    a directory, a lone surrogate in it, an odd retry count on a model call, a refusal drawn
    after the harness's last call) beside gold in one ``replay batch run``: gold passes and
    each attack is a finished ``model_fail``, none infra, none crashed."""
    attacks = ["transcript-dir", "transcript-surrogate", "odd-retry-count", "late-refusal"]
    path = tmp_path / "plan.yaml"
    candidates = "".join(f"  - {{name: {a}, stub: {a}}}\n" for a in ["gold", *attacks])
    path.write_text(
        f"schema: 1\nname: hostile\ncases: [{CARET}]\ncandidates:\n{candidates}"
        "runs: 1\ninfra_retries: 0\n"
    )
    db = f"sqlite:///{tmp_path}/r.db"
    argv = ("--db", db, "batch", "run", str(path), "--jobs", "1", "--out", str(tmp_path / "runs"))
    done = run_cli(capsys, *argv)
    assert done.code == 0, done.out + done.err
    store = Store(db)
    try:
        rows = {r.candidate.split(":")[0]: r for r in _rows(store).values()}
    finally:
        store.close()
    assert (rows["gold"].state, rows["gold"].outcome) == (DONE, "pass")
    for attack in attacks:
        row = rows[attack]
        assert (row.state, row.outcome, row.crashes) == (DONE, "model_fail", 0), (attack, row)
