"""The grader end to end without Docker: the hidden tests' run is replaced by its result, the
rest (the wire, side effects, outcome, the files beside the grade, the store's row) is real."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import replay.grade.grader as grader
from replay.base.case import Case, load_case
from replay.base.events import Event
from replay.base.outcomes import Outcome
from replay.gateway.modelcalls import ModelCall, TokenUsage, verdict_for
from replay.grade import Grade, RunToGrade, grade_run, load_grade
from replay.grade.hidden_tests import Grading, GradingError
from replay.grade.junit import TestStatus
from replay.grade.junit import TestVerdict as Verdict
from replay.grade.model import Restored
from replay.harness.spec import ExitCodes
from replay.run.prices import load_prices
from replay.runtime.base import Runtime
from tests.event_helpers import event

ROOT = Path(__file__).resolve().parents[2]
CARET = ROOT / "cases" / "demo-caret-zero" / "case.yaml"


def call(
    t: float, error_class: Any = None, status: int | None = 200, tokens: int = 10
) -> ModelCall:
    return ModelCall(
        request_id=f"req-{t}",
        request_id_from_provider=True,
        method="POST",
        host="api.openai.com",
        path="/v1/chat/completions",
        provider="openai_chat",
        model="gpt-4.1",
        streamed=False,
        retry_count=0,
        logical_key=f"k{t}",
        t_request_end=t,
        status=status,
        ttfb_ms=5.0,
        total_ms=250.0,
        request_bytes=100,
        response_bytes=200,
        error_class=error_class,
        error_detail=None if error_class is None else "refused",
        usage=TokenUsage(input_tokens=tokens, output_tokens=tokens) if status == 200 else None,
        stop_reason="stop" if error_class is None else None,
        verdict=verdict_for(error_class),
    )


def pr(seq: int = 2) -> Event:
    return event(seq, "github", "github.pull_request.opened", body="Fixes #7", number=17)


def model_call(seq: int, c: ModelCall) -> Event:
    return event(seq, "model", "model.call", **c.model_dump(mode="json"))


def passing(case: Case, f2p: TestStatus = "passed") -> Grading:
    """Hidden tests that pass (or whose FAIL_TO_PASS tests end as ``f2p``)."""
    hidden = case.hidden_tests
    verdict = Verdict(
        fail_to_pass=dict.fromkeys(hidden.fail_to_pass, f2p),
        pass_to_pass=dict.fromkeys(hidden.pass_to_pass, "passed"),
        exit_codes=[0],
        flaky=[],
        spoofed=False,
    )
    restored = [Restored(path="conftest.py", action="removed", reason="pytest conftest")]
    return Grading(verdict, "apply", ["ok"], [b"<testsuite />"], restored)


@pytest.fixture
def run(tmp_path: Path) -> RunToGrade:
    case = load_case(CARET)
    return RunToGrade(
        case=case,
        run_id="r1",
        run_dir=tmp_path,
        attempt=1,
        harness="reference",
        model="gpt-4.1",
        image="sha256:env",
        harness_image=None,
        events=[model_call(1, call(1.0)), pr()],
        diff="diff --git a/x b/x\n",
        infra_errors=[],
        harness_exit=0,
        stopped_by=None,
        harness_seconds=3.14159,
        started=0.0,
    )


@pytest.fixture
def hidden(monkeypatch: pytest.MonkeyPatch) -> list[Grading | Exception]:
    """What the hidden tests give (one per grading); empty: they must not run."""
    given: list[Grading | Exception] = []

    class Box:
        """The grading container, as grade_run drives it: prepared, graded, closed."""

        def __init__(self, runtime: Runtime, image: str, case: Case, run_id: str) -> None:
            assert (image, run_id) == ("sha256:env", "r1-grade")

        def prepare(self) -> Box:
            return self

        def grade(self, diff: str) -> Grading:
            found = given.pop(0)
            if isinstance(found, Exception):
                raise found
            return found

        def close(self) -> None:
            pass

    monkeypatch.setattr(grader, "GradingBox", Box)
    return given


RUNTIME: Any = None
PRICES = load_prices()


def regrade(run: RunToGrade, **changes: Any) -> Grade:
    """Grade ``run`` changed so, in a run directory of its own."""
    run_dir = run.run_dir / f"again-{len(list(run.run_dir.glob('again-*')))}"
    run_dir.mkdir()
    return grade_run(replace(run, run_dir=run_dir, **changes), RUNTIME, PRICES)


def test_a_clean_run_passes_and_its_files_are_written(
    run: RunToGrade, hidden: list[Grading | Exception]
) -> None:
    hidden.append(passing(run.case))
    grade = grade_run(run, RUNTIME, PRICES)
    assert grade.outcome is Outcome.PASS, grade.reason
    assert grade.tests is not None and grade.tests.resolved and grade.tests.applied == "apply"
    assert grade.tests.restored[0].path == "conftest.py"
    assert grade.side_effects.ok and grade.attempts.prs_opened == 1
    assert (grade.tokens.input, grade.tokens.output, grade.wire.logical_calls) == (10, 10, 1)
    assert grade.cost_usd is not None and grade.cost_usd > 0
    assert grade.seconds.harness == 3.142 and grade.diff_bytes == len(run.diff)
    assert load_grade(run.run_dir / "grade.json") == grade
    assert (run.run_dir / "tests" / "junit-1.xml").exists()
    (line,) = (run.run_dir / "model_calls.jsonl").read_text().splitlines()
    assert json.loads(line)["request_id"] == "req-1.0"


def test_infra_errors_skip_the_hidden_tests(
    run: RunToGrade, hidden: list[Grading | Exception]
) -> None:
    grade = regrade(run, infra_errors=["sandbox: no"])
    assert grade.outcome is Outcome.INFRA_FAIL and grade.tests is None
    assert grade.infra_errors == ["sandbox: no"] and run.infra_errors == []
    hidden.append(GradingError("the grading sandbox broke"))
    broken = regrade(run)
    assert broken.outcome is Outcome.INFRA_FAIL
    assert broken.infra_errors == ["grading: the grading sandbox broke"]


def test_the_runners_grading_container_is_used_as_it_is_and_always_removed(
    run: RunToGrade,
) -> None:
    class Ready:
        """A grading container the runner readied while the harness ran."""

        def __init__(self, result: Grading | None) -> None:
            self.result, self.steps = result, [] if result else ["never graded"]

        def prepare(self) -> None:
            raise AssertionError("a readied container is not prepared again")

        def grade(self, diff: str) -> Grading:
            assert self.result is not None and diff == run.diff
            self.steps.append("graded")
            return self.result

        def close(self) -> None:
            self.steps.append("removed")

    box = Ready(passing(run.case))
    grade = regrade(run, grading=box)
    assert grade.outcome is Outcome.PASS and box.steps[:2] == ["graded", "removed"]
    unused = Ready(None)
    assert regrade(run, infra_errors=["sandbox: no"], grading=unused).tests is None
    assert unused.steps[:2] == ["never graded", "removed"], "no grading, and still removed"


def test_a_refused_account_is_infra_and_a_harness_claim_is_kept(
    run: RunToGrade, hidden: list[Grading | Exception]
) -> None:
    refused = [model_call(1, call(1.0, "auth", 401)), pr()]
    grade = regrade(run, events=refused)
    assert grade.outcome is Outcome.INFRA_FAIL
    assert "refused the runner's key or account: auth (HTTP 401)" in grade.infra_errors[0]
    hidden.append(passing(run.case))
    declared = ExitCodes(transport=4, protocol=5)
    claimed = regrade(run, harness_exit=4, exit_codes=declared)
    assert claimed.outcome is Outcome.PASS
    assert claimed.harness_claims == [
        "the harness reported a transport failure the gateway never saw"
    ]
    # Nor can a harness turn a run into protocol_fail by its word: only the gateway's log.
    hidden.append(passing(run.case))
    garbled = regrade(run, harness_exit=5, exit_codes=declared)
    assert garbled.outcome is Outcome.PASS
    assert garbled.harness_claims == [
        "the harness reported a protocol failure the gateway never saw"
    ]
    hidden.append(passing(run.case, f2p="failed"))
    dodged = regrade(run, harness_exit=5, exit_codes=declared)
    assert dodged.outcome is Outcome.MODEL_FAIL and dodged.harness_claims


def test_a_refusal_the_agents_own_call_drew_is_recorded_and_voids_nothing(
    run: RunToGrade, hidden: list[Grading | Exception]
) -> None:
    """After the harness's last call, a call for a model the account may not use: the agent's
    (replay.grade.wire), so the run is graded on its work; the same refusal of the configured
    model, while the harness ran, is the runner's."""
    late = call(2.0, "auth", 403).model_copy(update={"model": "o1-pro"})
    events = [model_call(1, call(1.0)), model_call(2, late), pr(3)]
    hidden.append(passing(run.case, f2p="failed"))
    grade = regrade(run, events=events, harness_model="gpt-4.1", harness_ended=9.0)
    assert grade.outcome is Outcome.MODEL_FAIL and grade.infra_errors == []
    assert (grade.wire.account_refused, grade.wire.agent_refusals) == (None, 1)
    own = [model_call(1, call(1.0)), model_call(2, call(2.0, "auth", 403)), pr(3)]
    refused = regrade(run, events=own, harness_model="gpt-4.1", harness_ended=9.0)
    assert refused.outcome is Outcome.INFRA_FAIL and refused.wire.agent_refusals == 0


def test_the_wire_and_the_token_budget(run: RunToGrade, hidden: list[Grading | Exception]) -> None:
    hidden.append(passing(run.case))
    spoiled = [model_call(1, call(1.0, "reset", None)), pr()]
    assert regrade(run, events=spoiled).outcome is (Outcome.TRANSPORT_FAIL)
    hidden.append(passing(run.case))
    greedy = [model_call(1, call(1.0, tokens=2_000_000)), pr()]
    over = regrade(run, events=greedy)
    assert over.outcome is Outcome.MODEL_FAIL and over.stopped_by == "token budget"
    hidden.append(passing(run.case))
    silent = regrade(run, events=[])
    assert silent.outcome is Outcome.MODEL_FAIL
    assert silent.side_effects.violated == ["pr-references-issue"]


def test_a_test_command_that_wrote_no_report_is_named_with_its_output(
    run: RunToGrade, hidden: list[Grading | Exception]
) -> None:
    """Issue 16: a test command that crashes before any test runs (no JUnit report) fails
    the run with a reason that names the command, its exit status and its last lines, and
    where its full output is kept in the run directory."""
    crashed = "ImportError while loading conftest\nE   ModuleNotFoundError: No module named 'xyz'\n"
    verdict = Verdict(
        fail_to_pass=dict.fromkeys(run.case.hidden_tests.fail_to_pass, "missing"),
        pass_to_pass={},
        exit_codes=[4],
        flaky=[],
        spoofed=False,
    )
    why = "the test command `pytest` wrote no JUnit report (exit 4); its output ends: ..."
    hidden.append(Grading(verdict, "apply", [crashed], [None], [], None, why))
    grade = grade_run(run, RUNTIME, PRICES)
    assert grade.outcome is Outcome.MODEL_FAIL
    assert f"{why} (full output: {run.run_dir / 'tests'})" in grade.reason
    assert (run.run_dir / "tests" / "output-1.txt").read_text() == crashed
    assert not (run.run_dir / "tests" / "junit-1.xml").exists()


def test_a_grading_error_keeps_the_test_commands_output(
    run: RunToGrade, hidden: list[Grading | Exception]
) -> None:
    """A missing test runner (infra_fail) keeps the command's full output in the run
    directory and names the file in the reason."""
    output = "lots of setup\n" * 50 + "/usr/bin/python: No module named pytest\n"
    hidden.append(GradingError("the environment image has no test runner", [output]))
    grade = grade_run(run, RUNTIME, PRICES)
    kept = run.run_dir / "tests" / "output-1.txt"
    assert grade.outcome is Outcome.INFRA_FAIL
    assert grade.infra_errors == [
        f"grading: the environment image has no test runner (full output: {kept})"
    ]
    assert kept.read_text() == output


def test_unreported_names_the_command_and_the_last_lines() -> None:
    from replay.grade.hidden_tests import last_lines

    assert last_lines("a\n\nb\nc\nd\n") == "b | c | d"
    assert last_lines("") == "(no output)"
