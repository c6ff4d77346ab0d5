"""Real runs for the viewer's end-to-end tests, made once for the package (Docker, the stub
model, about two minutes): a comparison of cheat against gold on two demo cases (calibrated
first: a gold and an idle run each), and a reckless run. Every run goes through the real
gateway, sandbox and grader."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from replay.results import RunRow, Store

ROOT = Path(__file__).resolve().parents[2]
CARET = ROOT / "cases" / "demo-caret-zero" / "case.yaml"
PRERELEASE = ROOT / "cases" / "demo-prerelease-order" / "case.yaml"
COMPARISON = "cheat-vs-gold"
RUN_TIMEOUT = 900
"""Seconds each command may take (a bound, not an expectation: it takes one or two minutes)."""


@dataclass(frozen=True)
class Real:
    """The store the runs are in, and the runs the tests look at."""

    db: Path
    cases: list[Path]
    doc: dict[str, Any]
    """``replay compare --json``'s document of the comparison."""
    gold: RunRow
    cheat: RunRow
    reckless: RunRow


def _replay(*args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "replay", *args],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, f"replay {' '.join(args)}\n{done.stdout}\n{done.stderr}"


def _one(runs: list[RunRow], model: str) -> RunRow:
    found = [r for r in runs if r.case_id == "demo-caret-zero" and r.model == model]
    assert len(found) == 1, (model, [(r.case_id, r.model) for r in runs])
    return found[0]


@pytest.fixture(scope="package")
def real(tmp_path_factory: pytest.TempPathFactory) -> Real:
    root = tmp_path_factory.mktemp("view-real")
    db, out = root / "results.db", root / "runs"
    common = ["--db", str(db)]
    _replay(
        *common, "compare", str(CARET), str(PRERELEASE), "--name", COMPARISON,
        "--a", "name=cheat,stub=cheat", "--b", "name=gold,stub=gold", "--calibrate", "1",
        "--runs", "1", "--out", str(out), "--json", str(root / "compare.json"),
    )  # fmt: skip
    _replay(*common, "run", str(CARET), "--stub", "reckless", "--out", str(out))
    store = Store.open(str(db))
    try:
        # The comparison's runs of caret (arm A cheat, arm B gold), and the reckless run.
        runs = [r for r in store.runs() if r.candidate is not None or r.model == "stub:reckless"]
    finally:
        store.close()
    return Real(
        db=db,
        cases=[CARET, PRERELEASE],
        doc=json.loads((root / "compare.json").read_text()),
        gold=_one(runs, "stub:gold"),
        cheat=_one(runs, "stub:cheat"),
        reckless=_one(runs, "stub:reckless"),
    )
