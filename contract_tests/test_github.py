"""GitHub contract: githubkit and git against the target, compared with the recordings and
validated with githubkit's models (GitHub's OpenAPI description) and the GraphQL schema."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from contract_tests.checks import run_checked
from contract_tests.gaps import GITHUB
from replay.contract.scenarios import all_scenarios
from replay.contract.targets import Target

NOT_COVERED = {
    "missing scope": "the fake has no token scopes: every token is the viewer with "
    "`repo, read:org, workflow` (X-OAuth-Scopes), so a 403/404 for a missing scope "
    "cannot be produced.",
    "rate limit exceeded": "the fake counts X-RateLimit-* but never answers 403/429 "
    "`API rate limit exceeded`; only the headers and GET /rate_limit are checked.",
}
"""Error cases of the issue no scenario can exercise on this fake (printed by a test)."""


@pytest.mark.parametrize("scenario", all_scenarios("github"), ids=lambda s: s.name)
def test_scenario(target_for: Callable[[str], Target], scenario: Any) -> None:
    run_checked(target_for("github"), scenario, GITHUB)


def test_error_cases_not_covered_are_listed(target_for: Callable[[str], Target]) -> None:
    """The gaps above hold: the fake has no switch for them. When it gets one (a control
    route under /_replay/github/), this fails: write the scenario and drop the entry."""
    for case, why in NOT_COVERED.items():
        print(f"not covered: {case}: {why}")
    target = target_for("github")
    if target.control is None:
        pytest.skip("the real API: these cases are listed for the fake only")
    for switch in ("scopes", "ratelimit"):
        answer = httpx.post(f"{target.control}/github/{switch}", json={})
        assert answer.status_code == 404, f"the GitHub fake now has /{switch}: cover it"
