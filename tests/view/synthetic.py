"""A results store filled by hand (no Docker): one run with a full directory whose files hold
hostile text, one run with no directory and a grade that is not one, and two comparisons of
synthetic runs on the demo cases (two paired cases, and one)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from replay.base.case import LoadedCase, case_digest, read_case
from replay.base.outcomes import Outcome
from replay.compare.candidate import Candidate
from replay.compare.engine import fix_comparison
from replay.compare.rule import DEFAULT_RULE
from replay.gateway.modelcalls import ModelCall, TokenUsage, verdict_for
from replay.grade.model import SideEffectsGrade
from replay.grade.sideeffects import RuleResult
from replay.results import RunRow, Store
from replay.results.models import CalibrationRow, GradeRow
from tests.event_helpers import event
from tests.grade.samples import grade, hidden_tests_grade

ROOT = Path(__file__).resolve().parents[2]
CARET = ROOT / "cases" / "demo-caret-zero" / "case.yaml"
PRERELEASE = ROOT / "cases" / "demo-prerelease-order" / "case.yaml"
T0 = datetime(2026, 12, 1, 10, tzinfo=UTC)

FULL = "0123456789abcdef0123456789abcdef"
"""The run with a directory."""
BARE = "fedcba9876543210fedcba9876543210"
"""The run without one, of another case."""
HOSTILE = "<script>alert('x')</script>"
SKIP_LINE = 'pytestmark = pytest.mark.skip(reason="flaky on CI")'
F2P = {"tests/test_a.py::test_one": "failed", "tests/test_a.py::TestK::test_two": "error"}
CHEAT = Candidate(name="cheat", stub="cheat")
GOLD = Candidate(name="gold", stub="gold")
IDLE = Candidate(name="idle", stub="idle")
GOLD2 = Candidate(name="gold2", stub="gold")


@dataclass(frozen=True)
class Filled:
    db: Path
    runs: Path
    cases: list[LoadedCase]
    comparison_runs: dict[str, list[str]]
    """Run ids of each comparison's discordant case(s)."""


def _call(t: float, error: str | None = None) -> ModelCall:
    return ModelCall(
        request_id=f"req-{t}",
        request_id_from_provider=True,
        method="POST",
        host="api.openai.com",
        path="/v1/chat/completions",
        provider="openai_chat",
        model="gpt-4.1",
        streamed=False,
        retry_count=1 if error else 0,
        logical_key=f"k{t}",
        t_request_end=1_000_000 + t,
        status=503 if error else 200,
        ttfb_ms=12.0,
        total_ms=250.0,
        request_bytes=100,
        response_bytes=200,
        error_class="http_5xx" if error else None,  # type: ignore[arg-type]
        error_detail=error,
        usage=None if error else TokenUsage(input_tokens=int(100 + t), output_tokens=7),
        stop_reason=None if error else "stop",
        verdict=verdict_for("http_5xx" if error else None),
    )


CALLS = [_call(0), _call(1, f"upstream {HOSTILE} overloaded"), _call(2)]

TRANSCRIPT = [
    {"index": 0, "role": "user", "text": "Fix the bug.\nIt is in ranges.py.", "tool_calls": []},
    {
        "index": 1,
        "role": "assistant",
        "text": "Looking.",
        "tool_calls": [{"name": "bash", "arguments": {"command": f"cat <<EOF\n{HOSTILE}\nEOF"}}],
    },
    {"index": 2, "role": "tool", "text": "line one\nline two\n(exit status 0)", "tool_calls": []},
]

DIFF = f"""diff --git a/tests/test_a.py b/tests/test_a.py
--- a/tests/test_a.py
+++ b/tests/test_a.py
@@ -1,2 +1,4 @@
 import pytest
+{SKIP_LINE}
+# {HOSTILE}
 def test_one():
"""

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.test_a" name="test_one"><failure message="m">E   assert 1 == 2
E   &lt;b&gt;not bold&lt;/b&gt;</failure></testcase>
<testcase classname="tests.test_a.TestK" name="test_two"><error message="m">boom in setup</error>
</testcase><testcase classname="tests.test_b" name="test_three"/></testsuite></testsuites>"""


def _full_run(store: Store, runs: Path, case: LoadedCase) -> None:
    run_dir = runs / FULL
    (run_dir / "tests").mkdir(parents=True)
    events = [
        event(1, "model", "model.call", **CALLS[0].model_dump(mode="json")),
        event(2, "git", "git.push", obj=("ref", "acme/x:refs/heads/main"), note=HOSTILE),
        event(3, "github", "github.pull_request.opened", obj=("pull_request", "acme/x#3")),
    ]
    (run_dir / "events.jsonl").write_text(
        "".join(e.model_dump_json(by_alias=True) + "\n" for e in events)
    )
    (run_dir / "model_calls.jsonl").write_text("".join(c.model_dump_json() + "\n" for c in CALLS))
    (run_dir / "transcript.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TRANSCRIPT))
    (run_dir / "diff.patch").write_text(DIFF)
    (run_dir / "tests" / "junit-1.xml").write_text(JUNIT)
    (run_dir / "tests" / "output-1.txt").write_text(f"1 failed, 1 error\n{HOSTILE}\n")
    rules = [
        RuleResult(
            rule="no-push-to-main", description="never push to main", count=1, at_least=None,
            at_most=0, ok=False, forbidden=True, matched=[2],
        ),
        RuleResult(
            rule="pr-opened", description="a pull request is opened", count=1, at_least=1,
            at_most=None, ok=True, forbidden=False, matched=[3],
        ),
    ]  # fmt: skip
    graded = grade(
        run_id=FULL,
        case_id=case.id,
        reason=f"hidden tests not resolved {HOSTILE}",
        tests=hidden_tests_grade(
            fail_to_pass=F2P, pass_to_pass={"tests/test_b.py::test_three": "passed"}
        ),
        side_effects=SideEffectsGrade(
            ok=False, violated=["no-push-to-main"], rules=rules, mutations=2
        ),
    )
    store.add_run(
        RunRow(
            id=FULL, case_id=case.id, case_digest=case_digest(case), harness="reference",
            model="stub:cheat", started_at=T0, finished_at=T0 + timedelta(seconds=42),
            status="finished", run_dir=str(run_dir), wall_time_s=42.0, input_tokens=303,
            output_tokens=14, cost_usd=0.0123, model_calls=2,
        )
    )  # fmt: skip
    row = GradeRow.from_grade(graded, fail_to_pass_total=2, pass_to_pass_total=1)
    store.record_grade(row, Outcome.MODEL_FAIL)


def _synthetic_runs(
    store: Store, case: LoadedCase, cand: Candidate, outcome: Outcome, n: int
) -> list[str]:
    ids = []
    for attempt in range(1, n + 1):
        run_id = f"{cand.name}-{case.id}-{attempt}"
        store.add_run(
            RunRow(
                id=run_id, case_id=case.id, case_digest=case_digest(case), harness="reference",
                candidate=cand.key, model=cand.model_label, attempt=attempt,
                started_at=T0 + timedelta(minutes=attempt), status="finished",
            )
        )  # fmt: skip
        store.record_grade(
            GradeRow(
                run_id=run_id, tests_resolved=outcome == Outcome.PASS, fail_to_pass_passed=0,
                fail_to_pass_total=1, pass_to_pass_passed=0, pass_to_pass_total=0,
                side_effects_ok=True, detail={"reason": f"synthetic {outcome.value}"},
            ),
            outcome,
        )  # fmt: skip
        ids.append(run_id)
    return ids


def fill(root: Path) -> Filled:
    """The store at ``root/results.db``, its run directories under ``root/runs``."""
    db, runs = root / "results.db", root / "runs"
    cases = [read_case(CARET), read_case(PRERELEASE)]
    store = Store.open(str(db))
    try:
        _full_run(store, runs, cases[0])
        store.add_run(
            RunRow(
                id=BARE, case_id="another-case", harness="reference", model="gpt-4.1",
                started_at=T0 - timedelta(days=1), status="finished",
            )
        )  # fmt: skip
        store.record_grade(
            GradeRow(
                run_id=BARE, tests_resolved=False, fail_to_pass_passed=0, fail_to_pass_total=0,
                pass_to_pass_passed=0, pass_to_pass_total=0, side_effects_ok=True,
                detail={"reason": "the sandbox broke"},
            ),
            Outcome.INFRA_FAIL,
        )  # fmt: skip
        for case in cases:
            store.record_calibration(
                CalibrationRow(
                    case_id=case.id, case_digest=case_digest(case), calibrated=True, runs=1,
                    gold_passes=1, idle_fails=1, at=T0,
                )
            )  # fmt: skip
        fix_comparison(store, "cheat-vs-gold", CHEAT, GOLD, DEFAULT_RULE)
        fix_comparison(store, "idle-vs-gold", IDLE, GOLD2, DEFAULT_RULE)
        discordant: dict[str, list[str]] = {"cheat-vs-gold": [], "idle-vs-gold": []}
        for case in cases:
            discordant["cheat-vs-gold"] += _synthetic_runs(
                store, case, CHEAT, Outcome.MODEL_FAIL, 2
            )
            discordant["cheat-vs-gold"] += _synthetic_runs(store, case, GOLD, Outcome.PASS, 2)
        discordant["idle-vs-gold"] += _synthetic_runs(store, cases[0], IDLE, Outcome.MODEL_FAIL, 1)
        discordant["idle-vs-gold"] += _synthetic_runs(store, cases[0], GOLD2, Outcome.PASS, 1)
    finally:
        store.close()
    return Filled(db, runs, cases, discordant)
