"""The example files in docs/examples load as the commands read them (issue 35): a user
copies them, so they must stay valid as the formats change."""

from __future__ import annotations

from pathlib import Path

from replay.batch.plan import load_plan
from replay.compare.candidate import parse_candidate
from replay.compare.rule import load_rule

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


def test_every_example_loads() -> None:
    claude = parse_candidate(str(EXAMPLES / "candidate-claude-code.yaml"))
    assert (claude.harness, claude.model, claude.stub) == (
        "claude-code",
        "claude-sonnet-4-20250514",
        None,
    )
    assert parse_candidate(str(EXAMPLES / "candidate-stub-gold.yaml")).stub == "gold"
    rule, text = load_rule(EXAMPLES / "rule.yaml")
    assert rule.metric == "pass@1" and "schema: 1" in text
    plan = load_plan(EXAMPLES / "plan.yaml")
    assert plan.spec.name == "example-nightly" and len({r.case.id for r in plan.runs}) >= 3
    assert {c.name for c in plan.spec.candidates} == {"gold", "idle"}
