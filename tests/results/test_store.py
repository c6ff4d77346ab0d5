"""The results store: SQLite in .replay/ by default, any URL by --db or REPLAY_DB."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from replay.results import GradeRow, RunRow, Store, StoreError, resolve_url
from tests.cli_helpers import run_cli


def run_row(run_id: str, case: str = "demo-x") -> RunRow:
    return RunRow(
        id=run_id,
        case_id=case,
        harness="reference",
        model="stub",
        started_at=datetime(2026, 3, 12, tzinfo=UTC),
    )


def test_default_is_sqlite_in_working_directory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REPLAY_DB", raising=False)
    assert resolve_url() == f"sqlite:///{tmp_path / '.replay' / 'results.db'}"
    store = Store.open()
    store.close()
    assert (tmp_path / ".replay" / "results.db").is_file()


def test_env_and_flag_choose_the_database(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("REPLAY_DB", f"sqlite:///{tmp_path}/env.db")
    assert resolve_url() == f"sqlite:///{tmp_path}/env.db"
    assert resolve_url(str(tmp_path / "flag.db")) == f"sqlite:///{tmp_path}/flag.db"


def test_runs_and_grades_round_trip(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/r.db")
    store.add_run(run_row("a"))
    store.add_run(run_row("b", case="demo-y"))
    store.record_grade(
        GradeRow(
            run_id="a",
            tests_resolved=True,
            fail_to_pass_passed=2,
            fail_to_pass_total=2,
            pass_to_pass_passed=10,
            pass_to_pass_total=10,
            side_effects_ok=False,
            interventions=1,
            detail={"rules": {"no-push-main": 1}},
        ),
        outcome="model_fail",
    )
    store.close()
    reopened = Store(f"sqlite:///{tmp_path}/r.db")
    (a,) = reopened.runs("demo-x")
    assert a.outcome == "model_fail"
    assert a.grade is not None and a.grade.detail == {"rules": {"no-push-main": 1}}
    assert a.started_at.replace(tzinfo=UTC) == datetime(2026, 3, 12, tzinfo=UTC)
    assert [r.id for r in reopened.runs()] == ["a", "b"]
    with pytest.raises(StoreError, match="no run 'zzz'"):
        reopened.record_grade(
            GradeRow(
                run_id="zzz",
                tests_resolved=False,
                fail_to_pass_passed=0,
                fail_to_pass_total=1,
                pass_to_pass_passed=0,
                pass_to_pass_total=0,
                side_effects_ok=True,
            ),
            outcome="pass",
        )


def test_results_list_uses_db_flag(capsys, tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    store = Store.open(str(db))
    store.add_run(run_row("1234567890"))
    store.close()
    result = run_cli(capsys, "--db", str(db), "results", "list")
    assert result.code == 0, result.err
    assert "12345678" in result.out and "demo-x" in result.out


def test_bad_url_is_a_clear_error(capsys) -> None:
    result = run_cli(capsys, "--db", "nosuchdialect://x", "results", "list")
    assert result.code == 1
    assert "cannot open the results store" in result.err
    assert "Traceback" not in result.err


def test_a_typed_grade_round_trips_through_the_store(tmp_path: Path) -> None:
    from replay.base.outcomes import Outcome
    from tests.grade.samples import grade

    g = grade(run_id="a")
    store = Store(f"sqlite:///{tmp_path}/r.db")
    store.add_run(run_row("a"))
    store.record_grade(
        GradeRow.from_grade(g, fail_to_pass_total=2, pass_to_pass_total=1), outcome=g.outcome
    )
    store.close()
    reopened = Store(f"sqlite:///{tmp_path}/r.db")
    (a,) = reopened.runs()
    reopened.close()
    assert a.outcome == Outcome.MODEL_FAIL and type(a.outcome) is str
    assert a.grade is not None and a.grade.to_grade() == g
    assert (a.grade.fail_to_pass_passed, a.grade.pass_to_pass_passed) == (0, 1)


def test_runs_are_listed_with_why_and_shown_by_short_id(capsys, tmp_path: Path) -> None:
    """Issue 35: ``results list`` had no date, reason, cost, duration or directory and one
    filter, and its short ids were refused elsewhere. Now it has them (and ``--json``);
    ``results show`` and ``replay events`` take the short id; an unknown one is a usage error."""
    import json

    from replay.base.outcomes import Outcome
    from tests.cli_helpers import assert_one_line_error
    from tests.grade.samples import grade

    db = tmp_path / "cli.db"
    store = Store.open(str(db))
    store.add_run(run_row("aaaa1111bbbb", case="demo-x"))
    store.add_run(run_row("cccc2222dddd", case="demo-y"))
    g = grade(run_id="aaaa1111bbbb")
    store.record_grade(
        GradeRow.from_grade(g, fail_to_pass_total=2, pass_to_pass_total=1), outcome=g.outcome
    )
    store.close()
    listed = run_cli(capsys, "--db", str(db), "results", "list", "--json")
    rows = [json.loads(line) for line in listed.out.splitlines()]
    assert [r["run"] for r in rows] == ["aaaa1111", "cccc2222"]
    assert rows[0]["outcome"] == Outcome.MODEL_FAIL and rows[0]["reason"] == g.reason
    assert rows[0]["started"].startswith("2026-03-12T00:00:00")
    failed = run_cli(capsys, "--db", str(db), "results", "list", "--outcome", "model_fail")
    assert "aaaa1111" in failed.out and "cccc2222" not in failed.out
    assert g.reason[:20] in failed.out
    none = run_cli(capsys, "--db", str(db), "results", "list", "--since", "2026-04-01")
    assert none.out.strip() == "no runs match"
    shown = run_cli(capsys, "--db", str(db), "results", "show", "aaaa1111")
    assert shown.code == 0, shown.err
    assert shown.out.startswith("run aaaa1111bbbb  demo-x  reference / stub")
    assert f"model_fail: {g.reason}" in shown.out
    assert "FAIL_TO_PASS: 0/2 passed" in shown.out and "failed   a" in shown.out
    assert_one_line_error(
        run_cli(capsys, "--db", str(db), "results", "show", "ffff"), "ffff", "no run"
    )
    assert_one_line_error(
        run_cli(capsys, "--db", str(db), "events", "cccc2222"), "no directory recorded"
    )
