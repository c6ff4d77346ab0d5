"""``replay compare``'s engine from synthetic rows in a real store (no Docker): the verdict
under the decision rule, the A/A floor and MDE, unhealthy runs excluded alike, the side-effect
and cost gates, discordance, tags, and a rule that cannot change after the runs."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from replay.base.case import LoadedCase, case_digest, read_case
from replay.compare.candidate import Candidate, parse_candidate
from replay.compare.engine import CompareError, build_document, fix_comparison, plan_missing
from replay.compare.rule import DEFAULT_RULE, DecisionRule, load_rule
from replay.results import RunRow, Store
from replay.results.models import CalibrationRow, GradeRow
from replay.results.stats import wilson
from tests.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
DEMO = sorted((ROOT / "cases").glob("demo-*/case.yaml"))
T0 = datetime(2026, 12, 1, 10, tzinfo=UTC)
_ids = itertools.count()

CHEAT = Candidate(name="cheat", stub="cheat")
GOLD = Candidate(name="gold", stub="gold")
GOLD2 = Candidate(name="gold-again", stub="gold")


@pytest.fixture
def cases() -> list[LoadedCase]:
    return [read_case(p) for p in DEMO]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path}/r.db")


def calibrate(store: Store, case: LoadedCase, ok: bool = True) -> None:
    store.record_calibration(
        CalibrationRow(
            case_id=case.id,
            case_digest=case_digest(case),
            calibrated=ok,
            runs=1,
            gold_passes=1,
            idle_fails=1 if ok else 0,
            at=T0,
        )
    )


def runs(
    store: Store,
    case: LoadedCase,
    cand: Candidate,
    outcomes: str,
    *,
    effects_ok: bool = True,
    cost: float | None = None,
    at: datetime | None = None,
) -> None:
    """One run per letter: p pass, m model_fail, t transport_fail, i infra_fail."""
    at = at or datetime.now(UTC) + timedelta(minutes=1)
    names = {"p": "pass", "m": "model_fail", "t": "transport_fail", "i": "infra_fail"}
    for attempt, letter in enumerate(outcomes, 1):
        run_id = f"run-{next(_ids)}"
        store.add_run(
            RunRow(
                id=run_id,
                case_id=case.id,
                case_digest=case_digest(case),
                harness=cand.harness,
                candidate=cand.key,
                model=cand.model_label,
                attempt=attempt,
                started_at=at + timedelta(seconds=attempt),
                input_tokens=100,
                output_tokens=20,
                cost_usd=cost,
            )
        )
        outcome = names[letter]
        store.record_grade(
            GradeRow(
                run_id=run_id,
                tests_resolved=letter == "p",
                fail_to_pass_passed=0,
                fail_to_pass_total=1,
                pass_to_pass_passed=0,
                pass_to_pass_total=0,
                side_effects_ok=effects_ok,
                detail={"reason": f"synthetic {outcome}"},
            ),
            outcome,  # type: ignore[arg-type]
        )


def judge(
    store: Store,
    cases: list[LoadedCase],
    a: Candidate,
    b: Candidate,
    rule_text: str = DEFAULT_RULE,
    name: str = "cmp",
) -> dict:  # type: ignore[type-arg]
    row = fix_comparison(store, name, a, b, rule_text)
    rule = DecisionRule.model_validate(__import__("yaml").safe_load(rule_text))
    return build_document(store, cases, {"A": a, "B": b}, rule, row)


def test_gold_against_cheat_ships_b_with_an_interval_clear_of_zero(
    store: Store, cases: list[LoadedCase]
) -> None:
    for case in cases:
        calibrate(store, case)
    fix_comparison(store, "cmp", CHEAT, GOLD, DEFAULT_RULE)
    for case in cases:
        runs(store, case, CHEAT, "mmm")
        runs(store, case, GOLD, "ppp")
    doc = judge(store, cases, CHEAT, GOLD)
    diff = doc["difference"]
    assert diff["estimate"] == 1.0
    # Hand-worked (tests/results/test_compare_stats.py): SE 0.1559, t(.975, 2) = 4.3027.
    assert diff["interval"] == pytest.approx([0.3292, 1.0], abs=1e-4)
    assert diff["p_value"] == pytest.approx(0.02346, abs=1e-4)
    assert doc["verdict"]["decision"] == "ship"
    assert {g["name"]: g["status"] for g in doc["gates"]} == {
        "quality": "pass",
        "side_effects": "pass",
        "cost": "not_set",
    }
    assert {row["class"] for row in doc["cases"]} == {"only_b"}
    # Every case scores 1: the t interval over cases is a point, which three cases cannot show;
    # the Wilson interval of three trials is the floor (issue 35: "0.00 (0.00-0.00)").
    assert doc["arms"]["B"]["pass_at"][2] == {
        "k": 3,
        "value": 1.0,
        "interval": [pytest.approx(wilson(3, 3)[0], abs=1e-4), 1.0],
    }
    # Nine runs that all fail (A, cheat) or all pass (B): the pass rate's interval is never
    # narrower than the Wilson interval of the nine runs, as `replay run` shows for them.
    assert doc["arms"]["A"]["mean"]["interval"] == [0.0, pytest.approx(wilson(0, 9)[1], abs=1e-4)]
    assert doc["arms"]["B"]["mean"]["interval"] == [pytest.approx(wilson(9, 9)[0], abs=1e-4), 1.0]
    assert [e["k"] for e in doc["arms"]["A"]["pass_hat"]] == [1, 2, 3]
    assert doc["rule"]["runs_before_rule"] == 0
    json.dumps(doc)  # the document is plain JSON


def test_gold_against_itself_is_inconclusive_with_the_mde_and_cases_needed(
    store: Store, cases: list[LoadedCase]
) -> None:
    for case in cases:
        calibrate(store, case)
        runs(store, case, GOLD, "ppp")
        runs(store, case, GOLD2, "ppp")
    doc = judge(store, cases, GOLD, GOLD2)
    assert doc["difference"]["estimate"] == 0.0
    assert doc["verdict"]["decision"] == "inconclusive"
    floor = doc["aa_floor"]
    assert floor["estimate"] == 0.0 and floor["interval"][0] < 0 < floor["interval"][1]
    assert floor["mde"] == pytest.approx(0.8362, abs=1e-3)
    # Cases like these for the rule's effect of interest (0.10): the t quantiles shrink too.
    assert doc["verdict"]["cases_needed"] == 60
    assert any(
        "minimum detectable effect with 3 cases is 0.84" in r for r in doc["verdict"]["reasons"]
    )


def test_unhealthy_runs_are_excluded_alike_and_listed(
    store: Store, cases: list[LoadedCase]
) -> None:
    for case in cases:
        calibrate(store, case)
    one, two, three = cases
    runs(store, one, CHEAT, "mtmm")
    runs(store, one, GOLD, "ppp")
    runs(store, two, CHEAT, "mmm")
    runs(store, two, GOLD, "ppp")
    # No healthy run of arm B on the third case: it is left out of both arms.
    runs(store, three, CHEAT, "mmm")
    runs(store, three, GOLD, "ti")
    doc = judge(store, cases, CHEAT, GOLD)
    assert [r["case_id"] for r in doc["cases"]] == [one.id, two.id]
    assert [item["case_id"] for item in doc["left_out"]] == [three.id]
    assert "in arm B" in doc["left_out"][0]["why"]
    a, b = doc["arms"]["A"], doc["arms"]["B"]
    assert a["outcomes"]["transport_fail"] == 1 and a["healthy_runs"] == 6
    assert [r["outcome"] for r in a["unhealthy"]] == ["transport_fail"]
    assert b["outcomes"] == {
        "pass": 6,
        "model_fail": 0,
        "transport_fail": 1,
        "protocol_fail": 0,
        "infra_fail": 1,
    }
    assert sorted(r["outcome"] for r in b["unhealthy"]) == ["infra_fail", "transport_fail"]


def test_a_case_edited_after_calibration_is_left_out_as_uncalibrated(
    store: Store, cases: list[LoadedCase]
) -> None:
    # The first case was calibrated at another version (digest) than its files have now;
    # the second never was.
    edited = cases[0]
    store.record_calibration(
        CalibrationRow(
            case_id=edited.id,
            case_digest="0" * 64,
            calibrated=True,
            runs=1,
            gold_passes=1,
            idle_fails=1,
            at=T0,
        )
    )
    doc = judge(store, cases, CHEAT, GOLD)
    why = {item["case_id"]: item["why"] for item in doc["left_out"]}
    assert why[edited.id].startswith("this case version is not calibrated")
    assert why[cases[1].id] == "never calibrated"
    assert plan_missing(store, cases, {"A": CHEAT, "B": GOLD}, 3) == []


def test_a_forbidden_side_effect_blocks_b_whatever_its_pass_rate(
    store: Store, cases: list[LoadedCase]
) -> None:
    for case in cases:
        calibrate(store, case)
        runs(store, case, CHEAT, "mmm")
        runs(store, case, GOLD, "mmm", effects_ok=False)
    doc = judge(store, cases, CHEAT, GOLD)
    gates = {g["name"]: g for g in doc["gates"]}
    assert gates["side_effects"]["status"] == "fail"
    assert doc["arms"]["B"]["side_effect_violation_rate"] == 1.0
    assert doc["verdict"]["decision"] == "dont_ship"
    assert doc["verdict"]["reasons"][0].startswith("side_effects:")


def test_the_cost_gate_reads_cost_per_solved_case(store: Store, cases: list[LoadedCase]) -> None:
    for case in cases:
        calibrate(store, case)
        runs(store, case, CHEAT, "mmm", cost=0.01)
        runs(store, case, GOLD, "ppm", cost=0.30)
    rule = DEFAULT_RULE.replace("cost_ceiling_usd: null", "cost_ceiling_usd: 0.25")
    doc = judge(store, cases, CHEAT, GOLD, rule)
    # B: 9 runs at $0.30, 6 passes: $0.45 per solved case, over the $0.25 ceiling.
    assert doc["arms"]["B"]["cost_per_solved_usd"] == pytest.approx(0.45)
    assert {g["name"]: g["status"] for g in doc["gates"]}["cost"] == "fail"
    assert doc["verdict"]["decision"] == "dont_ship"


def test_pass_hat_k_metric_and_tags(store: Store, cases: list[LoadedCase]) -> None:
    for case in cases:
        calibrate(store, case)
        runs(store, case, CHEAT, "pmp")
        runs(store, case, GOLD, "ppp")
    rule = DEFAULT_RULE.replace("metric: pass@1", "metric: pass^k\nk: 3")
    doc = judge(store, cases, CHEAT, GOLD, rule)
    assert doc["difference"]["metric"] == "pass^3"
    assert doc["difference"]["estimate"] == 1.0  # pass^3 of 2/3 is 0
    assert {row["class"] for row in doc["cases"]} == {"flaky"}
    tags = {entry["tag"]: entry for entry in doc["by_tag"]}
    assert tags["python"]["cases"] == 3
    assert tags["github"]["cases"] == 1 and tags["github"]["difference"]["interval"] is None


def test_the_rule_and_the_arms_are_fixed_before_the_runs(
    store: Store, cases: list[LoadedCase]
) -> None:
    fix_comparison(store, "cmp", CHEAT, GOLD, DEFAULT_RULE)
    with pytest.raises(CompareError, match="another decision rule"):
        fix_comparison(store, "cmp", CHEAT, GOLD, DEFAULT_RULE.replace("0.0", "0.1", 1))
    with pytest.raises(CompareError, match="was fixed with arms"):
        fix_comparison(store, "cmp", GOLD, CHEAT, DEFAULT_RULE)
    with pytest.raises(CompareError, match="the same candidate"):
        fix_comparison(store, "other", GOLD, GOLD, DEFAULT_RULE)
    # Runs made before the rule was fixed are counted and shown.
    for case in cases:
        calibrate(store, case)
        runs(store, case, CHEAT, "mm", at=T0 - timedelta(days=1))
        runs(store, case, GOLD, "pp")
    assert judge(store, cases, CHEAT, GOLD)["rule"]["runs_before_rule"] == 6


def test_plan_runs_only_what_is_missing(store: Store, cases: list[LoadedCase]) -> None:
    for case in cases:
        calibrate(store, case)
    one = cases[0]
    runs(store, one, CHEAT, "mtm")  # two healthy of three: one more, as attempt 4
    plan = plan_missing(store, [one], {"A": CHEAT, "B": GOLD}, 3)
    assert [(p.arm, p.runs, p.first_attempt) for p in plan] == [("A", 1, 4), ("B", 3, 1)]


def test_candidates_inline_and_from_files(tmp_path: Path) -> None:
    inline = parse_candidate("name=gold,stub=gold,seed=3")
    assert (inline.harness, inline.stub, inline.seed) == ("reference", "gold", 3)
    path = tmp_path / "b.yaml"
    path.write_text("name: gold\nstub: gold\nseed: 3\n")
    assert parse_candidate(str(path)).key == inline.key
    # Same settings, another name: another arm (an A/A comparison); another setting: new key.
    assert parse_candidate("name=gold2,stub=gold,seed=3").key != inline.key
    assert parse_candidate("name=gold,stub=gold,seed=4").key != inline.key
    for bad in ("stub=gold", "name=x,colour=red", "name=x,seed=three"):
        with pytest.raises(Exception, match="candidate"):
            parse_candidate(bad)


def test_bad_rules_are_input_errors(tmp_path: Path) -> None:
    rule = tmp_path / "rule.yaml"
    rule.write_text("schema: 1\nmetric: pass@1\nk: 3\n")
    with pytest.raises(Exception, match="k is for metric pass"):
        load_rule(rule)
    rule.write_text("schema: 1\nconfidence: 1.5\n")
    with pytest.raises(Exception, match="confidence"):
        load_rule(rule)


def test_cli_reports_without_running_and_checks_the_verdict(
    tmp_path: Path, store: Store, cases: list[LoadedCase], capsys: pytest.CaptureFixture[str]
) -> None:
    for case in cases:
        calibrate(store, case)
    fix_comparison(store, "cheat-vs-gold", CHEAT, GOLD, DEFAULT_RULE)
    for case in cases:
        runs(store, case, CHEAT, "mmm")
        runs(store, case, GOLD, "ppp")
    db = store.url
    store.close()
    arms = ["--a", "name=cheat,stub=cheat", "--b", "name=gold,stub=gold"]
    args = [
        "--db",
        db,
        "compare",
        *map(str, DEMO),
        *arms,
        "--no-run",
        "--json",
        str(tmp_path / "c.json"),
    ]
    result = run_cli(capsys, *args)
    assert result.code == 0, result.out
    assert "verdict: ship B" in result.out
    assert result.out.startswith("verdict: ship B")  # the verdict first (issue 35)
    assert "B - A (pass@1): +1.00, 95% CI +0.33..+1.00" in result.out
    assert "minimum detectable effect 0.84 over 3 cases" in result.out
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["schema"] == "replay.compare/1" and doc["verdict"]["decision"] == "ship"
    failed = run_cli(capsys, *args, "--expect", "inconclusive")
    assert failed.code == 1 and "the verdict is ship, not inconclusive" in failed.out
    changed = tmp_path / "rule.yaml"
    changed.write_text(DEFAULT_RULE.replace("margin: 0.0", "margin: 0.2"))
    refused = run_cli(capsys, *args, "--rule", str(changed))
    assert refused.code == 1 and "another decision rule" in refused.err


def test_every_key_the_engine_writes_is_documented(store: Store, cases: list[LoadedCase]) -> None:
    import re

    from tests.compare.test_docs import DOC, keys

    for case in cases:
        calibrate(store, case)
    runs(store, cases[0], CHEAT, "mtmm", cost=0.01)
    runs(store, cases[0], GOLD, "ppp", cost=0.02)
    runs(store, cases[1], CHEAT, "pmp", cost=0.01)
    runs(store, cases[1], GOLD, "ppp", cost=0.02)
    doc = judge(store, cases, CHEAT, GOLD)
    fields = DOC.read_text().split("## Fields", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^- `([^`]+)`: \S", fields, re.MULTILINE))
    assert set(keys(doc, "", "")) - documented == set()


def test_cases_are_split_by_each_arm_s_training_cutoff_never_pooled(
    tmp_path: Path, store: Store, cases: list[LoadedCase], capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo fixes landed on 2026-03-12 (prerelease order), 03-13 (caret) and 03-17 (build
    metadata). B states a cutoff of 2026-03-13: the prerelease fix may be in its training
    data, the other two cannot; A states none."""
    a = parse_candidate("name=cheat,stub=cheat")
    b = parse_candidate("name=gold,stub=gold,training_cutoff=2026-03-13")
    assert b.training_cutoff == datetime(2026, 3, 13, tzinfo=UTC)
    for case in cases:
        calibrate(store, case)
        runs(store, case, a, "mmm")
        runs(store, case, b, "ppm" if case.id == "demo-prerelease-order" else "ppp")
    doc = judge(store, cases, a, b)
    sides = {row["case_id"]: row["contamination"] for row in doc["cases"]}
    assert sides == {
        "demo-build-metadata-sort": {"A": None, "B": "after-cutoff"},
        "demo-caret-zero": {"A": None, "B": "after-cutoff"},
        "demo-prerelease-order": {"A": None, "B": "before-cutoff"},
    }
    assert doc["arms"]["B"]["training_cutoff"] == "2026-03-13T00:00:00+00:00"
    assert doc["arms"]["A"]["training_cutoff"] is None
    groups = [(g["contamination"]["B"], g["cases"], g["B"]["rate"]) for g in doc["by_cutoff"]]
    assert groups == [("after-cutoff", 2, 1.0), ("before-cutoff", 1, pytest.approx(2 / 3))]
    assert doc["by_cutoff"][1]["difference"]["interval"] is None  # one case
    # Every key of a document with cutoffs is documented too.
    from tests.compare.test_docs import DOC, keys

    fields = DOC.read_text().split("## Fields", 1)[1].split("\n## ", 1)[0]
    import re

    documented = set(re.findall(r"^- `([^`]+)`: \S", fields, re.MULTILINE))
    assert {k for k in keys(doc, "", "") if k.startswith(("by_cutoff", "CaseRow.cont"))} <= (
        documented
    )
    # The HTML report and the terminal report show the split.
    from replay.compare.html import render_html

    html = render_html(doc)
    section = html.partition("<section id='by-cutoff'>")[2].partition("</section>")[0]
    assert "<td>none stated</td><td>before-cutoff</td><td class='num'>1</td>" in section
    fix_comparison(store, "cut", a, b, DEFAULT_RULE)
    db = store.url
    store.close()
    result = run_cli(
        capsys, "--db", db, "compare", *map(str, DEMO), "--a", "name=cheat,stub=cheat",
        "--b", "name=gold,stub=gold,training_cutoff=2026-03-13", "--name", "cut", "--no-run",
    )  # fmt: skip
    assert result.code == 0, result.out + result.err
    assert "by training cutoff (after-cutoff: fixed after the model's stated cutoff" in result.out
    assert re.search(r"none stated\s+after-cutoff\s+2\s+0\.00\s+1\.00", result.out), result.out
    assert re.search(r"none stated\s+before-cutoff\s+1\s+0\.00\s+0\.67", result.out), result.out
    # A cutoff that is no date is the candidate's error.
    with pytest.raises(Exception, match="training_cutoff"):
        parse_candidate("name=x,stub=gold,training_cutoff=last spring")
