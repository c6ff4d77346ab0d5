"""Calibrating a case before it counts: the gold run passes and the idle run fails, K times.

A case whose pipeline cannot tell the real fix from doing nothing (a flaky hidden test, a
side-effect rule the real fix itself breaks, a world that cannot be reached) measures
nothing, so it is marked and left out of the results.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from replay.base.case import case_digest, read_case
from replay.base.errors import ReplayError
from replay.base.outcomes import Outcome
from replay.results import CalibrationRow, Store
from replay.run.runner import RunOptions, RunResult, run_case


class CalibrationError(ReplayError):
    """Calibration could not run the case at all (its environment did not build, say): the
    message is the failure's own account, and where it is kept beside the case."""


@dataclass(frozen=True)
class Calibration:
    case_id: str
    calibrated: bool
    gold: list[RunResult]
    idle: list[RunResult]

    def explain(self) -> list[str]:
        """Every run whose outcome was not the expected one (gold: pass, idle: model_fail):
        its outcome, its reason (a failing test command's own last lines among them) and its
        run directory, where its full logs are (``tests/output-N.txt``)."""
        return [
            f"{label} run {r.attempt}: {r.outcome.value}: {r.reason} (run directory: {r.run_dir})"
            for label, runs, want in (
                ("gold", self.gold, Outcome.PASS),
                ("idle", self.idle, Outcome.MODEL_FAIL),
            )
            for r in runs
            if r.outcome != want
        ]


def calibrate(case_path: Path, options: RunOptions, runs: int = 3) -> Calibration:
    """Run gold and idle ``runs`` times each with the stub model; record the verdict."""
    loaded = read_case(case_path)
    try:
        gold = run_case(loaded, replace(options, stub="gold", runs=runs))
        idle = run_case(loaded, replace(options, stub="idle", runs=runs))
    except ReplayError as exc:
        # Before any run (the environment's setup failed, the snapshot leaks): the error
        # names the command and its output's end; it is kept in the case's logs directory.
        logs = loaded.path.parent / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        log = logs / "calibrate-error.log"
        log.write_text(f"{exc}\n")
        raise CalibrationError(
            f"{loaded.id}: calibration could not run: {exc}\n  log: {log}"
        ) from exc
    gold_passes = sum(r.outcome == Outcome.PASS for r in gold)
    idle_fails = sum(r.outcome == Outcome.MODEL_FAIL for r in idle)
    calibrated = gold_passes == len(gold) and idle_fails == len(idle)
    case_id = loaded.id
    store = Store.open(options.db)
    try:
        store.record_calibration(
            CalibrationRow(
                case_id=case_id,
                case_digest=case_digest(loaded),
                calibrated=calibrated,
                runs=runs,
                gold_passes=gold_passes,
                idle_fails=idle_fails,
                at=datetime.now(UTC),
            )
        )
    finally:
        store.close()
    return Calibration(case_id, calibrated, gold, idle)
