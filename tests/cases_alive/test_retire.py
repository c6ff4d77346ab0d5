"""``replay case retire``: recorded beside the cases (the case file and its digest untouched),
skipped by run, compare and batch with the reason unless asked, listed by the report as left
out. No Docker: every command here stops before a world would start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from replay.base.case import case_digest, read_case
from replay.batch.plan import load_plan
from replay.cases.retired import REGISTRY, active_cases, retirement_of
from tests.cases_alive.helpers import copy_case
from tests.cli_helpers import assert_one_line_error, run_cli


def test_retire_records_the_reason_beside_the_cases_and_leaves_the_digest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case_file = copy_case(tmp_path / "cases")
    other = copy_case(tmp_path / "cases", "demo-prerelease-order")
    before = case_file.read_bytes(), case_digest(read_case(case_file))
    result = run_cli(capsys, "case", "retire", str(case_file), "--reason", "the public fix leaked")
    assert result.code == 0, result.out + result.err
    registry = tmp_path / "cases" / REGISTRY
    assert f"retired demo-caret-zero: the public fix leaked (recorded in {registry})" in result.out
    data = yaml.safe_load(registry.read_text())
    assert data["schema"] == 1
    assert data["cases"]["demo-caret-zero"]["reason"] == "the public fix leaked"
    assert (case_file.read_bytes(), case_digest(read_case(case_file))) == before
    found = retirement_of(read_case(case_file))
    assert found is not None and found.reason == "the public fix leaked"
    assert retirement_of(read_case(other)) is None
    lines: list[str] = []
    kept = active_cases(
        [read_case(case_file), read_case(other)], include_retired=False, notice=lines.append
    )
    assert [c.id for c in kept] == ["demo-prerelease-order"]
    assert lines == [
        f"skipping demo-caret-zero: retired {found.at:%Y-%m-%d}: the public fix leaked "
        "(--include-retired runs it)"
    ]
    assert len(active_cases([read_case(case_file)], include_retired=True, notice=print)) == 1


def test_retire_needs_a_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case_file = copy_case(tmp_path / "cases")
    result = run_cli(capsys, "case", "retire", str(case_file), "--reason", "  ")
    assert_one_line_error(result, "--reason", "say why the case is retired")
    assert not (tmp_path / "cases" / REGISTRY).exists()


def test_run_and_compare_skip_a_retired_case_and_say_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case_file = copy_case(tmp_path / "cases")
    run_cli(capsys, "case", "retire", str(case_file), "--reason", "buster is gone")
    db = str(tmp_path / "r.db")
    ran = run_cli(capsys, "--db", db, "run", str(case_file), "--stub", "gold")
    assert ran.code == 0, ran.out + ran.err
    assert "skipping demo-caret-zero: retired" in ran.out and "buster is gone" in ran.out
    assert "run 1:" not in ran.out
    report = tmp_path / "compare.json"
    compared = run_cli(
        capsys, "--db", db, "compare", str(case_file), "--a", "name=a,stub=cheat",
        "--b", "name=b,stub=gold", "--no-run", "--json", str(report),
    )  # fmt: skip
    assert compared.code == 0, compared.out + compared.err
    assert "skipping demo-caret-zero: retired" in compared.out
    # Not compared at all, and every report says why: left out of both arms, as retired.
    doc = json.loads(report.read_text())
    assert doc["cases"] == []
    (left,) = doc["left_out"]
    assert left["case_id"] == "demo-caret-zero"
    assert left["why"].startswith("retired ") and left["why"].endswith(": buster is gone")


def test_a_batch_plan_leaves_retired_cases_out_unless_it_includes_them(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    kept = copy_case(cases, "demo-prerelease-order")
    retired = copy_case(cases)
    from replay.cases.retired import retire

    retire(retired, "no longer faithful")
    plan = {
        "schema": 1,
        "name": "nightly",
        "cases": ["cases/*/case.yaml"],
        "candidates": [{"name": "gold", "stub": "gold"}],
        "runs": 2,
    }
    (tmp_path / "plan.yaml").write_text(yaml.safe_dump(plan))
    loaded = load_plan(tmp_path / "plan.yaml")
    assert {r.case.id for r in loaded.runs} == {read_case(kept).id}
    assert len(loaded.runs) == 2
    assert len(loaded.skipped) == 1 and "no longer faithful" in loaded.skipped[0]
    (tmp_path / "plan.yaml").write_text(yaml.safe_dump({**plan, "include_retired": True}))
    everything = load_plan(tmp_path / "plan.yaml")
    assert len(everything.runs) == 4 and everything.skipped == []
