"""``replay results report`` from synthetic rows: calibration keyed by the case digest, case
versions never pooled, pass^k over healthy runs, pass@k for every k (no Docker)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from replay.results import RunRow, Store
from replay.results.models import CalibrationRow
from replay.results.report import build_report
from tests.cli_helpers import run_cli

WHEN = datetime(2026, 3, 12, tzinfo=UTC)


def _store(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path}/r.db")


def _calibrate(store: Store, case: str, digest: str, calibrated: bool = True) -> None:
    store.record_calibration(
        CalibrationRow(
            case_id=case,
            case_digest=digest,
            calibrated=calibrated,
            runs=1,
            gold_passes=1,
            idle_fails=1,
            at=WHEN,
        )
    )


def _runs(store: Store, case: str, digest: str | None, outcomes: list[str]) -> None:
    for i, outcome in enumerate(outcomes, 1):
        store.add_run(
            RunRow(
                id=f"{case}-{digest}-{i}",
                case_id=case,
                case_digest=digest,
                harness="h",
                model="m",
                attempt=i,
                started_at=WHEN,
                outcome=outcome,
            )
        )


def test_a_case_edited_after_calibration_is_uncalibrated_and_versions_are_not_pooled(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path)
    _calibrate(store, "c", "a" * 64)
    _runs(store, "c", "a" * 64, ["pass", "pass"])
    # The case changed (new digest) and was not recalibrated: its runs do not count.
    _runs(store, "c", "b" * 64, ["model_fail", "model_fail"])
    report = build_report(store)
    assert [(r.case_digest, r.stats.passes, r.stats.healthy) for r in report.rows] == [
        ("a" * 64, 2, 2)
    ]
    assert "not calibrated" in report.left_out["c@bbbbbbbb"]
    assert "changed since its calibration" in report.left_out["c@bbbbbbbb"]
    # Recalibrated: both versions are reported, each on its own row, never pooled.
    _calibrate(store, "c", "b" * 64)
    report = build_report(store)
    assert [(r.case_digest[:1], r.stats.passes, r.stats.healthy) for r in report.rows] == [
        ("a", 2, 2),
        ("b", 0, 2),
    ]
    assert report.left_out == {}
    # The overall mean counts the case once, at its latest calibrated version.
    assert report.overall[("h", "m")].cases == 1 and report.overall[("h", "m")].mean == 0.0
    store.close()


def test_overall_mean_has_a_case_clustered_standard_error(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _calibrate(store, "c", "a" * 64)
    _calibrate(store, "d", "d" * 64)
    _runs(store, "c", "a" * 64, ["pass", "pass"])
    _runs(store, "d", "d" * 64, ["model_fail", "model_fail", "infra_fail"])
    # Two cases as two clusters: rates 1 and 0, mean .5 over the 4 healthy runs; residual
    # sums +1 and -1: SE^2 = 2/1 * 2 / 4^2, SE = .5 (a run-level SE would say .25).
    est = build_report(store).overall[("h", "m")]
    assert est.mean == 0.5 and est.cases == 2 and est.se == pytest.approx(0.5)
    store.close()


def test_runs_without_a_digest_are_left_out_with_the_reason(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _calibrate(store, "c", "a" * 64)
    _runs(store, "c", None, ["pass"])
    report = build_report(store)
    assert report.rows == [] and "without a case digest" in report.left_out["c"]
    store.close()


def test_pass_hat_k_over_healthy_runs_with_a_retried_transport_failure(
    tmp_path: Path, capsys
) -> None:
    # --runs 3 with one retry: 4 runs, 3 healthy; pass^3 is reported, and pass@k for k>1.
    store = _store(tmp_path)
    _calibrate(store, "c", "a" * 64)
    _runs(store, "c", "a" * 64, ["pass", "transport_fail", "pass", "model_fail"])
    (row,) = build_report(store).rows
    assert row.stats.runs == 4 and row.stats.healthy == 3
    assert sorted(row.stats.pass_hat) == [1, 2, 3]
    store.close()
    result = run_cli(capsys, "--db", str(tmp_path / "r.db"), "results", "report")
    assert result.code == 0, result.out + result.err
    assert "@1 0.67 @2 1.00 @3 1.00 | ^1 0.67 ^2 0.33 ^3 0.00" in result.out
    assert "1/4 spoiled" in result.out
    assert "h / m: mean pass rate 0.67 over 1 case (SE n/a (one case); clustered" in result.out


def test_an_old_store_gains_the_case_digest_column(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    store = Store(f"sqlite:///{db}")
    store.close()
    with sqlite3.connect(db) as conn:  # as a store written before the column existed
        conn.execute("ALTER TABLE runs DROP COLUMN case_digest")
        conn.execute(
            "INSERT INTO runs (id, case_id, harness, model, attempt, started_at, status,"
            " input_tokens, output_tokens, model_calls) VALUES"
            " ('old', 'c', 'h', 'm', 1, '2026-03-12', 'finished', 0, 0, 0)"
        )
    store = Store(f"sqlite:///{db}")
    (old,) = store.runs()
    assert old.id == "old" and old.case_digest is None
    _runs(store, "c", "a" * 64, ["pass"])
    assert {r.case_digest for r in store.runs()} == {None, "a" * 64}
    store.close()


def test_editing_a_case_changes_its_digest(tmp_path: Path) -> None:
    """The key calibrations are looked up by: any edit to the case makes a new version."""
    from replay.base.case import case_digest, read_case

    root = Path(__file__).resolve().parents[2]
    source = root / "cases" / "demo-caret-zero"
    case_dir = tmp_path / "demo-caret-zero"
    case_dir.mkdir()
    for name in ("gold.patch", "hidden_tests.patch"):
        (case_dir / name).write_bytes((source / name).read_bytes())
    text = (source / "case.yaml").read_text()
    snapshot = (root / "snapshots" / "demo").as_posix()
    (case_dir / "case.yaml").write_text(text.replace("../../snapshots/demo", snapshot))
    before = case_digest(read_case(case_dir / "case.yaml"))
    assert before == case_digest(read_case(case_dir / "case.yaml"))
    with (case_dir / "gold.patch").open("a") as f:
        f.write("\n")
    assert case_digest(read_case(case_dir / "case.yaml")) != before


def test_each_case_version_shows_its_own_recorded_strength(tmp_path: Path, capsys) -> None:
    """Issue 37: the report shows beside a case version's results the strength recorded for
    that version (``replay case strength --record``), and says when there is none."""
    from replay.base.case import case_digest, read_case

    root = Path(__file__).resolve().parents[2]
    weak = root / "cases" / "demo-build-metadata-sort" / "case.yaml"
    strong = root / "cases" / "demo-caret-zero" / "case.yaml"
    store = _store(tmp_path)
    digest = case_digest(read_case(weak))
    _calibrate(store, "demo-build-metadata-sort", digest)
    _runs(store, "demo-build-metadata-sort", digest, ["pass", "model_fail"])
    _calibrate(store, "demo-caret-zero", "b" * 64)  # an older version of the case
    _runs(store, "demo-caret-zero", "b" * 64, ["pass"])
    store.close()
    result = run_cli(
        capsys, "--db", str(tmp_path / "r.db"), "results", "report", str(weak), str(strong)
    )
    assert result.code == 0, result.out + result.err
    rows = {line.split()[0]: line for line in result.out.splitlines() if "@" in line[:40]}
    # Weak, and accepted with a reason (its survivors are equivalent: docs/strength.md).
    shown = rows[f"demo-build-metadata-sort@{digest[:8]}"].split()[1:4]
    assert shown == ["81%", "weak,", "accepted"]
    assert rows[f"demo-caret-zero@{'b' * 8}"].split()[1:3] == ["not", "measured"]
