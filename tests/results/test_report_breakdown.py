"""``replay results report`` by tag, by case age and by training cutoff, from synthetic rows
(no Docker): each group its own pass rate, interval and case count, never one score."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from replay.base.case import LoadedCase, case_digest, read_case
from replay.cases.retired import retire
from replay.results import RunRow, Store
from replay.results.models import CalibrationRow
from replay.results.report import NOT_GIVEN, build_report
from tests.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
CARET = ROOT / "cases" / "demo-caret-zero" / "case.yaml"


def _case(tmp: Path, case_id: str, tags: list[str], fixed: str | None) -> LoadedCase:
    """A demo case under another id, tags and fix date (its file under ``tmp/cases``)."""
    base = read_case(CARET)
    fixed_at = None if fixed is None else datetime.fromisoformat(fixed)
    case = base.case.model_copy(update={"id": case_id, "tags": tags, "fixed_at": fixed_at})
    return LoadedCase(case, tmp / "cases" / case_id / "case.yaml")


def _store(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path}/r.db")


def _runs(store: Store, case_id: str, when: str, outcomes: list[str], model: str = "m") -> None:
    digest = case_id[0] * 64
    if not any(c.case_id == case_id for c in store.calibrations().values()):
        store.record_calibration(
            CalibrationRow(
                case_id=case_id, case_digest=digest, calibrated=True, runs=1, gold_passes=1,
                idle_fails=1, at=datetime(2026, 1, 1, tzinfo=UTC),
            )
        )  # fmt: skip
    start = len(store.runs(case_id))
    for i, outcome in enumerate(outcomes, start + 1):
        store.add_run(
            RunRow(
                id=f"{case_id}-{model}-{i}", case_id=case_id, case_digest=digest, harness="h",
                model=model, attempt=i, started_at=datetime.fromisoformat(when), outcome=outcome,
            )
        )  # fmt: skip


@pytest.fixture
def three(tmp_path: Path) -> tuple[Store, list[LoadedCase]]:
    """Three cases: a young security fix, a 6-month-old security fix also tagged
    dependency-update, and a case fixed 2 years before the runs."""
    cases = [
        _case(tmp_path, "a-young", ["security"], "2026-10-01T00:00:00Z"),
        _case(tmp_path, "b-mid", ["security", "dependency-update"], "2026-05-01T00:00:00Z"),
        _case(tmp_path, "c-old", ["feature"], "2024-11-01T00:00:00Z"),
    ]
    store = _store(tmp_path)
    when = "2026-11-15T12:00:00+00:00"
    _runs(store, "a-young", when, ["pass", "pass", "model_fail", "transport_fail"])
    _runs(store, "b-mid", when, ["model_fail", "model_fail", "pass"])
    _runs(store, "c-old", when, ["pass", "pass", "pass"])
    return store, cases


def _groups(report, dimension: str) -> dict[str, tuple[int, int, int]]:  # type: ignore[no-untyped-def]
    return {
        g.group: (g.cases, g.passes, g.healthy)
        for g in report.breakdown
        if g.dimension == dimension and g.model == "m"
    }


def test_each_tag_and_age_group_has_its_own_rate_interval_and_case_count(three) -> None:  # type: ignore[no-untyped-def]
    store, cases = three
    report = build_report(store, cases)
    # A case counts under each of its tags; the transport failure is in no group.
    assert _groups(report, "tag") == {
        "dependency-update": (1, 1, 3),
        "feature": (1, 3, 3),
        "security": (2, 3, 6),
    }
    # Age at each run's start (2026-11-15): 45 days, 198 days, 744 days.
    assert _groups(report, "age") == {
        "<3 months": (1, 2, 3),
        "3-12 months": (1, 1, 3),
        ">1 year": (1, 3, 3),
    }
    security = next(g for g in report.breakdown if g.group == "security")
    assert security.pass_rate == 0.5 and security.method == "clustered by case"
    lo, hi = security.interval
    assert 0.0 <= lo < 0.5 < hi <= 1.0
    feature = next(g for g in report.breakdown if g.group == "feature")
    assert feature.method == "Wilson, one case" and feature.interval[1] == 1.0
    young = next(g for g in report.breakdown if g.group == "<3 months")
    assert young.method == "Wilson, one case"
    assert feature.interval[0] == pytest.approx(0.4385, abs=1e-3)  # Wilson 3/3
    # Ordered: tags, then ages youngest first; no cutoff split unless a cutoff is given.
    assert [g.dimension for g in report.breakdown] == ["tag"] * 3 + ["age"] * 3
    assert [g.group for g in report.breakdown if g.dimension == "age"] == [
        "<3 months", "3-12 months", ">1 year",
    ]  # fmt: skip
    store.close()


def test_age_at_a_date_and_the_training_cutoff_split(three) -> None:  # type: ignore[no-untyped-def]
    store, cases = three
    cutoff = datetime(2026, 6, 1, tzinfo=UTC)
    report = build_report(
        store, cases, as_of=datetime(2027, 11, 1, tzinfo=UTC), training_cutoff=cutoff
    )
    # A year later, every case is over a year old.
    assert _groups(report, "age") == {">1 year": (3, 6, 9)}
    # a-young was fixed after the cutoff (clean); b-mid and c-old before it.
    assert _groups(report, "training cutoff") == {
        "after-cutoff": (1, 2, 3),
        "before-cutoff": (2, 4, 6),
    }
    store.close()


def test_cases_without_a_file_or_a_fix_date_are_their_own_group(tmp_path: Path) -> None:
    store = _store(tmp_path)
    undated = _case(tmp_path, "u-undated", [], None)
    _runs(store, "u-undated", "2026-11-15T12:00:00+00:00", ["pass"])
    _runs(store, "z-unknown", "2026-11-15T12:00:00+00:00", ["model_fail"])
    report = build_report(store, [undated], training_cutoff=datetime(2026, 1, 1, tzinfo=UTC))
    assert _groups(report, "tag") == {"(untagged)": (1, 1, 1), NOT_GIVEN: (1, 0, 1)}
    assert _groups(report, "age") == {"no fix date": (1, 1, 1), NOT_GIVEN: (1, 0, 1)}
    assert _groups(report, "training cutoff") == {"no fix date": (1, 1, 1), NOT_GIVEN: (1, 0, 1)}
    store.close()


def test_configurations_are_never_pooled_in_a_group(three) -> None:  # type: ignore[no-untyped-def]
    store, cases = three
    _runs(store, "c-old", "2026-11-15T12:00:00+00:00", ["model_fail"], model="other")
    report = build_report(store, cases)
    feature = [(g.model, g.passes, g.healthy) for g in report.breakdown if g.group == "feature"]
    assert feature == [("m", 3, 3), ("other", 0, 1)]
    store.close()


def test_a_retired_case_is_left_out_of_rows_and_groups(three, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store, cases = three
    case_file = cases[2].path
    case_file.parent.mkdir(parents=True)
    case_file.write_text("id: c-old\n")
    retire(case_file, "its base image can no longer be built")
    report = build_report(store, cases)
    assert "c-old" not in {r.case_id for r in report.rows}
    assert "feature" not in _groups(report, "tag")
    assert report.left_out["c-old"].endswith(": its base image can no longer be built")
    assert report.left_out["c-old"].startswith("retired 20")
    store.close()


def test_the_cli_prints_each_breakdown_and_refuses_a_bad_date(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The shipped demo case, read from its file: its tags and fix date (2026-03-13).
    store = _store(tmp_path)
    loaded = read_case(CARET)
    digest = case_digest(loaded)
    store.record_calibration(
        CalibrationRow(
            case_id=loaded.id, case_digest=digest, calibrated=True, runs=1, gold_passes=1,
            idle_fails=1, at=datetime(2026, 1, 1, tzinfo=UTC),
        )
    )  # fmt: skip
    for i, outcome in enumerate(["pass", "model_fail"], 1):
        store.add_run(
            RunRow(
                id=f"r{i}", case_id=loaded.id, case_digest=digest, harness="h", model="m",
                attempt=i, started_at=datetime(2026, 4, 1, tzinfo=UTC), outcome=outcome,
            )
        )  # fmt: skip
    store.close()
    db = str(tmp_path / "r.db")
    common = ["--db", db, "results", "report", str(CARET)]
    result = run_cli(capsys, *common, "--training-cutoff", "2026-03-01")
    assert result.code == 0, result.out + result.err
    assert "by tag (a case counts under each of its tags)" in result.out
    for tag in ("github", "edge-case", "python", "bug"):
        assert f"\n {tag} " in result.out or f"\n{tag} " in result.out, tag
    assert "by case age (fix to each run's start)" in result.out
    assert "<3 months" in result.out and "1/2 = 0.50" in result.out
    assert "Wilson, one case" in result.out
    assert "by training cutoff 2026-03-01" in result.out and "after-cutoff" in result.out
    later = run_cli(capsys, *common, "--as-of", "2027-06-01")
    assert "by case age (fix to 2027-06-01)" in later.out and ">1 year" in later.out
    bad = run_cli(capsys, *common, "--training-cutoff", "last spring")
    assert bad.code == 2 and "is not a date" in bad.err


def test_a_group_whose_runs_all_agree_gets_wilson_s_interval_not_a_point(tmp_path: Path) -> None:
    store = _store(tmp_path)
    cases = [_case(tmp_path, n, ["refactor"], "2026-10-01T00:00:00Z") for n in ("p", "q")]
    _runs(store, "p", "2026-11-15T12:00:00+00:00", ["pass", "pass"])
    _runs(store, "q", "2026-11-15T12:00:00+00:00", ["pass"])
    (group,) = [g for g in build_report(store, cases).breakdown if g.dimension == "tag"]
    assert (group.cases, group.passes, group.healthy) == (2, 3, 3)
    assert group.method == "Wilson, all runs agree"
    assert group.interval[0] == pytest.approx(0.4385, abs=1e-3) and group.interval[1] == 1.0
    store.close()
