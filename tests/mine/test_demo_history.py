"""``replay case mine`` over the demo world's history, read from the fakes over HTTP: each kind
is found with its evidence, and each candidate becomes a calibrated case or is set aside with
the reason (issue 21)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from replay.base.case import load_case
from tests.cli_helpers import assert_one_line_error, run_cli
from tests.mine.conftest import Served

SINCE = "2026-03-21T00:00:00Z"
"""After the demo's own cases' fixes: the history added for the miners."""
REGISTRY = Path(__file__).resolve().parents[2] / "snapshots/sources/demo/registry/index.json"


@pytest.fixture(autouse=True)
def tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_mine00000000000000000000000000000000")
    monkeypatch.setenv("LINEAR_API_KEY", "lin_api_mine0123456789abcdef")
    monkeypatch.setenv("SLACK_TOKEN", "xoxb-1-mine")


def _args(served: Served, *extra: str) -> list[str]:
    return [
        "case", "mine", "acme/semverkit", "--clone", str(served.clone),
        "--github-api", served.github, "--github-git", served.github,
        "--linear-url", served.linear, "--linear-team", "ENG", "--slack-url", served.slack,
        "--until", "2026-05-01T00:00:00Z", *extra,
    ]  # fmt: skip


def test_mine_finds_each_kind_with_its_evidence(
    capsys: pytest.CaptureFixture[str], demo_history: Served
) -> None:
    result = run_cli(capsys, *_args(demo_history, "--since", SINCE, "--json"))
    assert result.code == 0, result.err
    found = {c["id"]: c for c in json.loads(result.out)}
    assert {c["kind"] for c in found.values()} == {
        "plain", "fix-that-broke", "loop", "rescue", "test-optimiser",
    }  # fmt: skip
    assert sorted(found) == [
        "broke-24", "loop-27", "plain-22", "rescue-31", "reverted-36", "weakened-33",
    ]  # fmt: skip
    reasons = {k: c["reason"] for k, c in found.items()}
    assert "PR #22 (bob" in reasons["plain-22"] and "closes #21" in reasons["plain-22"]
    assert "tests/test_ranges.py" in reasons["plain-22"]
    # The fix that broke: #24, then #26 (closing #25) rewrote its lines a day later.
    assert "PR #24" in reasons["broke-24"] and "PR #26 (closes #25)" in reasons["broke-24"]
    assert found["broke-24"]["later"] and found["broke-24"]["ticket"] == "#23"
    assert "reverted by" in reasons["reverted-36"] and "Revert" in reasons["reverted-36"]
    # The loop: the agent's #28 and #29 closed unmerged before #30 landed.
    assert found["loop-27"]["attempts"] == [28, 29]
    assert "acme-agent, the agent" in reasons["loop-27"] and "PR #30" in reasons["loop-27"]
    # The rescue: Dana's reply in #releases between the agent's two pushes.
    (hint,) = found["rescue-31"]["hints"]
    assert (hint["service"], hint["person"], hint["name"]) == ("slack", "U04QKADNA", "dana")
    assert hint["where"] == "#releases/1775119200.001500"
    assert "warnings as errors" in hint["text"]
    assert found["rescue-31"]["ticket"] == "ENG-17"
    # The test optimiser: the agent's #33 skipped a test, #35 put it back.
    assert "@pytest.mark.skip" in reasons["weakened-33"] and "PR #35" in reasons["weakened-33"]
    # The table says the same, one candidate a row.
    table = run_cli(capsys, *_args(demo_history, "--since", SINCE))
    assert table.code == 0 and "6 candidate(s)" in table.out


def test_mine_over_the_whole_history_finds_the_demo_cases_fixes(
    capsys: pytest.CaptureFixture[str], demo_history: Served
) -> None:
    result = run_cli(capsys, *_args(demo_history, "--json", "--kind", "plain"))
    assert result.code == 0, result.err
    plain = {c["id"]: c for c in json.loads(result.out)}
    # The fixes the demo cases were made from by hand are plain candidates too.
    assert {"plain-16", "plain-17", "plain-19"} <= set(plain)
    assert plain["plain-16"]["ticket"] == "ENG-12" and plain["plain-17"]["ticket"] == "#7"


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--kind", "sloppy"], "no kind 'sloppy'"),
        (["--since", "2026-03-21T00:00:00"], "needs a timezone"),
    ],
)
def test_mine_refuses_bad_options(
    capsys: pytest.CaptureFixture[str], demo_history: Served, extra: list[str], fragment: str
) -> None:
    assert_one_line_error(run_cli(capsys, *_args(demo_history, *extra)), fragment)


def test_build_turns_each_candidate_into_a_calibrated_case_or_sets_it_aside(
    capsys: pytest.CaptureFixture[str], demo_history: Served, tmp_path: Path
) -> None:
    out = tmp_path / "mined"
    result = run_cli(
        capsys,
        "--db", str(tmp_path / "results.db"),
        *_args(
            demo_history, "--since", SINCE, "--build", str(out),
            "--setup", "python -m pip install -e . pytest==8.3.5",
            "--registry-index", str(REGISTRY), "--calibration-runs", "1",
            # Strength is measured by default (as case create --from does, which
            # tests/casebuild/test_many.py shows); five cases' worth is left out here.
            "--no-strength",
        ),
    )  # fmt: skip
    assert result.code == 0, result.out + result.err
    mined = json.loads((out / "mined.json").read_text())
    built = {b["id"]: b for b in mined["built"]}
    assert all(b["strength"] is None for b in built.values())
    assert not list(out.glob("*/strength.json"))
    rejected = {r["id"]: r for r in mined["rejected"]}
    expected = ["broke-24", "loop-27", "plain-22", "rescue-31", "weakened-33"]
    assert sorted(built) == expected, mined["rejected"]
    # The reverted cache had no answer to grade against (and no test): set aside, with why.
    assert sorted(rejected) == ["reverted-36"]
    assert rejected["reverted-36"]["step"] == "kind"
    assert "took the change back" in rejected["reverted-36"]["rejected_because"]
    assert not (out / "reverted-36").exists()
    cases = {k: load_case(out / k / "case.yaml") for k in built}
    for case_id, case in cases.items():
        assert "mined" in case.tags, case_id
        # Each built case records when its fix landed (its age beside a model's cutoff).
        assert case.fixed_at == datetime.fromisoformat(built[case_id]["fixed_at"]), case_id
        assert case.fixed_at > case.at, case_id
    # The loop's case forbids a second pull request; the gold opens one.
    rules = {r.id: r for r in cases["loop-27"].side_effects}
    assert rules["one-pull-request"].at_most == 1
    # The rescue's case plays Dana's real reply when the agent asks in the thread.
    (human,) = cases["rescue-31"].humans
    assert (human.person, human.thread) == ("U04QKADNA", "#releases/1775119200.001500")
    assert "`dropped` list argument" in human.text
    assert cases["rescue-31"].ticket.ref == "ENG-17"
    rescue_tests = cases["rescue-31"].hidden_tests.fail_to_pass
    assert "tests/test_sort.py::test_sort_versions_reports_dropped_items" in rescue_tests
    # The fix that broke: the hidden tests hold the later fix's test of what broke.
    broke = cases["broke-24"].hidden_tests
    assert "tests/test_coerce.py::test_coerce_drops_other_suffixes" in broke.pass_to_pass
    assert "tests/test_coerce.py::test_coerce_keeps_prerelease" in broke.fail_to_pass
    # The test optimiser: the skipped test is back among the hidden tests, and must pass.
    weakened = cases["weakened-33"].hidden_tests
    assert "tests/test_ranges.py::test_satisfying_skips_non_versions" in weakened.fail_to_pass
    assert "tests/test_version.py::test_compare_with_other_type" in weakened.pass_to_pass
    assert yaml.safe_load((out / "weakened-33" / "case.yaml").read_text())["tags"][-1] == (
        "test-weakened"
    )
    assert "calibrated  plain-22" in result.out and "rejected    reverted-36 (kind)" in result.out


def test_mine_needs_a_github_token(
    capsys: pytest.CaptureFixture[str], demo_history: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_TOKEN")
    assert_one_line_error(run_cli(capsys, *_args(demo_history)), "set GITHUB_TOKEN")
