"""``replay run`` with several runs: a run that crashes the runner is recorded as
``infra_fail`` with its error (``grade.json``, ``crash.txt``, the results store's rows) and
the runs after it go on."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from replay.base.outcomes import Outcome
from replay.grade.model import load_grade
from replay.results import Store
from replay.results.models import RunRow
from replay.run.runner import RunOptions, run_case
from replay.runtime.base import Runtime
from tests.run.conftest import CARET


def test_a_run_that_crashes_the_runner_is_infra_fail_and_the_next_run_goes_on(
    tmp_path: Path, caret_env: tuple[Runtime, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real failure where the runner records a graded run: the store's first finish_run
    # raises (after the grade row was written, so the crash's grade must replace it).
    real = Store.finish_run
    calls = []

    def failing(self: Store, run_id: str, **kw: Any) -> None:
        calls.append(run_id)
        if len(calls) == 1:
            raise RuntimeError("injected: the store went away")
        real(self, run_id, **kw)

    monkeypatch.setattr(Store, "finish_run", failing)
    db = f"sqlite:///{tmp_path}/r.db"
    first, second = run_case(CARET, RunOptions(stub="idle", runs=2, out=tmp_path, db=db))
    assert first.outcome == Outcome.INFRA_FAIL
    assert first.reason == (
        "infrastructure failure: the runner crashed: RuntimeError: injected: the store went away"
    )
    assert first.crashed is not None and "Traceback" in first.crashed
    assert second.outcome == Outcome.MODEL_FAIL and second.crashed is None
    assert second.attempt == 2 and second.run_dir != first.run_dir
    grade = load_grade(first.run_dir / "grade.json")
    assert grade == first.grade and grade.infra_errors == [first.reason.split(": ", 1)[1]]
    assert grade.tokens.input > 0, "the crashed run's model calls still count"
    assert "injected: the store went away" in (first.run_dir / "crash.txt").read_text()
    store = Store(db)
    try:
        with store.session() as s:
            rows = {r.id: r for r in s.query(RunRow).all()}
            row = rows[first.run_id]
            assert row.outcome == "infra_fail" and row.status == "finished"
            assert row.grade is not None and row.grade.detail["outcome"] == "infra_fail"
            assert rows[second.run_id].outcome == "model_fail"
    finally:
        store.close()


def _my_worlds() -> list[int]:
    """This process's world processes (their command line names it as their parent)."""
    mine = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            b"--parent-pid" in argv
            and argv[argv.index(b"--parent-pid") + 1] == str(os.getpid()).encode()
        ):
            mine.append(int(entry.name))
    return mine


def test_a_run_whose_world_dies_under_it_is_infra_fail_and_the_next_gets_a_new_one(
    tmp_path: Path, caret_env: tuple[Runtime, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gateway and the fakes going away mid-run (killed with a Ray node, say) leave the
    agent's later calls failed and its writes missing from the world's end: no verdict on the
    model. Seen as a gold run graded ``model_fail`` for a missing pull request (the world was
    killed between the push and ``gh pr create``); here the world is killed as the harness
    ends, before the run's files are taken from it. The next run's world is a new one with
    its own address: the killed world's state file, left behind, once handed the next run
    the dead proxy's address, and that run's model calls failed where no gateway saw them
    (graded ``model_fail`` over a "healthy" wire of 0 calls)."""
    import replay.run.runner as runner

    real = runner._copy_out
    killed: list[int] = []

    def kill_then_copy(*args: Any, **kwargs: Any) -> Any:
        if not killed:
            for pid in _my_worlds():
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "_copy_out", kill_then_copy)
    db = f"sqlite:///{tmp_path}/r.db"
    first, second = run_case(CARET, RunOptions(stub="gold", runs=2, out=tmp_path, db=db))
    assert killed, "no world of this process was found"
    assert first.outcome == Outcome.INFRA_FAIL, first.reason
    assert "the world's process ended during the run (status -9)" in first.reason
    assert second.outcome == Outcome.PASS, second.reason
