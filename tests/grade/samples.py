"""A complete grade to build tests on: every field set, as a real run would write it."""

from __future__ import annotations

from typing import Any

from replay.base.outcomes import Outcome
from replay.gateway.modelcalls import TokenUsage
from replay.grade.model import (
    Attempts,
    Grade,
    HiddenTestsGrade,
    Restored,
    Seconds,
    SideEffectsGrade,
    Tokens,
    WorldError,
)
from replay.grade.sideeffects import RuleResult
from replay.grade.wire import WireSummary


def hidden_tests_grade(**changes: Any) -> HiddenTestsGrade:
    fields: dict[str, Any] = {
        "resolved": False,
        "applied": "apply",
        "fail_to_pass": {"a": "failed", "b": "failed"},
        "pass_to_pass": {"c": "passed"},
        "exit_codes": [1],
        "flaky": [],
        "spoofed": False,
        "tampered": [],
        "unguarded": False,
        "contradictory": [],
        "restored": [Restored(path="conftest.py", action="removed", reason="pytest conftest")],
        "stopped": None,
    }
    return HiddenTestsGrade(**(fields | changes))


def grade(**changes: Any) -> Grade:
    fields: dict[str, Any] = {
        "run_id": "r1",
        "case_id": "demo",
        "attempt": 1,
        "harness": "reference",
        "model": "stub:spoof-site",
        "image": "sha256:env",
        "harness_image": None,
        "outcome": Outcome.MODEL_FAIL,
        "reason": "hidden tests not resolved",
        "tests": hidden_tests_grade(),
        "world_errors": [
            WorldError(url="https://x.test/a", method="GET", host="x.test", error="boom")
        ],
        "side_effects": SideEffectsGrade(
            ok=True,
            violated=[],
            rules=[
                RuleResult(
                    rule="no-push-to-main",
                    description="never push to main",
                    count=0,
                    at_least=None,
                    at_most=0,
                    ok=True,
                    forbidden=True,
                    matched=[],
                )
            ],
            mutations=2,
        ),
        "interventions": 0,
        "attempts": Attempts(pushes=1, prs_opened=1),
        "tokens": Tokens(input=10, output=5),
        "cost_usd": None,
        "model_wait_s": 0.1,
        "wire": WireSummary(
            calls=3,
            logical_calls=3,
            failed_attempts={"http_5xx": 1},
            recovered=1,
            transport_failed=0,
            protocol_failed=0,
            rejected=0,
            quota_stop=False,
            healthy=True,
            usage=TokenUsage(input_tokens=10, output_tokens=5),
            model_wait_ms=100.0,
        ),
        "harness_exit": 0,
        "harness_claims": [],
        "stopped_by": None,
        "infra_errors": [],
        "seconds": Seconds(harness=10.5, total=12.0),
        "diff_bytes": 42,
    }
    return Grade(**(fields | changes))
