"""The report of issue 21, end to end (Docker): two demo cases replayed by ``replay run``
through the real gateway, sandbox and grader, then ``replay results report`` broken down by
tag, by case age and by a training cutoff.

The model is the stub playing each case's gold trajectory, served on loopback and given as
``--model-upstream``: to the runner and the report it is a model like any other (a ``--stub``
run is calibration and never reported). The calibrations are recorded directly, for the case
versions replayed: ``replay case calibrate`` is tested in tests/run, and running it here
would triple the test's runs.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from replay.base.case import case_digest, read_case
from replay.cases.age import age_bucket
from replay.harness.spec import load_harness
from replay.harness.stub.app import StubConfig, make_stub_app
from replay.results import Store
from replay.results.models import CalibrationRow
from replay.run.runner import _StubServer
from replay.run.trajectories import build_script
from replay.snapshot import load_snapshot
from tests.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
CARET = ROOT / "cases" / "demo-caret-zero" / "case.yaml"  # github, edge-case, python, bug
ORDER = ROOT / "cases" / "demo-prerelease-order" / "case.yaml"  # linear, slack, python, bug


def _row(out: str, first: str, cases: int, rate: str) -> bool:
    """A breakdown table's row: group, harness, model, case count, pass rate."""
    pattern = rf"^\s*{re.escape(first)}\s+reference\s+gpt-4\.1\s+{cases}\s+{re.escape(rate)}\s"
    return re.search(pattern, out, re.MULTILINE) is not None


def test_runs_of_two_demo_cases_reported_by_tag_and_by_case_age(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "results.db")
    spec, _ = load_harness("reference")
    store = Store.open(db)
    try:
        for path in (CARET, ORDER):
            loaded = read_case(path)
            store.record_calibration(
                CalibrationRow(
                    case_id=loaded.id, case_digest=case_digest(loaded), calibrated=True,
                    runs=1, gold_passes=1, idle_fails=1, at=datetime.now(UTC),
                )
            )  # fmt: skip
    finally:
        store.close()
    with _StubServer() as server:
        for path in (CARET, ORDER):
            case = read_case(path).case
            script = spec.stub.apply(build_script(case, load_snapshot(case.snapshot), "gold"))
            server.app = make_stub_app(StubConfig(script=script))
            result = run_cli(
                capsys, "--db", db, "run", str(path), "--model", "gpt-4.1",
                "--model-upstream", server.url, "--out", str(tmp_path / "runs"),
                "--expect", "pass",
            )  # fmt: skip
            assert result.code == 0, result.out + result.err

    report = run_cli(
        capsys, "--db", db, "results", "report", str(CARET), str(ORDER),
        "--training-cutoff", "2026-03-12T12:00:00Z",
    )  # fmt: skip
    out = report.out
    assert report.code == 0, out + report.err
    assert "demo-caret-zero@" in out and "demo-prerelease-order@" in out
    # By tag: each case under each of its tags; the shared ones hold both.
    tags = out.partition("by tag")[2].partition("by case age")[0]
    for tag in ("bug", "python"):
        assert _row(tags, tag, 2, "2/2 = 1.00"), tags
    for tag in ("edge-case", "github", "linear", "slack"):
        assert _row(tags, tag, 1, "1/1 = 1.00"), tags
    assert "Wilson, all runs agree" in tags and "Wilson, one case" in tags
    # By age at each run's start (today): both fixes are in the same bucket.
    ages = out.partition("by case age (fix to each run's start)")[2].partition("by training")[0]
    fixed = read_case(CARET).case.fixed_at
    assert _row(ages, age_bucket(fixed, datetime.now(UTC)), 2, "2/2 = 1.00"), ages
    # By the cutoff: demo-prerelease-order was fixed at 10:21 that day, demo-caret-zero the
    # next day.
    split = out.partition("by training cutoff 2026-03-12T12:00:00+00:00")[2]
    assert _row(split, "after-cutoff", 1, "1/1 = 1.00"), split
    assert _row(split, "before-cutoff", 1, "1/1 = 1.00"), split
    assert "never added up" in out
    # Measured at a date: six weeks after the fixes, both are under three months old.
    dated = run_cli(
        capsys, "--db", db, "results", "report", str(CARET), str(ORDER), "--as-of", "2026-04-25"
    )
    ages = dated.out.partition("by case age (fix to 2026-04-25)")[2]
    assert _row(ages, "<3 months", 2, "2/2 = 1.00"), ages
    assert ">1 year" not in ages and "3-12 months" not in ages
