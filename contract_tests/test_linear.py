"""Linear contract: raw GraphQL over httpx against the target, compared with the recordings;
every document validated against the fake's schema."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from contract_tests.checks import run_checked
from contract_tests.gaps import LINEAR
from replay.contract.scenarios import all_scenarios
from replay.contract.targets import Target

NOT_COVERED = {
    "rate limit": "the Linear fake has no switch to answer `ratelimited` (its error type "
    "exists in fakes/linear/errors.py but nothing raises it).",
    "missing scope": "every key is the viewer with full access; `forbidden` is never sent.",
}


@pytest.mark.parametrize("scenario", all_scenarios("linear"), ids=lambda s: s.name)
def test_scenario(target_for: Callable[[str], Target], scenario: Any) -> None:
    run_checked(target_for("linear"), scenario, LINEAR)


def test_error_cases_not_covered_are_listed(target_for: Callable[[str], Target]) -> None:
    """When the Linear fake gains a control switch, this fails: cover the case instead."""
    for case, why in NOT_COVERED.items():
        print(f"not covered: {case}: {why}")
    target = target_for("linear")
    if target.control is None:
        pytest.skip("the real API: these cases are listed for the fake only")
    import httpx

    for switch in ("scopes", "ratelimit"):
        answer = httpx.post(f"{target.control}/linear/{switch}", json={})
        assert answer.status_code == 404, f"the Linear fake now has /{switch}: cover it"
