"""Checking one scenario the way every contract test does."""

from __future__ import annotations

import pytest

from replay.contract.recording import Gap
from replay.contract.scenarios import Scenario
from replay.contract.suite import Outcome, check
from replay.contract.targets import Target


def run_checked(target: Target, scenario: Scenario, gaps: list[Gap]) -> Outcome:
    """Check one scenario, print the known gaps that apply and the outcome, assert it."""
    mine = [g for g in gaps if g.scenario in ("*", scenario.name)]
    for gap in mine:
        print(f"known gap [{gap.scenario}] {gap.where}: {gap.why}")
    outcome = check(target, scenario, gaps)
    print("\n".join(outcome.lines()))
    if outcome.skipped:
        assert target.kind == "real", f"a fake target must run every scenario: {outcome.skipped}"
        pytest.skip(outcome.skipped)
    assert outcome.ok, "\n".join(outcome.lines())
    return outcome
